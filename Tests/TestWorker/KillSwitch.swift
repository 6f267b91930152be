@_spi(ModelAdapter) import FolderSync
import FolderSyncTesting
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Counts the points a client passes and dies with SIGKILL at a chosen one, as `kill -9` or a power cut would.
///
/// Points are named: `staging` (each change written into a change set), `sealed`, `applying` (each remote change
/// applied), `snapshot`, `restore`, `mark-published`, `save-state`, `published`, `recent-sync`, and one per
/// remote request (`upload change-set`, `write recent-sync`, `remove change-set`, …). A switch for one point
/// dies at its `after + 1`-th pass; a switch for every point (`point == nil`) dies at the `after + 1`-th pass of
/// any of them, which spreads seeded kills over every phase of sync, whole-store transfer and vacuum.
///
/// A switch made with a `pauseFIFO` pauses instead, once: at the point it writes a line to that named pipe (opening
/// it blocks until the test reads), then waits for a line on standard input, so that a test can run another process
/// while this one stands exactly there.
final class KillSwitch: @unchecked Sendable {
    private let lock = NSLock()
    private let point: String?
    private let after: Int
    private let pauseFIFO: String?
    private var passedCount = 0
    private var currentAction = ""
    private var paused = false

    init(point: String?, after: Int, pauseFIFO: String? = nil) {
        self.point = point
        self.after = after
        self.pauseFIFO = pauseFIFO
    }

    /// Points passed so far (that the switch counts).
    var passed: Int { lock.withLock { passedCount } }

    /// What the client is doing (`sync`, `vacuum`…), named in the kill's report.
    var action: String {
        get { lock.withLock { currentAction } }
        set { lock.withLock { currentAction = newValue } }
    }

    func reach(_ name: String) {
        let (dies, action) = lock.withLock { () -> (Bool, String) in
            guard point == nil || point == name else { return (false, "") }
            passedCount += 1
            return (passedCount > after, currentAction)
        }
        guard dies else { return }
        guard let pauseFIFO else { crash(action.isEmpty ? name : "\(name) [\(action)]") }
        let pauses = lock.withLock { () -> Bool in
            defer { paused = true }
            return !paused
        }
        guard pauses else { return }
        let fifo = open(pauseFIFO, O_WRONLY)
        _ = "paused at \(name)\n".withCString { write(fifo, $0, strlen($0)) }
        close(fifo)
        _ = readLine()
    }
}

/// A remote whose every request is a kill point named by the request and what it touches.
final class KillingFileSystem: ForwardingFileSystem, @unchecked Sendable {
    let killSwitch: KillSwitch

    init(_ base: any RemoteFileSystem, killSwitch: KillSwitch) {
        self.killSwitch = killSwitch
        super.init(base)
    }

    override func willForward(_ request: Request, path: RemotePath) async throws {
        let components = path.components
        let what =
            components.contains("WholeStore")
            ? "whole-store"
            : components.contains("SyncChanges")
                ? "change-set"
                : components.contains("RecentSyncs") ? "recent-sync" : "other"
        killSwitch.reach("\(request.rawValue) \(what)")
    }
}

/// Delegates to the real store, and dies inside its transactions and around its snapshots at the chosen point.
final class KillingStore: SnapshottingModelAdapter, @unchecked Sendable {
    let base: any SnapshottingModelAdapter
    let killSwitch: KillSwitch

    init(base: any SnapshottingModelAdapter, killSwitch: KillSwitch) {
        self.base = base
        self.killSwitch = killSwitch
    }

