public import Foundation

/// Streams the changes of one change set into `body`, one at a time, without holding them all.
@_spi(ModelAdapter) public typealias ChangeStream = ((SyncChange) throws -> Void) throws -> Void

/// One column of one row: the unit of last-writer-wins merging.
public struct ColumnKey: Hashable, Sendable, CustomStringConvertible {
    /// The synced table's name.
    public var table: String
    /// The row's sync ID.
    public var syncID: String
    /// The column's name.
    public var column: String

    /// The register of `column` in the row of `table` whose sync ID is `syncID`.
    public init(table: String, syncID: String, column: String) {
        self.table = table
        self.syncID = syncID
        self.column = column
    }

    public var description: String { "\(table)[\(syncID)].\(column)" }
}

/// The seam between the sync engine and the app's data model (in the spirit of SyncKit's `ModelAdapter`).
///
/// The engine never touches SQL: it asks the adapter to stage pending local
/// changes, to find conflicts, and to apply a change set together with its
/// ledger entry. ``GRDBStore`` adapts a SQLite database; the testing module
/// has an in-memory adapter that the simulator runs the same engine on.
///
/// Every method is called from one sync at a time (the engine holds the
/// document's sync lock). The merge rules every adapter implements:
/// - each column of each row is a last-writer-wins register ordered by
///   ``ChangeStamp`` (hybrid logical clock, then client identifier);
/// - a delete settles against concurrent updates by its table's ``DeletePolicy``:
///   by default a deleted row stays deleted and changes to it are ignored;
/// - a remote change to a column this client changed and has not published is
///   a conflict (<doc:ConflictsAndMergeRules>);
/// - applying the same change twice, or in any order, gives the same state.
///
/// ``GRDBStore`` and the in-memory adapter take each of these decisions from one
/// internal rule, so that what the simulator proves on one holds for the other.
///
/// The requirements (all but ``schemaVersion``) are the engine's plumbing, in the SPI group `ModelAdapter`, so
/// that an app holding a ``GRDBStore`` does not see them: an adapter author writes
/// `@_spi(ModelAdapter) import FolderSync` to implement them.
public protocol ModelAdapter: AnyObject, Sendable {
    /// The schema version of the app's data; change sets with a newer one are parked, not applied.
    var schemaVersion: Int { get }

    /// The sync bookkeeping kept with the data (sequence numbers, the ledger, cached remote state).
    @_spi(ModelAdapter) func loadSyncState() throws -> LocalSyncState

    /// Saves the part of the sync state that is not the ledger.
    @_spi(ModelAdapter) func saveSyncState(_ state: LocalSyncState) throws

    /// Moves local changes that are not staged yet into change sets numbered from `sequence`.
    ///
    /// Calls `emit` once per changed row, then `seal`, which makes the change-set files durable and returns the
    /// last sequence number they use (large batches are split into consecutive sets). Only then does it commit,
    /// in one transaction, that those changes are staged and that the next sequence follows the last one. If
    /// `seal` throws, nothing is marked. Returns how many changes were emitted; zero means nothing was staged
    /// and `seal` was not called.
    @_spi(ModelAdapter) func stageChanges(sequence: Int64, emit: (SyncChange) throws -> Void, seal: () throws -> Int64) throws -> Int

    /// Forgets staged changes up to `sequence`, now that their change sets are published.
    @_spi(ModelAdapter) func markPublished(throughSequence sequence: Int64) throws

    /// Whether some local change is not published yet (the only case where conflicts can arise).
    @_spi(ModelAdapter) func hasUnpublishedChanges() throws -> Bool

    /// The conflicts a change set by `author` would raise against local changes not yet published.
    @_spi(ModelAdapter) func conflicts(author: String, localClient: String, changes: ChangeStream) throws -> [SyncConflict]

