import Foundation

/// The big document of scenarios 3 and 5: A wrote it, published it and uploaded a whole store; B bootstrapped.
struct BigDocument: Sendable {
    let root: URL
    let a: BenchClient
    let b: BenchClient

    /// Builds it: A writes `rows` rows, syncs, uploads a whole store and vacuums its file (to the document's size).
    static func make(_ context: BenchContext) throws -> BigDocument {
        let root = try context.folder("big")
        let remote = root.appendingPathComponent("remote")
        try FileManager.default.createDirectory(at: remote, withIntermediateDirectories: true)
        let a = BenchClient("A", in: root, remote: remote.path, document: "big", schema: .docs)
        let b = BenchClient("B", in: root, remote: remote.path, document: "big", schema: .docs)
        context.log("A writes \(context.sizes.bigDocumentRows) rows, syncs, uploads a whole store")
        let output = try a.run("write,sync:publish,upload,vacuum", rows: context.sizes.bigDocumentRows)
        context.log(
            String(
                format: "  write %.1f s, sync %.1f s, whole-store upload %.1f s",
                output["write.seconds"], output["publish.seconds"], output["upload.seconds"]))
        return BigDocument(root: root, a: a, b: b)
    }
}

/// Scenario 3: a new client joins a big document: whole-store download, verify, install. Floor: `cp` of the file.
///
/// A client joins as a new device does: ``DocumentSyncManager/openStore(at:_:)`` makes its store's file from the
/// whole store before the app opens it (installed by a rename), then its first sync. It runs five times in full
/// mode, each join paired with a `cp` measured right after it, and the median ratio is judged. Each timed step
/// finds as much memory backed by the host as it writes (``Floors/backPageCache(like:)``): without it a `cp` of
/// 1.3 GB took 0.4 s to 3.4 s on this VM. Each run's times are reported, and what an fsync of the copy adds. For
/// comparison, another client installs the same store by its first sync into a new store the app already has
/// open (its pages copied in).
struct BootstrapScenario: Scenario {
    let number = "3"
    let title = "Bootstrap of a new client"

    private struct Run {
        var joined: WorkerOutput
        var copy: Double
        /// The `sync FILE` (an fsync) of the copy right after it, reported: what a durable copy adds, as the join's
        /// file is made durable before it is renamed into place.
        var copySync: Double
        var ratio: Double { joined["join.seconds"] / copy }
    }

    func run(_ context: BenchContext) async throws -> ScenarioResult {
        var result = ScenarioResult()
        let big = try BigDocument.make(context)
        context.bigDocument = big
        let size = Floors.fileSize(big.a.db)
        result.note =
            "\(context.sizes.bigDocumentRows) rows, \(String(format: "%.0f", Double(size) / 1_048_576)) MiB SQLite file"
        // The other clients join a copy of the folder: scenario 5 finds the document with A and B alone.
        let copy = big.root.appendingPathComponent("remote-copy")
        try ChildProcess.mustRun(["cp", "-r", big.b.remote, copy.path])
        defer { try? FileManager.default.removeItem(at: copy) }
        func other(_ name: String) -> BenchClient {
            BenchClient(name, in: big.root, remote: copy.path, document: big.b.document, schema: big.b.schema)
        }
        var runs: [Run] = []
        for index in 1...context.sizes.joinRuns {
            // B's store stays for scenario 5; the other runs' clients are removed after their floor.
            let client = index == 1 ? big.b : other("B\(index)")
            runs.append(try measure(context, joining: client, big: big))
            if index > 1 { remove(client) }
        }
        let median = runs.sorted { $0.ratio < $1.ratio }[runs.count / 2]
        try Floors.flushWrites()
        context.log("for comparison: C's first sync installs the whole store into a store the app has open")
        let c = other("C")
        let copiedIn = try c.run("sync:bootstrap")
        guard copiedIn["bootstrap.installedWholeStore"] == 1 else {
            throw BenchError("C did not install the whole store")
        }
        remove(c)

        result.figure("document file", Double(size), "B")
        result.figure(
            "B: store opened from the whole store (download, verify, install by rename)",
            median.joined["join.openSeconds"], "s")
        result.figure("B: that and its first sync", median.joined["join.seconds"], "s")
        result.figure("floor: cp of the database file", median.copy, "s")
        for (index, run) in runs.enumerated() where runs.count > 1 {
            result.figure("run \(index + 1): join with its first sync", run.joined["join.seconds"], "s")
            result.figure("run \(index + 1): cp", run.copy, "s")
            result.figure("run \(index + 1): then sync of the copy", run.copySync, "s")
            result.figure("run \(index + 1): join / cp", run.ratio, "×")
        }
        result.figure(
            "for comparison: C's first sync into an open store (pages copied in)", copiedIn["bootstrap.seconds"], "s")
        result.figure(
            "whole-store file", Double(Floors.fileSize(try wholeStoreFile(in: URL(fileURLWithPath: big.b.remote)))), "B"
        )
        result.check(
            runs.count > 1 ? "bootstrap / cp (median of \(runs.count) runs)" : "bootstrap / cp", median.ratio, atMost: 2
        )
        result.check(
            "peak memory of B", Double(runs.map(\.joined.maxResidentBytes).max()!) / 1_048_576, atMost: 256, unit: "MiB"
        )
        return result
    }

    /// One join by `client`, then the floor: a `cp` of A's file, each after the disk was flushed and with as much
    /// memory backed by the host as it writes (``Floors/backPageCache(like:)``).
    private func measure(_ context: BenchContext, joining client: BenchClient, big: BigDocument) throws -> Run {
        // Both copies start from files in the page cache, so that neither waits for the disk to read: the last
        // joins' writes may have pushed either file out.
        let wholeStore = try wholeStoreFile(in: URL(fileURLWithPath: client.remote))
        try Floors.readThrough(wholeStore)
        try Floors.flushWrites()  // what was written before would otherwise be written back during the join
        try Floors.backPageCache(like: wholeStore)
        context.log("\(client.name) joins: opens its store from the whole store, then syncs")
        let joined = try client.run("join")
        guard joined["join.rows"] == Double(context.sizes.bigDocumentRows) else {
            throw BenchError("\(client.name)'s store does not hold the document")
        }
        try Floors.readThrough(big.a.db)
        try Floors.flushWrites()
        try Floors.backPageCache(like: big.a.db)
        context.log("floor: cp of A's database file")
        let copied = big.root.appendingPathComponent("copy.sqlite")
        let copy = try Floors.copySeconds(big.a.db, to: copied)
        let copySync = try ChildProcess.mustRun(["sync", copied.path]).seconds
        try? FileManager.default.removeItem(at: copied)
        return Run(joined: joined, copy: copy, copySync: copySync)
    }

    private func remove(_ client: BenchClient) {
        for suffix in ["", "-wal", "-shm", ".helper"] {
            try? FileManager.default.removeItem(atPath: client.db.path + suffix)
        }
    }

    private func wholeStoreFile(in remote: URL) throws -> URL {
        let files = FileManager.default.enumerator(at: remote, includingPropertiesForKeys: nil)
        while let url = files?.nextObject() as? URL {
            if url.lastPathComponent == "WholeStore.ticdsync" { return url }
        }
        throw BenchError("A uploaded no whole store")
    }
}
