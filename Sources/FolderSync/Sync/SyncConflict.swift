/// A remote change to a column this client also changed and has not published yet.
public struct SyncConflict: Sendable, Hashable {
    /// The table, row and column.
    public var key: ColumnKey
    /// The local value, not yet published.
    public var localValue: SyncValue
    /// The value the other client wrote.
    public var remoteValue: SyncValue
    public var localStamp: ChangeStamp
    public var remoteStamp: ChangeStamp

    public var table: String { key.table }
    public var syncID: String { key.syncID }
    public var column: String { key.column }

    /// Public so that every ``ModelAdapter``, not only ``GRDBStore``, can report conflicts.
    public init(key: ColumnKey, localValue: SyncValue, remoteValue: SyncValue, localStamp: ChangeStamp, remoteStamp: ChangeStamp) {
        self.key = key
        self.localValue = localValue
        self.remoteValue = remoteValue
        self.localStamp = localStamp
        self.remoteStamp = remoteStamp
    }

    /// What last writer wins would decide.
    public var lastWriterWins: ConflictResolution { remoteStamp > localStamp ? .remoteWins : .localWins }
}

/// The answer to a ``SyncConflict``. Local and merged answers are recorded as new changes, so every replica converges.
public enum ConflictResolution: Sendable, Hashable {
    case localWins
    case remoteWins
    case merged(SyncValue)
}

/// A conflict and how it was settled, for the sync report.
public struct ResolvedConflict: Sendable, Hashable {
    public var conflict: SyncConflict
    public var resolution: ConflictResolution
    /// Whether the app's resolver decided (`false`: last writer wins).
    public var decidedByResolver: Bool

    public init(conflict: SyncConflict, resolution: ConflictResolution, decidedByResolver: Bool) {
        self.conflict = conflict
        self.resolution = resolution
        self.decidedByResolver = decidedByResolver
    }
}

/// Something a sync noticed that did not stop it, like TICoreDataSync's sync warnings.
public struct SyncWarning: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable {
        /// A row refers to a row that a concurrent delete removed.
        case danglingReference
        /// A change to a row that was deleted was dropped (delete wins).
        case changeToDeletedRow
        /// A change set uses a newer schema than this client; it is parked until the app is updated.
        case changeSetParked
        /// A file in the tree has a name the layout does not know; it was ignored.
        case unknownFile
        /// A change set another client needs from a third client is not visible yet.
        case changeSetWaiting
        /// No whole store could be used to start from (damaged, or of a newer format); the change sets were used.
        case wholeStoreUnusable
    }

    public var kind: Kind
    public var message: String
    /// The table and row concerned, when there is one.
    public var table: String?
    public var syncID: String?
    /// The remote file concerned, when there is one.
    public var path: String?

    public init(kind: Kind, message: String, table: String? = nil, syncID: String? = nil, path: String? = nil) {
        self.kind = kind
        self.message = message
        self.table = table
        self.syncID = syncID
        self.path = path
    }

    public var description: String { "\(kind.rawValue): \(message)" }
}