    /// Applies a change set and records it in the ledger, in one transaction; skips it if already recorded.
    ///
    /// `resolutions` answers the conflicts found by ``conflicts(author:localClient:changes:)``; a conflict without an answer
    /// is settled by last writer wins. Changes made by the app are not recorded as local changes (no echo),
    /// except resolutions that keep a local or merged value, which become new local changes.
    @_spi(ModelAdapter) func apply(_ header: ChangeSetHeader, localClient: String, changes: ChangeStream,
               resolutions: [ColumnKey: ConflictResolution]) throws -> ApplyOutcome

    /// Per client, the change sets recorded in the ledger. Read at every sync: its cost should not grow with the
    /// number of sets applied so far.
    @_spi(ModelAdapter) func appliedChangeSets() throws -> AppliedChangeSets

    /// Per table, how many existing rows applying all of `changeSets` would delete (each row counted once), and
    /// how many rows the table has; tables losing no row are left out. Reads only: the ``DeletionFailSafe`` asks
    /// before anything is applied. The default reports nothing, so an adapter without it has no fail-safe.
    /// The streams deliver only the sets' deletes: the other records are skipped unread.
    @_spi(ModelAdapter) func rowsDeleted(by changeSets: [ChangeStream]) throws -> [MassDeletion.Table]

    /// Recovers a store restored from an earlier copy of itself (a backup, a phone restore, a VM snapshot): the
    /// remote holds this client's change sets up to `remotePublishedSequence`, past the store's own published
    /// sequence. In one transaction: the changes staged in sets numbered after the store's published sequence go
    /// back to the pending changes (those numbers are taken on the remote, by other changes), this client's sets up
    /// to the store's published sequence are recorded as applied, and the state continues after
    /// `remotePublishedSequence`, with ``LocalSyncState/ownChangeSetsToReapplyAfter`` set so that the sets in
    /// between come back from the remote. Does nothing when the store is not behind.
    ///
    /// The default refuses with ``FolderSyncError/Code/invalidConfiguration``: an adapter that cannot recover
    /// must not publish under numbers already taken.
    @_spi(ModelAdapter) func continueAfterRestore(remotePublishedSequence: Int64, localClient: String) throws
}

extension ModelAdapter {
    @_spi(ModelAdapter) public func rowsDeleted(by changeSets: [ChangeStream]) throws -> [MassDeletion.Table] { [] }

    @_spi(ModelAdapter) public func continueAfterRestore(remotePublishedSequence: Int64, localClient: String) throws {
        throw FolderSyncError(.invalidConfiguration, "the remote holds change sets of this client up to \(remotePublishedSequence) that "
                              + "its store does not know (restored from an earlier copy?), and the store cannot recover from it")
    }
}

