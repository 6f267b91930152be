import Foundation
import FolderSync

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
    var journal = WriteJournal()
    var summary = ConvergenceSimulator.Summary()
    private(set) var trace: [String] = []
    var nextRowNumber: [Int: Int] = [:]
    private var step = 0

    init(_ configuration: ConvergenceSimulator.Configuration) {
        self.configuration = configuration
        self.random = SeededGenerator(seed: configuration.seed)
    }

    func log(_ line: String) {
        trace.append("step \(step): \(line)")
        if trace.count > 60 { trace.removeFirst(trace.count - 60) }
    }

    func play() async throws {
        let remote: any RemoteFileSystem = switch configuration.remote {
        case .inMemory: InMemoryFileSystem()
        case .fileManager: FileManagerFileSystem(rootURL: configuration.directory.appendingPathComponent("remote", isDirectory: true))
        }
        let count = random.int(configuration.clients)
        summary.clients = count
        for index in 1...count {
            let skew: TimeInterval = random.pick([0, 0, 86_400, -86_400])!
            let resolves = random.chance(40)
            let folder = configuration.directory.appendingPathComponent("client-\(index)", isDirectory: true)
            let client = try SimulatedClient(index: index, folder: folder, now: time.clock(skew: skew), remote: remote,
                                             resolvesConflicts: resolves, makeStore: configuration.makeStore)
            log("\(client.identifier) has a clock skewed by \(Int(skew)) s")
            waiting.append(client)
        }
        // Some clients join later and catch up on everything published before them.
        for _ in 0..<random.int(2...count) { try await join() }

        let steps = random.int(configuration.steps)
        for _ in 0..<steps {
            step += 1
            time.advance(byMilliseconds: Int64(random.int(0...40)))
            let client = random.pick(clients)!
            let roll = random.int(0...99)
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

        step += 1
        while !waiting.isEmpty { try await join() }
        for round in 1...2 {
            for client in clients {
                time.advance(byMilliseconds: Int64(random.int(0...40)))
                log("final round \(round): \(client.identifier) syncs")
                try await sync(client)
            }
        }
        try checkInvariants()
    }

    private func join() async throws {
        let client = waiting.removeFirst()
        log("\(client.identifier) joins (\(client.resolvesConflicts ? "merging resolver" : "last writer wins"))")
        do {
            try await client.start()
        } catch {
            throw SimulationFailure.Detail("\(client.identifier) failed to register: \(error)")
        }
        clients.append(client)
    }

    // MARK: Syncs

    private func record(_ report: SyncReport, _ client: SimulatedClient, _ what: String) {
        summary.syncs += 1
        summary.conflicts += report.conflicts.count
        log("\(client.identifier) \(what): sent \(report.changeSetsSent) sets, applied \(report.changeSetsApplied), conflicts \(report.conflicts.count)")
    }

    private func sync(_ client: SimulatedClient) async throws {
        do {
            record(try await client.synchronize(), client, "syncs")
        } catch {
            throw SimulationFailure.Detail("\(client.identifier) failed to sync: \(error)")
        }
    }

    /// Two sync requests at once (they coalesce), or one right after the other.
    private func duplicatedSync(_ client: SimulatedClient) async throws {
        summary.duplicatedSyncs += 1
        guard let document = client.document else { return }
        if random.chance(50) {
            log("\(client.identifier) requests two syncs at once")
            do {
                async let first = document.synchronize()
                async let second = document.synchronize()
                let (a, b) = try await (first, second)
                record(a, client, "first of two concurrent syncs")
                record(b, client, "second of two concurrent syncs")
            } catch {
                throw SimulationFailure.Detail("\(client.identifier) failed a duplicated sync: \(error)")
            }
        } else {
            try await sync(client)
            try await sync(client)
        }
    }

    /// A sync whose task is cancelled at a random remote request; sometimes the process dies right after.
    private func interruptedSync(_ client: SimulatedClient) async throws {
        guard let document = client.document else { return }
        let request = random.int(1...14)
        let failing = random.chance(50)
        // Either the app cancels its task awaiting the sync, or the sync's own task is cancelled.
        let caller: CallerTask? = random.chance(50) ? CallerTask() : nil
        if let caller {
            client.remote.arm(atRequest: request, failing: failing, cancel: { caller.cancel() })
        } else {
            client.remote.arm(atRequest: request, failing: failing)
        }
        defer { client.remote.disarm() }
        do {
            let report: SyncReport
            if let caller {
                report = try await caller.run(document).get()
            } else {
                report = try await document.synchronize()
            }
            record(report, client, "syncs (armed to cancel \(caller == nil ? "the sync" : "the caller") at request \(request))")
        } catch let error as FolderSyncError where error.code == .cancelled {
            summary.interruptedSyncs += 1
            log("\(client.identifier) sync cancelled at remote request \(request)\(failing ? ", which failed" : "")")
        } catch is CancellationError {
            summary.interruptedSyncs += 1
            log("\(client.identifier) sync cancelled at remote request \(request)\(failing ? ", which failed" : "") (CancellationError)")
        } catch {
            throw SimulationFailure.Detail("\(client.identifier) sync cancelled at remote request \(request) failed with a non-cancellation error: \(error)")
        }
        client.remote.disarm()
        if random.chance(40) { try await restart(client) }
    }

    private func restart(_ client: SimulatedClient) async throws {
        summary.restarts += 1
        log("\(client.identifier) restarts")
        do {
            try await client.restart()
        } catch {
            throw SimulationFailure.Detail("\(client.identifier) failed to restart: \(error)")
        }
    }

    // MARK: Invariants

    private func checkInvariants() throws {
        let reference = clients[0]
        let expected = try reference.store.allRows()
        summary.finalRows = expected.count
        summary.rows = expected
        for client in clients {
            let rows = client === reference ? expected : try client.store.allRows()
            if rows != expected {
                let missing = expected.filter { !rows.contains($0) }.prefix(3)
                let extra = rows.filter { !expected.contains($0) }.prefix(3)
                throw SimulationFailure.Detail("""
                    replicas differ: \(client.identifier) lacks \(missing.map(\.description)) and has \(extra.map(\.description)) \
                    that \(reference.identifier) does not
                    """)
            }
            try journal.check(replica: client.store, replicaClient: client.identifier, rows: rows)
            if try client.store.adapter.hasUnpublishedChanges() {
                throw SimulationFailure.Detail("\(client.identifier) still has unpublished changes after the final syncs")
            }
        }
    }
}
