@_spi(ModelAdapter) import FolderSync
import Foundation

/// The mutable state of one ``ConvergenceSimulator`` run: generator, clients, journal, trace.
///
/// Everything happens in one task, one step after another, so the schedule
/// depends on the seed alone.
final class SimulationRun {
    let configuration: ConvergenceSimulator.Configuration
    var random: SeededGenerator
    let time = SimulatedTime()
    /// Clients that registered, in the order they joined.
    var clients: [SimulatedClient] = []
    /// Clients that have not joined yet.
    var waiting: [SimulatedClient] = []
    var journal: WriteJournal
    var summary = ConvergenceSimulator.Summary()
    private(set) var trace: [String] = []
    var nextRowNumber: [Int: Int] = [:]
    /// Copies of clients' stores, by client index, and of the shared folder, for the restore steps.
    var storeBackups: [Int: StoreBackup] = [:]
    var folderBackupEpoch: [Int]?
    /// What each client had published when the shared folder was copied, by client index.
    var folderBackupPublished: [Int: Int64] = [:]
    /// Clients whose store was put back below what they had published, by index: the sequence they had reached. Their
    /// store holds those sets again once it continued past it and applied its own sets back
    /// (``SimulationRun/restoreHazards``).
    var storeRestoredBelow: [Int: Int64] = [:]
    /// Clients whose sets above this sequence a folder restore removed, by index, until they upload a whole store.
    var folderLostAbove: [Int: Int64] = [:]
    /// The installations of one client copied to a second computer, by index (``Configuration/identityHazards``).
    var sharedIdentity: Set<Int> = []
    /// Copies of clients' change-set folders, by client index.
    var clientFolderBackups: [Int: ClientFolderBackup] = [:]
    /// Syncs that found their client's marker written by another installation and wrote it again: until the other
    /// installation reads it back and stops, the two have not found each other.
    var markersReclaimed = 0
    /// The faults of ``ConvergenceSimulator/Configuration/faults``, struck only inside syncs of the random steps.
    private(set) var faults: FaultyFileSystem.Faults?
    /// Set when the random steps are over: settling and the final rounds run without faults.
    private var faultsOver = false
    private(set) var step = 0
    /// The shared folder as the clients reach it, which can go away (``ConvergenceSimulator/Configuration/outages``).
    private(set) var outages: OutageFileSystem?
    /// The step at which the current outage ends, while the folder is away.
    var outageEnd: Int?
    /// Whole stores a vacuum hazard damaged in place, by path, until replaced or put back.
    var damagedStores: [RemotePath: DamagedStore] = [:]
    /// Every change set the folder held at the last check, by file name, with where it was
    /// (``checkNothingRemovedTooSoon()``).
    var keptChangeSets: [String: KeptChangeSet] = [:]
    /// The user's answer to a client that finds the application's folder gone.
    private(set) var replacedRemote = ReplacedRemoteAnswer(outages: nil)

    init(_ configuration: ConvergenceSimulator.Configuration) {
        self.configuration = configuration
        self.random = SeededGenerator(seed: configuration.seed)
        self.journal = WriteJournal(deletePolicy: configuration.deletePolicy)
        journal.tombstonesMayBeCollected = configuration.lifecycle
    }

    func log(_ line: String) {
        trace.append("step \(step): \(line)")
        if trace.count > 200 { trace.removeFirst(trace.count - 200) }
    }

    /// The remote every client shares (without its interruptions), once ``setUp()`` ran.
    private(set) var remote: (any RemoteFileSystem)?
    /// The same remote, as the clock that dates its files.
    private(set) var folderClock: SimulatedFolderClock?

    func play() async throws {
        try await setUp()
        try await playRandomSteps()
        try await finish()
        try checkInvariants()
        if configuration.attachments { try await checkAttachments() }
    }