/// The sync bookkeeping an adapter keeps with the data, so that it commits with it.
@_spi(ModelAdapter) public struct LocalSyncState: Codable, Hashable, Sendable {
    /// The sequence number the next staged change set gets.
    public var nextSequence: Int64 = 1
    /// The highest sequence of this client's change sets known to be published.
    public var publishedSequence: Int64 = 0
    /// Per other client: the version tag of its recent-sync file when last read, and the sequence it reported.
    public var knownRecentSyncs: [String: KnownRecentSync] = [:]
    /// After installing a whole store older than this client's own publications: the sequence after which this
    /// client's own change sets must be applied again from the remote.
    public var ownChangeSetsToReapplyAfter: Int64?
    /// Whether the first sync looked for a whole store to start from.
    public var hasBootstrapped = false
    /// Change sets and bytes published since this client last uploaded a whole store (for the upload policy).
    public var changeSetsSinceWholeStore = 0
    /// Bytes sent by syncs since this client last uploaded a whole store, compared with ``SyncPolicy/wholeStoreUploadAfterBytes``.
    public var bytesSinceWholeStore: Int64 = 0
    /// What this client's recent-sync marker said when last written: it is written again until it says the
    /// published sequence and acknowledgement of now, even when the sync that changed them failed to write it.
    public var announcedSequence: Int64 = 0
    /// The acknowledgement (highest applied sequence per client) the marker said when last written.
    public var announcedAcknowledgement: [String: Int64] = [:]
    /// The version tag of this client's own recent sync when it was last read back: read again when it changes, to
    /// find that the store was restored from an earlier copy, or the folder from an older one. `nil`: unknown (it
    /// was written since), so the next sync reads it.
    public var ownRecentSyncEtag: String?
    /// Whether this client owes the remote a whole store: its own published change sets are gone from the folder
    /// (restored from an older copy), or the only whole store that covers them is unusable. The next sync that can
    /// upload one does.
    public var owesWholeStore = false
    /// Per client, the highest sequence any other client's recent sync acknowledged applying: how a client whose
    /// marker is gone (deleted, expired) is still found, so that its last change sets reach every device.
    public var acknowledgedByOthers: [String: Int64] = [:]
    /// Whether this client has listed `SyncChanges/` since it last started from scratch (a first sync, a whole
    /// store installed): once, to find clients that left no marker.
    public var hasListedClients = false
    /// When the marker was last written (the ``RecentSync/lastSyncDate`` it holds); an idle sync writes it again
    /// once it is ``RecentSync/heartbeatInterval`` old. `nil` for state saved before the heartbeat existed.
    public var announcedAt: Date?
    /// The file names of this client's newest published change sets, announced in its marker
    /// (``RecentSync/recentChangeSets``).
    public var recentlyPublished: [String] = []
    /// The version tag of this client's whole store as it uploaded it (its ETag, or its size when the backend has
    /// none): a store found changed since (damaged, or put back from an older copy) covers nothing, and a new one is
    /// owed. `nil`: none uploaded, or it was removed since.
    public var ownWholeStoreTag: String?

    /// The state of a client that has never synced: nothing staged, published or read.
    public init() {}

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        nextSequence = try container.decode(Int64.self, forKey: .nextSequence)
        publishedSequence = try container.decode(Int64.self, forKey: .publishedSequence)
        knownRecentSyncs = try container.decodeIfPresent([String: KnownRecentSync].self, forKey: .knownRecentSyncs) ?? [:]
        ownChangeSetsToReapplyAfter = try container.decodeIfPresent(Int64.self, forKey: .ownChangeSetsToReapplyAfter)
        hasBootstrapped = try container.decodeIfPresent(Bool.self, forKey: .hasBootstrapped) ?? false
        changeSetsSinceWholeStore = try container.decodeIfPresent(Int.self, forKey: .changeSetsSinceWholeStore) ?? 0
        bytesSinceWholeStore = try container.decodeIfPresent(Int64.self, forKey: .bytesSinceWholeStore) ?? 0
        announcedSequence = try container.decodeIfPresent(Int64.self, forKey: .announcedSequence) ?? 0
        announcedAcknowledgement = try container.decodeIfPresent([String: Int64].self, forKey: .announcedAcknowledgement) ?? [:]
        announcedAt = try container.decodeIfPresent(Date.self, forKey: .announcedAt)
        ownRecentSyncEtag = try container.decodeIfPresent(String.self, forKey: .ownRecentSyncEtag)
        owesWholeStore = try container.decodeIfPresent(Bool.self, forKey: .owesWholeStore) ?? false
        acknowledgedByOthers = try container.decodeIfPresent([String: Int64].self, forKey: .acknowledgedByOthers) ?? [:]
        hasListedClients = try container.decodeIfPresent(Bool.self, forKey: .hasListedClients) ?? false
        recentlyPublished = try container.decodeIfPresent([String].self, forKey: .recentlyPublished) ?? []
        ownWholeStoreTag = try container.decodeIfPresent(String.self, forKey: .ownWholeStoreTag)
    }

    /// What this client last read of another client's recent-sync marker, so an unchanged marker is not read again.
    public struct KnownRecentSync: Codable, Hashable, Sendable {
        /// The marker file's version tag when it was read; `nil` when the remote gives none (the marker is then read at every sync).
        public var etag: String?
        /// The highest sequence the marker said its client had published.
        public var publishedSequence: Int64
        /// The names of the newest change sets the marker announced (``RecentSync/recentChangeSets``).
        public var recentChangeSets: [String]?
        /// What was read of a marker: its version tag, its published sequence and the change sets it announced.
        public init(etag: String?, publishedSequence: Int64, recentChangeSets: [String]? = nil) {
            self.etag = etag
            self.publishedSequence = publishedSequence
            self.recentChangeSets = recentChangeSets
        }
    }
}