    var schemaVersion: Int { base.schemaVersion }
    func loadSyncState() throws -> LocalSyncState { try base.loadSyncState() }
    func hasUnpublishedChanges() throws -> Bool { try base.hasUnpublishedChanges() }
    func appliedChangeSets() throws -> AppliedChangeSets { try base.appliedChangeSets() }
    func conflicts(author: String, localClient: String, changes: ChangeStream) throws -> [SyncConflict] {
        try base.conflicts(author: author, localClient: localClient, changes: changes)
    }
    func rowsDeleted(by changeSets: [ChangeStream]) throws -> [MassDeletion.Table] {
        try base.rowsDeleted(by: changeSets)
    }
    func backup(to url: URL) throws { try base.backup(to: url) }
    func resetForRejoin() throws { try base.resetForRejoin() }
    func appliedChangeSetIdentifiers(of client: String, sequences: [Int64]) throws -> [Int64: Set<String>]? {
        try base.appliedChangeSetIdentifiers(of: client, sequences: sequences)
    }
    func continueAfterRestore(remotePublishedSequence: Int64, localClient: String) throws {
        try base.continueAfterRestore(remotePublishedSequence: remotePublishedSequence, localClient: localClient)
    }

    func saveRemoteKnowledge(_ remote: LocalSyncState.RemoteKnowledge) throws {
        killSwitch.reach("save-state")
        try base.saveRemoteKnowledge(remote)
    }

    func markBootstrapped() throws { try base.markBootstrapped() }

    func markPublished(throughSequence sequence: Int64) throws {
        killSwitch.reach("mark-published")
        try base.markPublished(throughSequence: sequence)
    }

    func stageChanges(sequence: Int64, emit: (SyncChange) throws -> Void, seal: () throws -> Int64) throws -> Int {
        try base.stageChanges(
            sequence: sequence,
            emit: { change in
                try emit(change)
                killSwitch.reach("staging")
            },
            seal: {
                let last = try seal()
                killSwitch.reach("sealed")  // files durable, transaction not committed
                return last
            })
    }

    func apply(
        _ header: ChangeSetHeader, localClient: String, changes: ChangeStream,
        resolutions: [ColumnKey: ConflictResolution]
    ) throws -> ApplyOutcome {
        try base.apply(
            header, localClient: localClient,
            changes: { body in
                try withoutActuallyEscaping(body) { body in
                    try changes { change in
                        try body(change)
                        killSwitch.reach("applying")
                    }
                }
            }, resolutions: resolutions)
    }

    func writeSnapshot(to url: URL, localClient: String) throws -> [String: Int64]? {
        killSwitch.reach("snapshot")
        return try base.writeSnapshot(to: url, localClient: localClient)
    }

    func restoreSnapshot(from url: URL, covers: [String: Int64], localClient: String) throws {
        killSwitch.reach("restore")
        try base.restoreSnapshot(from: url, covers: covers, localClient: localClient)
        killSwitch.reach("restored")
    }
}

/// Builds synchronizations that can die after publishing a change set, before its bookkeeping, or before
/// writing the recent-sync marker.
final class KillingDocumentSyncManager: DocumentSyncManager, @unchecked Sendable {
    let killSwitch: KillSwitch

    init(
        applicationSyncManager: ApplicationSyncManager, configuration: Configuration, store: any ModelAdapter,
        killSwitch: KillSwitch
    ) throws {
        self.killSwitch = killSwitch
        try super.init(applicationSyncManager: applicationSyncManager, configuration: configuration, store: store)
    }

    override func synchronizationOperation(store: any ModelAdapter, options: SynchronizationOperation.Options)
        -> SynchronizationOperation
    {
        let operation = super.synchronizationOperation(store: store, options: options)
        return KillingSynchronizationOperation(copying: operation, killSwitch: killSwitch)
    }
}

final class KillingSynchronizationOperation: SynchronizationOperation, @unchecked Sendable {
    let killSwitch: KillSwitch

    init(copying operation: SynchronizationOperation, killSwitch: KillSwitch) {
        self.killSwitch = killSwitch
        super.init(copying: operation)
    }

    override func publishChangeSet(from url: URL, name: String) async throws {
        try await super.publishChangeSet(from: url, name: name)
        killSwitch.reach("published")
    }

    override func writeRecentSync(_ data: Data) async throws {
        killSwitch.reach("recent-sync")
        try await super.writeRecentSync(data)
    }
}
