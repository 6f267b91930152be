import FolderSync
import Foundation
import GRDB

/// Scenario 2: with many change sets already in the folder, a sync costs what is new, not what exists.
///
/// Registered clients share a folder in which a writer W already published N change sets that a reader R
/// applied. Each round W changes one row and syncs, then R syncs; the same with few and with many sets, the two
/// folders taking turns round by round.
/// The clients run in this process (sync times are measured around `synchronize()`).
struct IncrementalSyncScenario: Scenario {
    let number = "2"
    let title = "Incremental sync is O(new data)"

    func run(_ context: BenchContext) async throws -> ScenarioResult {
        var result = ScenarioResult()
        let sizes = context.sizes
        result.note =
            "\(sizes.incrementalClients) registered clients; median of \(sizes.incrementalRounds) rounds, alternating folders"
        let small = try await Folder(context, existing: sizes.incrementalSmall)
        let large = try await Folder(context, existing: sizes.incrementalLarge)
        // Round by round, one folder then the other: a machine that slows down during the run slows both alike.
        // Round 0 warms up (first statements prepared, caches filled) and is not counted.
        for round in 0...sizes.incrementalRounds {
            for folder in [small, large] { try await folder.round(round, counted: round > 0) }
        }
        for folder in [small, large] {
            result.figure(
                "W: change one row and sync, \(folder.existing) sets in folder", folder.writerTime * 1000, "ms")
            result.figure("R: sync, \(folder.existing) sets in folder", folder.readerTime * 1000, "ms")
        }
        result.check(
            "sync time with \(large.existing) / with \(small.existing)",
            (large.writerTime + large.readerTime) / (small.writerTime + small.readerTime), atMost: 1.5)
        result.check(
            "slowest sync with \(large.existing) sets", max(large.writerTime, large.readerTime) * 1000, atMost: 50,
            unit: "ms")
        let idle = try await large.idleSync()
        result.check("change sets read by an idle sync", Double(idle.changeSetReads), atMost: 0, unit: "")
        result.check("requests of an idle sync", Double(idle.requests), atMost: 2, unit: "")
        return result
    }

    /// A folder in which W already published `existing` change sets that R applied, and the times of its rounds.
    final class Folder {
        let existing: Int
        let remote: CountingFileSystem
        let writerStore: GRDBStore
        let writer: DocumentSyncManager
        let reader: DocumentSyncManager
        let tracesPhases = ProcessInfo.processInfo.environment["FOLDERSYNC_BENCH_PHASES"] != nil
        private var writerTimes: [Double] = []
        private var readerTimes: [Double] = []
        /// W's and R's median sync times over the counted rounds.
        var writerTime: Double { median(writerTimes) }
        var readerTime: Double { median(readerTimes) }

        init(_ context: BenchContext, existing: Int) async throws {
            let sizes = context.sizes
            self.existing = existing
            let root = try context.folder("incremental-\(existing)")
            let remoteURL = root.appendingPathComponent("remote")
            try FileManager.default.createDirectory(at: remoteURL, withIntermediateDirectories: true)
            remote = CountingFileSystem(FileManagerFileSystem(rootURL: remoteURL))
            context.log("\(sizes.incrementalClients) clients register")
            var clients: [(GRDBStore, DocumentSyncManager)] = []
            for index in 0..<sizes.incrementalClients {
                let name = "client-\(index)"
                let store = try BenchSchema.items.openStore(root.appendingPathComponent("\(name).sqlite").path)
                let manager = try await registerClient(
                    store: store, remote: remote, client: name, document: "incremental",
                    helper: root.appendingPathComponent("\(name).helper"), manualPolicy: true)
                try await manager.synchronize()
                clients.append((store, manager))
            }
            (writerStore, writer) = clients[0]
            reader = clients[1].1
            context.log("W publishes \(existing) change sets")
            for index in 0..<existing {
                try await writerStore.database.write { db in
                    try db.execute(
                        sql: "INSERT INTO items(id, c0) VALUES (?, ?)", arguments: [BenchSchema.rowID(index), "seed"])
                }
                try await writer.synchronize()
            }
            context.log("R applies them")
            let catchUp = try await reader.synchronize()
            guard catchUp.changeSetsApplied == existing else {
                throw BenchError("R applied \(catchUp.changeSetsApplied) of \(existing) change sets")
            }
        }

        /// W changes one row and syncs, then R syncs and must apply exactly that change.
        func round(_ round: Int, counted: Bool) async throws {
            let row = BenchSchema.rowID(round % existing)
            try await writerStore.database.write { db in
                try db.execute(sql: "UPDATE items SET c1 = ? WHERE id = ?", arguments: ["round \(round)", row])
            }
            var started = ContinuousClock.now
            try await writer.synchronize()
            let writerTime = (ContinuousClock.now - started).seconds
            started = ContinuousClock.now
            let phases = tracesPhases ? Worker.tracePhases(reader, "R \(existing)") : nil
            let report = try await reader.synchronize()
            phases?.cancel()
            if counted {
                writerTimes.append(writerTime)
                readerTimes.append((ContinuousClock.now - started).seconds)
            }
            guard report.changeSetsApplied == 1 else {
                throw BenchError("R applied \(report.changeSetsApplied) change sets, expected 1")
            }
        }

        /// What a sync with nothing new costs: requests made and change sets read.
        func idleSync() async throws -> (requests: Int, changeSetReads: Int) {
            _ = remote.take()
            try await reader.synchronize()
            let idle = remote.take()
            return (idle.requests, idle.changeSetReads)
        }
    }
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    return sorted.count % 2 == 1
        ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}