    /// Creates the remote and the clients, and lets some of them join.
    func setUp() async throws {
        let base: any RemoteFileSystem
        switch configuration.remote {
        case .inMemory: base = InMemoryFileSystem()
        case .fileManager:
            // The shared folder exists before anyone registers (a missing one is a share not mounted).
            let root = configuration.directory.appendingPathComponent("remote", isDirectory: true)
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            base = FileManagerFileSystem(rootURL: root)
        case .custom(let custom): base = custom
        }
        // The folder dates files by the simulation's time, whatever the clients' clocks say.
        let remote = SimulatedFolderClock(base, now: time.clock(skew: 0))
        self.remote = remote
        folderClock = remote
        var clientRemote: any RemoteFileSystem =
            configuration.faults.map { mix in
                let faults = FaultyFileSystem.Faults(mix: mix, seed: random.next())
                faults.isEnabled = false  // registration is not under test here: syncs are
                self.faults = faults
                return FaultyFileSystem(remote, faults: faults)
            } ?? remote
        if configuration.outages {
            let outages = OutageFileSystem(clientRemote)
            self.outages = outages
            clientRemote = outages
        }
        replacedRemote = ReplacedRemoteAnswer(outages: outages)
        let count = random.int(configuration.clients)
        summary.clients = count
        for index in 1...count {
            let skew: TimeInterval = random.pick(configuration.clockSkews)!
            let resolves = random.chance(40)
            let folder = configuration.directory.appendingPathComponent("client-\(index)", isDirectory: true)
            let client = try SimulatedClient(
                index: index, folder: folder, now: time.clock(skew: skew), remote: clientRemote,
                resolvesConflicts: resolves, configuration: configuration)
            log("\(client.name) has a clock skewed by \(Int(skew)) s")
            if configuration.lifecycle {
                guard client.store is any SnapshottingSimulatorStore else {
                    throw SimulationFailure.Detail("lifecycle steps need a SnapshottingSimulatorStore")
                }
                client.usesWholeStores = true
                // A low threshold makes automatic uploads (and the vacuums after them) happen inside ordinary syncs.
                client.wholeStoreUploadThreshold = random.chance(40) ? random.int(1...4) : nil
            }
            client.usesAttachments = configuration.attachments
            let replacedRemote = self.replacedRemote
            client.confirmsReplacedRemote = { replacedRemote.remoteWasReplaced }
            waiting.append(client)
        }
        // Some clients join later and catch up on everything published before them.
        for _ in 0..<random.int(2...count) { try await join() }
    }

    func playRandomSteps() async throws {
        let steps = random.int(configuration.steps)
        for _ in 0..<steps {
            step += 1
            time.advance(byMilliseconds: Int64(random.int(0...40)))
            let client = random.pick(clients)!
            let roll = random.int(0...99)
            try beginOrEndOutage()
            if outageEnd != nil {
                try await outageStep(roll, client)
                continue
            }
            if configuration.lifecycle {
                try await lifecycleStep(roll, client)
                try await checkNothingRemovedTooSoon()
                continue
            }
            switch roll {
            case 0..<4 where !waiting.isEmpty: try await join()
            case 0..<55: try write(on: client)
            case 55..<78: try await sync(client)
            case 78..<86: try await duplicatedSync(client)
            case 86..<94: try await interruptedSync(client)
            default: try await restart(client)
            }
        }
        summary.steps = steps
    }

    /// One step of a lifecycle schedule: the ordinary steps, less often, and the lifecycle ones.
    private func lifecycleStep(_ roll: Int, _ client: SimulatedClient) async throws {
        if configuration.identityHazards, random.chance(7) { return try await identityHazardStep(client) }
        switch roll {
        case 0..<6 where !waiting.isEmpty: try await join()
        case 0..<46: try write(on: client)
        case 46..<63: try await sync(client)
        case 63..<68: try await duplicatedSync(client)
        case 68..<74: try await interruptedSync(client)
        case 74..<79: try await restart(client)
        case 79..<85: try await transferWholeStore(client)
        case 85..<90 where configuration.vacuumHazards && random.chance(60): try await vacuumHazard(client)
        case 85..<90:
            try await vacuum(client)
            if configuration.churn { try await collectTombstones(random.pick(clients)!) }
        case 90..<94 where configuration.restores: try await backUpOrRestore(client)
        case 90..<94: try await deleteClient(random.pick(clients)!)
        case 94..<96 where configuration.restores && random.chance(75): try backUpOrRestoreFolder()
        case 94..<96: try await wipeRemote()
        case 96..<98 where configuration.restores: try await backUpOrRestore(client)
        case 98 where configuration.restores: try await deleteClient(random.pick(clients)!)
        default:
            if let stopped = clients.first(where: { $0.reset != nil }) {
                try await rejoin(stopped)
            } else {
                try await sync(client)
            }
        }
    }

