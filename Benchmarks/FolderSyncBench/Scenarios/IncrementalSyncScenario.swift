import FolderSync
import Foundation
import GRDB

/// Scenario 2: with many change sets already in the folder, a sync costs what is new, not what exists.
///
/// Registered clients share a folder in which a writer W already published N change sets that a reader R
/// applied. Each round W changes one row and syncs, then R syncs; the same with few and with many sets.
/// The clients run in this process (sync times are measured around `synchronize()`).
struct IncrementalSyncScenario: Scenario {
    let number = "2"
    let title = "Incremental sync is O(new data)"

    struct Measured {
        var writer: Double
        var reader: Double
        var idleRequests: Int
        var idleChangeSetReads: Int
    }

    func run(_ context: BenchContext) async throws -> ScenarioResult {
        var result = ScenarioResult()
        let sizes = context.sizes
        result.note = "\(sizes.incrementalClients) registered clients; median of \(sizes.incrementalRounds) rounds"
        let small = try await measure(context, existing: sizes.incrementalSmall)
        let large = try await measure(context, existing: sizes.incrementalLarge)
        for (count, measured) in [(sizes.incrementalSmall, small), (sizes.incrementalLarge, large)] {
            result.figure("W: change one row and sync, \(count) sets in folder", measured.writer * 1000, "ms")
            result.figure("R: sync, \(count) sets in folder", measured.reader * 1000, "ms")
        }
        result.check("sync time with \(sizes.incrementalLarge) / with \(sizes.incrementalSmall)",
                     (large.writer + large.reader) / (small.writer + small.reader), atMost: 1.5)
        result.check("slowest sync with \(sizes.incrementalLarge) sets", max(large.writer, large.reader) * 1000, atMost: 50, unit: "ms")
        result.check("change sets read by an idle sync", Double(large.idleChangeSetReads), atMost: 0, unit: "")
        result.check("requests of an idle sync", Double(large.idleRequests), atMost: 2, unit: "")
        return result
    }

    private func measure(_ context: BenchContext, existing: Int) async throws -> Measured {
        let sizes = context.sizes
        let root = try context.folder("incremental-\(existing)")
        let remoteURL = root.appendingPathComponent("remote")
        try FileManager.default.createDirectory(at: remoteURL, withIntermediateDirectories: true)
        let remote = CountingFileSystem(FileManagerFileSystem(rootURL: remoteURL))
        context.log("\(sizes.incrementalClients) clients register")
        var clients: [(GRDBStore, DocumentSyncManager)] = []
        for index in 0..<sizes.incrementalClients {
            let name = "client-\(index)"
            let store = try BenchSchema.items.openStore(root.appendingPathComponent("\(name).sqlite").path)
            let manager = try await registerClient(store: store, remote: remote, client: name, document: "incremental",
                                                   helper: root.appendingPathComponent("\(name).helper"), manualPolicy: true)
            try await manager.synchronize()
            clients.append((store, manager))
        }
        let (writerStore, writer) = clients[0]
        let (_, reader) = clients[1]
        context.log("W publishes \(existing) change sets")
        for index in 0..<existing {
            try await writerStore.database.write { db in
                try db.execute(sql: "INSERT INTO items(id, c0) VALUES (?, ?)", arguments: [BenchSchema.rowID(index), "seed"])
            }
            try await writer.synchronize()
        }
        context.log("R applies them")
        let catchUp = try await reader.synchronize()
        guard catchUp.changeSetsApplied == existing else { throw BenchError("R applied \(catchUp.changeSetsApplied) of \(existing) change sets") }

        var writerTimes: [Double] = [], readerTimes: [Double] = []
        // Round 0 warms up (first statements prepared, caches filled) and is not counted.
        for round in 0...sizes.incrementalRounds {
            try await writerStore.database.write { db in
                try db.execute(sql: "UPDATE items SET c1 = ? WHERE id = ?", arguments: ["round \(round)", BenchSchema.rowID(round % existing)])
            }
            var started = ContinuousClock.now
            try await writer.synchronize()
            let writerTime = (ContinuousClock.now - started).seconds
            started = ContinuousClock.now
            let phases = ProcessInfo.processInfo.environment["FOLDERSYNC_BENCH_PHASES"] != nil ? Worker.tracePhases(reader, "R \(existing)") : nil
            let report = try await reader.synchronize()
            phases?.cancel()
            if round > 0 {
                writerTimes.append(writerTime)
                readerTimes.append((ContinuousClock.now - started).seconds)
            }
            guard report.changeSetsApplied == 1 else { throw BenchError("R applied \(report.changeSetsApplied) change sets, expected 1") }
        }
        _ = remote.take()
        try await reader.synchronize()
        let idle = remote.take()
        return Measured(writer: median(writerTimes), reader: median(readerTimes), idleRequests: idle.requests,
                        idleChangeSetReads: idle.changeSetReads)
    }
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}
