import GRDB

/// What the engine asks of the store besides merging (``ModelAdapter``): its file, the syncs it runs, whether it
/// takes whole stores and can stop tracking.
extension GRDBStore {
    /// Itself: a ``GRDBStore`` takes whole stores.
    @_spi(ModelAdapter) public var snapshotting: (any SnapshottingModelAdapter)? { self }

    /// The path of ``database``.
    @_spi(ModelAdapter) public var storeFilePath: String? { database.path }

    /// The store's first read of its registers, when it still runs (a launch), waits for this sync.
    @_spi(ModelAdapter) public func synchronizationBegan() { clock.syncBegan() }

    @_spi(ModelAdapter) public func synchronizationEnded() { clock.syncEnded() }

    /// True: ``stopTracking(helperDirectory:keepingUnpublishedChanges:)`` makes the document a plain SQLite file.
    @_spi(ModelAdapter) public var canStopTracking: Bool { true }
}