    /// Lets the waiting clients join, then has every client sync twice in turn (after re-joining any that were reset).
    func finish() async throws {
        step += 1
        faultsOver = true
        try endOutage()
        while !waiting.isEmpty { try await join() }
        try restoreDamagedStores()
        if configuration.lifecycle { try await settleResets() }
        summary.faultsInjected = faults?.injected ?? [:]
        for round in 1...2 {
            for client in clients {
                time.advance(byMilliseconds: Int64(random.int(0...40)))
                log("final round \(round): \(client.name) syncs")
                try await sync(client, resetAllowed: false)
            }
        }
        if configuration.churn {
            for client in clients { try await collectTombstones(client) }
        }
    }

    /// Runs `body` with the configured faults striking (when `enabled`), and never anything after it.
    func underFaults<T>(_ enabled: Bool, _ body: () async throws -> T) async throws -> T {
        faults?.isEnabled = enabled && !faultsOver
        defer { faults?.isEnabled = false }
        return try await body()
    }

    func join() async throws {
        let client = waiting.removeFirst()
        log(
            "\(client.name) joins (\(client.resolvesConflicts ? "merging resolver" : "last writer wins")\(client.wholeStoreUploadThreshold.map { ", uploads a whole store every \($0) sets" } ?? ""))"
        )
        clients.append(client)
        do {
            try await client.start()
        } catch let error as FolderSyncError where isReset(error) {
            throw SimulationFailure.Detail("\(client.name) was reset while joining for the first time: \(error)")
        } catch {
            throw SimulationFailure.Detail("\(client.name) failed to register: \(error)")
        }
    }

    // MARK: Syncs

    func record(_ report: SyncReport, _ client: SimulatedClient, _ what: String) {
        summary.syncs += 1
        summary.conflicts += report.conflicts.count
        if report.warnings.contains(where: { $0.kind == .clockSkew }) { summary.clockSkewWarnings += 1 }
        if report.warnings.contains(where: { $0.kind == .restoredStore }) { summary.restoredStoresNoticed += 1 }
        if report.warnings.contains(where: { $0.kind == .recoveredFromRemoved }) {
            summary.syncsRecoveredFromRemoved += 1
        }
        if report.warnings.contains(where: {
            $0.kind == .staleRecentSync && $0.message.contains("another installation")
        }) {
            markersReclaimed += 1
        }
        if report.uploadedWholeStore != nil { folderLostAbove[client.index] = nil }
        if configuration.lifecycle {
            if report.uploadedWholeStore != nil { summary.automaticWholeStoreUploads += 1 }
            if report.installedWholeStore != nil { summary.wholeStoreInstalls += 1 }
        }
        log(
            "\(client.name) \(what): sent \(report.changeSetsSent) sets, applied \(report.changeSetsApplied), conflicts \(report.conflicts.count)"
                + (report.installedWholeStore.map { ", installed the whole store of \($0.clientIdentifier)" } ?? "")
                + (report.uploadedWholeStore != nil ? ", uploaded a whole store" : ""))
    }

    /// A sync that finished: fails the run if the client should have been stopped by a reset.
    func completed(_ report: SyncReport, _ client: SimulatedClient, _ what: String) throws {
        record(report, client, what)
        // Every write obeys the schema: a set a store refuses was published before the sets it needs, unsaid.
        if let refused = report.warnings.first(where: { $0.kind == .changeSetRefused }) {
            throw SimulationFailure.Detail(
                "\(client.identifier) met a change set its store refuses: \(refused)"
                    + " (\(refused.path ?? ""))")
        }
        if !client.expectedResets.isEmpty {
            throw SimulationFailure.Detail(
                "\(client.name) synced although it should have stopped with one of \(client.expectedResets)")
        }
    }

    /// A sync; a client that knows it was reset re-joins instead (lifecycle), as the app would.
    /// - Parameter resetAllowed: `false` in the final rounds, where every client has settled.
    func sync(_ client: SimulatedClient, resetAllowed: Bool = true) async throws {
        if resetAllowed, client.reset != nil { return try await rejoin(client) }
        let before = try localState(client)
        do {
            try completed(try await underFaults(resetAllowed) { try await client.synchronize() }, client, "syncs")
        } catch let error as FolderSyncError
            where resetAllowed && configuration.faults?.injectedCodes.contains(error.code) == true
        {
            summary.faultedSyncs += 1
            log("\(client.name) sync failed under an injected fault: \(error)")
        } catch let error as FolderSyncError where resetAllowed && isReset(error) {
            try noteReset(client, error, before: before)
            if random.chance(60) { try await rejoin(client) }
        } catch let failure as SimulationFailure.Detail {
            throw failure
        } catch {
            throw SimulationFailure.Detail("\(client.name) failed to sync: \(error)")
        }
    }

