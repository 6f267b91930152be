import Foundation

/// A store whose whole stores carry large values as attachment references, and that puts their bytes back once
/// this client has them. Internal: ``GRDBStore`` is the one adapter with whole stores on SQLite files.
protocol LargeValueRestoring: SnapshottingModelAdapter {
    /// In a snapshot written by ``SnapshottingModelAdapter/writeSnapshot(to:localClient:)``: moves values of at least
    /// `threshold` bytes into `local`, leaving references, and returns every attachment the snapshot references.
    func storeLargeValues(inSnapshot url: URL, threshold: Int?, into local: LocalAttachmentStore) throws
        -> [AttachmentReference]
    /// Replaces the references to large values that `local` has by their bytes, without recording changes.
    func restoreLargeValues(from local: LocalAttachmentStore) throws
}
