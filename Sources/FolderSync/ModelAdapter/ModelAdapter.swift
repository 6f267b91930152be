public import Foundation

/// Streams the changes of one change set into `body`, one at a time, without holding them all.
@_spi(ModelAdapter) public typealias ChangeStream = ((SyncChange) throws -> Void) throws -> Void

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

    /// The sync bookkeeping kept with the data: what the store committed, and what syncs know of the remote.
    @_spi(ModelAdapter) func loadSyncState() throws -> LocalSyncState

    /// Saves what syncs know of the remote, keeping ``LocalSyncState/progress`` as the store committed it.
    @_spi(ModelAdapter) func saveRemoteKnowledge(_ remote: LocalSyncState.RemoteKnowledge) throws

    /// Moves local changes that are not staged yet into change sets numbered from `sequence`.
    ///
    /// Calls `emit` once per changed row, then `seal`, which makes the change-set files durable and returns the
    /// last sequence number they use (large batches are split into consecutive sets). Only then does it commit,
    /// in one transaction, that those changes are staged and that the next sequence follows the last one. If
    /// `seal` throws, nothing is marked. Returns how many changes were emitted; zero means nothing was staged
    /// and `seal` was not called.
    @_spi(ModelAdapter) func stageChanges(sequence: Int64, emit: (SyncChange) throws -> Void, seal: () throws -> Int64)
        throws -> Int

    /// Forgets staged changes up to `sequence`, now that their change sets are published.
    @_spi(ModelAdapter) func markPublished(throughSequence sequence: Int64) throws

    /// ``markPublished(throughSequence:)`` and ``saveRemoteKnowledge(_:)`` in one transaction: a sync whose marker
    /// went out with its sets knows what it told the remote by then, and saves it with them (one commit, an fsync,
    /// fewer). The default does one after the other.
    @_spi(ModelAdapter) func markPublished(
        throughSequence sequence: Int64, savingRemoteKnowledge remote: LocalSyncState.RemoteKnowledge) throws

    /// Whether some local change is not published yet (the only case where conflicts can arise).
    @_spi(ModelAdapter) func hasUnpublishedChanges() throws -> Bool

    /// The conflicts a change set by `author` would raise against local changes not yet published.
    @_spi(ModelAdapter) func conflicts(author: String, localClient: String, changes: ChangeStream) throws
        -> [SyncConflict]

    /// Applies a change set and records it in the ledger, in one transaction; skips it if already recorded. When
    /// it is one of this client's own sets applied again and the ledger now reaches the published sequence, the
    /// same transaction clears ``LocalSyncState/Progress/ownChangeSetsToReapplyAfter``.
    ///
    /// A set that a constraint of the store refuses as it stands is not applied and says so
    /// (``ApplyOutcome/unmetConstraint``): the sync tries it again after the others.
    ///
    /// `resolutions` answers the conflicts found by ``conflicts(author:localClient:changes:)``; a conflict without an
    /// answer is settled by last writer wins. Changes made by the app are not recorded as local changes (no echo),
    /// except resolutions that keep a local or merged value, which become new local changes.
    @_spi(ModelAdapter) func apply(
        _ header: ChangeSetHeader, localClient: String, changes: ChangeStream,
        resolutions: [ColumnKey: ConflictResolution]
    ) throws -> ApplyOutcome

    /// ``apply(_:localClient:changes:resolutions:)``, saving `remote` (``saveRemoteKnowledge(_:)``) in the same
    /// transaction: what the sync learned of the remote before applying, so that a sync that only applies commits
    /// once. The default applies, then saves.
    @_spi(ModelAdapter) func apply(
        _ header: ChangeSetHeader, localClient: String, changes: ChangeStream,
        resolutions: [ColumnKey: ConflictResolution], savingRemoteKnowledge remote: LocalSyncState.RemoteKnowledge
    ) throws -> ApplyOutcome

    /// Per client, the change sets recorded in the ledger. Read at every sync: its cost should not grow with the
    /// number of sets applied so far.
    @_spi(ModelAdapter) func appliedChangeSets() throws -> AppliedChangeSets

    /// The identifiers of the change sets of `client` the ledger records under each of `sequences`: what a reader
    /// asks about a number that holds more than one set (two installations of one client published under it), so
    /// that it applies each of them once. A number the ledger covers without naming its sets (an installed whole
    /// store, a restore) maps to an empty set. Asked rarely: only for numbers that hold more than one set.
    ///
    /// The default answers `nil`: an adapter whose ledger holds one set per number, which then applies one of them.
    @_spi(ModelAdapter) func appliedChangeSetIdentifiers(of client: String, sequences: [Int64]) throws -> [Int64: Set<
        String
    >]?

    /// Per table, how many existing rows applying all of `changeSets` would delete (each row counted once), and
    /// how many rows the table has; tables losing no row are left out. Reads only: the ``DeletionFailSafe`` asks
    /// before anything is applied. The default reports nothing, so an adapter without it has no fail-safe.
    /// The streams deliver only the sets' deletes: the other records are skipped unread.
    @_spi(ModelAdapter) func rowsDeleted(by changeSets: [ChangeStream]) throws -> [MassDeletion.Table]

    /// Whether a synced table has more than `rowCount` rows. A store without one cannot trip a ``DeletionFailSafe``
    /// whose ``DeletionFailSafe/minimumTableRows`` is `rowCount`, and a sync then skips its pass over the sets'
    /// deletes. The default answers `true`: the pass runs.
    @_spi(ModelAdapter) func hasTable(largerThan rowCount: Int) throws -> Bool

    /// Recovers a store restored from an earlier copy of itself (a backup, a phone restore, a VM snapshot): the
    /// remote holds this client's change sets up to `remotePublishedSequence`, past the store's own published
    /// sequence. In one transaction: the changes staged in sets numbered after the store's published sequence go
    /// back to the pending changes (those numbers are taken on the remote, by other changes), this client's sets up
    /// to the store's published sequence are recorded as applied, and the state continues after
    /// `remotePublishedSequence`, with ``LocalSyncState/Progress/ownChangeSetsToReapplyAfter`` set so that the sets in
    /// between come back from the remote. Does nothing when the store is not behind.
    ///
    /// The default refuses with ``FolderSyncError/Code/invalidConfiguration``: an adapter that cannot recover
    /// must not publish under numbers already taken.
    @_spi(ModelAdapter) func continueAfterRestore(remotePublishedSequence: Int64, localClient: String) throws

    /// Removes the tombstones whose deletes `horizon` makes stable (<doc:TombstoneCollection>), with what a deleted row
    /// keeps for them, and returns how many went; a row with an unpublished change keeps its tombstone. The default
    /// keeps every tombstone.
    @_spi(ModelAdapter) func collectTombstones(_ horizon: TombstoneHorizon, localClient: String) throws -> Int

    /// This adapter as one that takes whole stores (``SnapshottingModelAdapter``), or `nil`: what the engine asks
    /// instead of a cast, which looks a conformance up across every loaded image the first time a process makes it.
    /// The defaults answer `self` for a ``SnapshottingModelAdapter``, `nil` for any other adapter.
    @_spi(ModelAdapter) var snapshotting: (any SnapshottingModelAdapter)? { get }

    /// The path of the file that holds the store's data, if it has one: the installation this client records is
    /// bound to it, so that a copy of the store on another machine or path is told apart. The default is `nil`.
    @_spi(ModelAdapter) var storeFilePath: String? { get }

    /// A sync of this store starts; ``synchronizationEnded()`` follows, whether it succeeds or fails. A store whose
    /// first read of its merge state runs in the background may make that read wait for the sync. The default does
    /// nothing.
    @_spi(ModelAdapter) func synchronizationBegan()

    /// The sync that ``synchronizationBegan()`` announced ended. The default does nothing.
    @_spi(ModelAdapter) func synchronizationEnded()

    /// Whether ``stopTracking(helperDirectory:keepingUnpublishedChanges:)`` can remove this store's change capture
    /// and bookkeeping, leaving the app's data as a plain file. The default is `false`.
    @_spi(ModelAdapter) var canStopTracking: Bool { get }

    /// The local changes of this store that no other device has received yet. The default reports none.
    @_spi(ModelAdapter) func unpublishedChanges() throws -> UnpublishedChanges

    /// Removes the store's change capture and bookkeeping, and the helper folder at `helperDirectory` if given
    /// (keeping what rows still reference when `keepingUnpublishedChanges`): the store then syncs no more. Asked
    /// only when ``canStopTracking`` is true; the default refuses with ``FolderSyncError/Code/invalidConfiguration``.
    @_spi(ModelAdapter) func stopTracking(helperDirectory: URL?, keepingUnpublishedChanges: Bool) throws -> DetachReport
}