    /// Two sync requests at once (they coalesce), or one right after the other.
    private func duplicatedSync(_ client: SimulatedClient) async throws {
        summary.duplicatedSyncs += 1
        guard let document = client.document, client.reset == nil else { return try await sync(client) }
        if random.chance(50) {
            log("\(client.name) requests two syncs at once")
            let before = try localState(client)
            do {
                async let first = document.synchronize()
                async let second = document.synchronize()
                let (a, b) = try await (first, second)
                try completed(a, client, "first of two concurrent syncs")
                try completed(b, client, "second of two concurrent syncs")
            } catch let error as FolderSyncError where isReset(error) {
                try noteReset(client, error, before: before)
            } catch let failure as SimulationFailure.Detail {
                throw failure
            } catch {
                throw SimulationFailure.Detail("\(client.name) failed a duplicated sync: \(error)")
            }
        } else {
            try await sync(client)
            try await sync(client)
        }
    }

    /// A sync whose task is cancelled at a random remote request; sometimes the process dies right after.
    private func interruptedSync(_ client: SimulatedClient) async throws {
        guard configuration.interruptions, let document = client.document, client.reset == nil else {
            return try await sync(client)
        }
        let request = random.int(1...14)
        let failing = random.chance(50)
        // Either the app cancels its task awaiting the sync, or the sync's own task is cancelled.
        let caller: CallerTask? = random.chance(50) ? CallerTask() : nil
        if let caller {
            client.interruptions.arm(atRequest: request, failing: failing, cancel: { caller.cancel() })
        } else {
            client.interruptions.arm(atRequest: request, failing: failing)
        }
        defer { client.interruptions.disarm() }
        let before = try localState(client)
        do {
            let report: SyncReport
            if let caller {
                report = try await caller.run(document).get()
            } else {
                report = try await document.synchronize()
            }
            try completed(
                report, client,
                "syncs (armed to cancel \(caller == nil ? "the sync" : "the caller") at request \(request))")
        } catch let error as FolderSyncError where error.code == .cancelled {
            summary.interruptedSyncs += 1
            log("\(client.name) sync cancelled at remote request \(request)\(failing ? ", which failed" : "")")
        } catch is CancellationError {
            summary.interruptedSyncs += 1
            log(
                "\(client.name) sync cancelled at remote request \(request)\(failing ? ", which failed" : "") (CancellationError)"
            )
        } catch let error as FolderSyncError where isReset(error) {
            client.interruptions.disarm()
            try noteReset(client, error, before: before)
        } catch let failure as SimulationFailure.Detail {
            throw failure
        } catch {
            throw SimulationFailure.Detail(
                "\(client.name) sync cancelled at remote request \(request) failed with a non-cancellation error: \(error)"
            )
        }
        client.interruptions.disarm()
        if random.chance(40) { try await restart(client) }
    }

    /// Kills and relaunches the client; a relaunch may find a reset at registration.
    func restart(_ client: SimulatedClient) async throws {
        summary.restarts += 1
        log("\(client.name) restarts")
        let before = configuration.lifecycle ? try localState(client) : nil
        do {
            try await client.restart()
            if let reset = client.reset, client.document?.resetState?.code != reset {
                throw SimulationFailure.Detail(
                    "\(client.name) forgot across a relaunch that it was stopped by \(reset)")
            }
        } catch let error as FolderSyncError where isReset(error) {
            try noteReset(client, error, before: before!)
        } catch let failure as SimulationFailure.Detail {
            throw failure
        } catch {
            throw SimulationFailure.Detail("\(client.name) failed to restart: \(error)")
        }
    }

    // MARK: Invariants

    func checkInvariants() throws {
        let reference = clients[0]
        let expected = try reference.store.allRows()
        summary.finalRows = expected.count
        summary.rows = expected
        for client in clients {
            let rows = client === reference ? expected : try client.store.allRows()
            if rows != expected {
                let missing = expected.filter { !rows.contains($0) }.prefix(3)
                let extra = rows.filter { !expected.contains($0) }.prefix(3)
                throw SimulationFailure.Detail(
                    """
                    replicas differ: \(client.name) lacks \(missing.map(\.description)) and has \(extra.map(\.description)) \
                    that \(reference.identifier) does not
                    """)
            }
            try journal.check(replica: client.store, replicaClient: client.identifier, rows: rows)
            if try client.store.adapter.hasUnpublishedChanges() {
                throw SimulationFailure.Detail("\(client.name) still has unpublished changes after the final syncs")
            }
        }
    }
}