/// What applying one change set did.
@_spi(ModelAdapter) public struct ApplyOutcome: Sendable, Hashable {
    /// Whether the set was applied now (false when the ledger already had it).
    public var applied: Bool = false
    /// Changes that altered the local data.
    public var changesApplied: Int = 0
    /// Changes that were older than the local state or hit a deleted row.
    public var changesIgnored: Int = 0
    /// Conflicts the set raised, with how each was settled.
    public var conflicts: [ResolvedConflict] = []
    /// Things noticed while applying, such as rows left pointing at a deleted row.
    public var warnings: [SyncWarning] = []

    /// The outcome of a set not applied yet: nothing changed.
    public init() {}
}

/// Whole stores and resets: what an adapter needs for bootstrap, vacuum-driven re-bootstrap and re-joining.
///
/// The defaults refuse; ``GRDBStore`` implements them.
public protocol SnapshottingModelAdapter: ModelAdapter {
    /// Writes a consistent snapshot of the synced data and its merge metadata (clocks, tombstones) into a new
    /// file at `url`, and returns per client the highest sequence it contains (this client's published sets
    /// included). Returns `nil`, writing nothing useful, when some local change is not published yet: a whole
    /// store never carries a client's unpublished changes.
    @_spi(ModelAdapter) func writeSnapshot(to url: URL, localClient: String) throws -> [String: Int64]?

    /// Replaces the synced data, merge metadata and ledger with a snapshot that contains exactly `covers`, in one
    /// transaction. Local changes not yet published are re-applied on top as new local changes.
    @_spi(ModelAdapter) func restoreSnapshot(from url: URL, covers: [String: Int64], localClient: String) throws

    /// Copies the whole store (data and unpublished changes) to `url`, for a reset's backup.
    @_spi(ModelAdapter) func backup(to url: URL) throws

    /// Forgets the merge history and records every row as a new local change, to re-join a remote that was
    /// replaced: this client's data then travels again, and merges with what others push.
    @_spi(ModelAdapter) func resetForRejoin() throws

    /// The shape of the bookkeeping tables in the snapshots this adapter writes, recorded in every whole store
    /// (format 3 on) so that a reader decides by number how to read them: a newer one is refused with
    /// ``FolderSyncError/Code/unsupportedFormatVersion``, never guessed at. The default is 1.
    @_spi(ModelAdapter) var snapshotSchemaVersion: Int { get }
}

extension SnapshottingModelAdapter {
    @_spi(ModelAdapter) public var snapshotSchemaVersion: Int { 1 }

    /// Refuses a snapshot whose bookkeeping is newer than this adapter's (`nil`: a file from before whole-store
    /// format 3, read by the shape of its tables).
    /// - Throws: ``FolderSyncError/Code/unsupportedFormatVersion`` naming `path` and both versions.
    func checkSnapshotSchemaVersion(_ version: Int?, path: String) throws {
        guard let version, version > snapshotSchemaVersion else { return }
        throw FolderSyncError(.unsupportedFormatVersion,
                              "the whole store's snapshot schema version \(version) is newer than the supported \(snapshotSchemaVersion)", path: path)
    }
}