extension ModelAdapter {
    @_spi(ModelAdapter) public func appliedChangeSetIdentifiers(
        of client: String,
        sequences: [Int64]
    ) throws -> [Int64: Set<String>]? { nil }

    @_spi(ModelAdapter) public func rowsDeleted(by changeSets: [ChangeStream]) throws -> [MassDeletion.Table] { [] }

    @_spi(ModelAdapter) public func hasTable(largerThan rowCount: Int) throws -> Bool { true }

    @_spi(ModelAdapter) public func collectTombstones(_ horizon: TombstoneHorizon, localClient: String) throws -> Int {
        0
    }

    @_spi(ModelAdapter) public func markPublished(
        throughSequence sequence: Int64, savingRemoteKnowledge remote: LocalSyncState.RemoteKnowledge
    ) throws {
        try markPublished(throughSequence: sequence)
        try saveRemoteKnowledge(remote)
    }

    @_spi(ModelAdapter) public func apply(
        _ header: ChangeSetHeader, localClient: String, changes: ChangeStream,
        resolutions: [ColumnKey: ConflictResolution],
        savingRemoteKnowledge remote: LocalSyncState.RemoteKnowledge
    ) throws -> ApplyOutcome {
        let outcome = try apply(header, localClient: localClient, changes: changes, resolutions: resolutions)
        try saveRemoteKnowledge(remote)
        return outcome
    }

