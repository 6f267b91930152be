/// A remote change to a column this client also changed and has not published yet.
public struct SyncConflict: Sendable, Hashable {
    /// The table, row and column.
    public var key: ColumnKey
    /// The local value, not yet published.
    public var localValue: SyncValue
    /// The value the other client wrote.
    public var remoteValue: SyncValue
    /// When and by whom the local value was written.
    public var localStamp: ChangeStamp
    /// When and by whom the remote value was written; last writer wins picks the greater stamp.
    public var remoteStamp: ChangeStamp

    /// The synced table of the conflicting row.
    public var table: String { key.table }
    /// The sync ID of the conflicting row.
    public var syncID: String { key.syncID }
    /// The column both clients changed.
    public var column: String { key.column }

    /// Public so that every ``ModelAdapter``, not only ``GRDBStore``, can report conflicts.
    public init(
        key: ColumnKey, localValue: SyncValue, remoteValue: SyncValue, localStamp: ChangeStamp, remoteStamp: ChangeStamp
    ) {
        self.key = key
        self.localValue = localValue
        self.remoteValue = remoteValue
        self.localStamp = localStamp
        self.remoteStamp = remoteStamp
    }

    /// What last writer wins would decide.
    public var lastWriterWins: ConflictResolution {
        MergeRule.isNewer(remoteStamp, than: localStamp) ? .remoteWins : .localWins
    }
}

/// The answer to a ``SyncConflict``. Conflicts are resolved before this client's changes are staged, so a sync
/// publishes only what was decided, once (see <doc:ConflictsAndMergeRules>).
public enum ConflictResolution: Sendable, Hashable {
    /// Keep the local value: it is published once, in this sync (as a new change, newer than both, when the other
    /// client's write was the later one).
    case localWins
    /// Take the other client's value: the local value never leaves this device. (When the local write was the later
    /// one, the remote value is published once as a new change, newer than both, so every replica keeps it.)
    case remoteWins
    /// Store this value instead of both: it is published once, as a new change newer than both; neither the local
    /// value nor a second set goes out.
    case merged(SyncValue)
}

extension ConflictResolution: CustomStringConvertible {
    /// For people: `local value kept`, `remote value taken`, `merged into "…"`.
    public var description: String {
        switch self {
        case .localWins: "local value kept"
        case .remoteWins: "remote value taken"
        case .merged(let value): "merged into \(value)"
        }
    }
}

/// A conflict and how it was settled, for the sync report.
public struct ResolvedConflict: Sendable, Hashable {
    /// The conflict that was settled.
    public var conflict: SyncConflict
    /// How it was settled: the local value, the remote value, or a merged one.
    public var resolution: ConflictResolution
    /// Whether the app's resolver decided (`false`: last writer wins).
    public var decidedByResolver: Bool

    /// A settled conflict, as a ``ModelAdapter`` reports it after asking the resolver.
    public init(conflict: SyncConflict, resolution: ConflictResolution, decidedByResolver: Bool) {
        self.conflict = conflict
        self.resolution = resolution
        self.decidedByResolver = decidedByResolver
    }
}

/// Something a sync noticed that did not stop it, like TICoreDataSync's sync warnings.
public struct SyncWarning: Sendable, Hashable, CustomStringConvertible {
    /// What kind of thing the sync noticed; the raw value is the name shown in reports and logs.
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
        /// A change set this device needs is gone from the shared folder, and the sync could not install a whole store
        /// that covers it (the folder, or one client's folder, put back from an older copy): this device waits for it,
        /// and says so in its marker; the set's author uploads a whole store that covers it at its next sync. Also said
        /// by that author, when it finds its sets gone.
        case changeSetMissing
        /// No whole store could be used to start from (damaged, or of a newer format); the change sets were used.
        case wholeStoreUnusable
        /// A file another client wrote (its recent sync, a change set, a deletion marker) is damaged, foreign or of a
        /// newer format: the sync went on without it, and that client's later change sets wait for a readable one.
        case unreadableFile
        /// A recent sync says less than was seen before (an older copy: a folder restored from a backup, a file rolled
        /// back): what was seen stays known, and a client's own marker is written again.
        case staleRecentSync
        /// A client published two change sets under one sequence number (two devices shared its identity, or a store
        /// was restored from an earlier copy by a version that did not detect it): each of them is applied, in the
        /// order of their identifiers, as on every device.
        case duplicateSequence
        /// This client's store was restored from an earlier copy of itself: it continued after what it had published,
        /// and applies its own change sets in between from the remote.
        case restoredStore
        /// A change set carries timestamps more than `HybridLogicalClock/maximumDrift` ahead of this device's clock:
        /// one of the two clocks is wrong. It applies as stamped on every device, so replicas converge.
        case clockSkew
        /// A change set breaks a constraint of this store as it stands (it would leave a `NOT NULL` column empty,
        /// say): nothing of it was applied, and it waits for the sets that let it apply, tried again at every sync.
        case changeSetRefused
        /// The shared folder refused this client's recent-sync marker (a read-only or full share): other clients'
        /// change sets were applied, but this client could not say so, and vacuum keeps them until it can.
        case acknowledgementNotWritten
        /// Change sets this client needed were gone from their folder and no usable whole store held them: they were
        /// applied from the document's removed area, where a vacuum, client deletion or repair had moved them (the
        /// message names which, and when).
        case recoveredFromRemoved
    }

    /// What kind of thing was noticed, for code that reacts to some kinds.
    public var kind: Kind
    /// A sentence for people: what was noticed and about what.
    public var message: String
    /// The table and row concerned, when there is one.
    public var table: String?
    /// The sync ID of the row concerned, when there is one.
    public var syncID: String?
    /// The remote file concerned, when there is one.
    public var path: String?

    /// A warning of `kind`; give the table and row or the remote path it is about, if any.
    public init(kind: Kind, message: String, table: String? = nil, syncID: String? = nil, path: String? = nil) {
        self.kind = kind
        self.message = message
        self.table = table
        self.syncID = syncID
        self.path = path
    }

    public var description: String { "\(kind.rawValue): \(message)" }
}