    @_spi(ModelAdapter) public var snapshotting: (any SnapshottingModelAdapter)? { nil }

    @_spi(ModelAdapter) public var storeFilePath: String? { nil }

    @_spi(ModelAdapter) public func synchronizationBegan() {}

    @_spi(ModelAdapter) public func synchronizationEnded() {}

    @_spi(ModelAdapter) public var canStopTracking: Bool { false }

    @_spi(ModelAdapter) public func unpublishedChanges() throws -> UnpublishedChanges { UnpublishedChanges() }

    @_spi(ModelAdapter) public func stopTracking(
        helperDirectory: URL?,
        keepingUnpublishedChanges: Bool
    ) throws -> DetachReport {
        throw FolderSyncError(.invalidConfiguration, "this store's change tracking cannot be removed")
    }

    @_spi(ModelAdapter) public func continueAfterRestore(remotePublishedSequence: Int64, localClient: String) throws {
        throw FolderSyncError(
            .invalidConfiguration,
            "the remote holds change sets of this client up to \(remotePublishedSequence) that "
                + "its store does not know (restored from an earlier copy?), and the store cannot recover from it")
    }

    /// What syncs know of the remote, changed by `change` and saved when that changed anything (a save is a write
    /// transaction, an fsync); returns it as it now stands. Callers hold the sync lock, like every writer of the state.
    @discardableResult
    func updateRemoteKnowledge(_ change: (inout LocalSyncState.RemoteKnowledge) -> Void) throws
        -> LocalSyncState.RemoteKnowledge
    {
        let stored = try loadSyncState().remote
        var remote = stored
        change(&remote)
        if remote != stored { try saveRemoteKnowledge(remote) }
        return remote
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
    /// A constraint of the store's schema that a change of the set breaks as the store stands (SQLite's words:
    /// `NOT NULL constraint failed: tags.name`). Nothing of the set was applied (``applied`` is false): a set that
    /// is not applied yet may satisfy it (the one that supplies a row's other values), so the set waits for it.
    public var unmetConstraint: String?
    /// Whether the set took over a column of a row this client created and has not published: the insert this
    /// client publishes then leaves that column out, and must not reach a replica before this set does.
    public var suppliedUnpublishedInsert = false
    /// The rows the set changed, table by table (empty for an adapter that does not record them).
    public var changedRows = ChangedRowLog()

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
    /// replaced: this client's data then travels again, and merges with what others push. The progress starts
    /// over; the caller forgets its remote knowledge first.
    @_spi(ModelAdapter) func resetForRejoin() throws

    /// Records that the first sync looked for a whole store and goes on without one
    /// (``LocalSyncState/Progress/hasBootstrapped``; an install records it itself).
    @_spi(ModelAdapter) func markBootstrapped() throws

    /// The shape of the bookkeeping tables in the snapshots this adapter writes, recorded in every whole store
    /// (format 3 on) so that a reader decides by number how to read them: a newer one is refused with
    /// ``FolderSyncError/Code/unsupportedFormatVersion``, never guessed at. The default is 1.
    @_spi(ModelAdapter) var snapshotSchemaVersion: Int { get }

    /// Checks a downloaded snapshot at `url` against this store's schema without installing it, so that a download
    /// tries the next whole store when one is refused. The default accepts it: the install checks it anyway.
    @_spi(ModelAdapter) func checkSnapshot(at url: URL) throws
}

extension SnapshottingModelAdapter {
    @_spi(ModelAdapter) public var snapshotSchemaVersion: Int { 1 }

    @_spi(ModelAdapter) public var snapshotting: (any SnapshottingModelAdapter)? { self }

    @_spi(ModelAdapter) public func checkSnapshot(at url: URL) throws {}

    /// Refuses a snapshot whose bookkeeping is newer than this adapter's (`nil`: a file from before whole-store
    /// format 3, read by the shape of its tables).
    /// - Throws: ``FolderSyncError/Code/unsupportedFormatVersion`` naming `path` and both versions.
    func checkSnapshotSchemaVersion(_ version: Int?, path: String) throws {
        guard let version, version > snapshotSchemaVersion else { return }
        throw FolderSyncError(
            .unsupportedFormatVersion,
            "the whole store's snapshot schema version \(version) is newer than the supported \(snapshotSchemaVersion)",
            path: path)
    }
}
