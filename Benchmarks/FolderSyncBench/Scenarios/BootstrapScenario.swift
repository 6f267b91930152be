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
        context.log(String(format: "  write %.1f s, sync %.1f s, whole-store upload %.1f s",
                           output["write.seconds"], output["publish.seconds"], output["upload.seconds"]))
        return BigDocument(root: root, a: a, b: b)
    }
}

/// Scenario 3: a new client joins a big document: whole-store download, verify, install. Floor: `cp` of the file.
///
/// The client joins as a new device does: ``DocumentSyncManager/openStore(at:_:)`` makes its store's file from the
/// whole store before the app opens it (installed by a rename), then its first sync. For comparison, another client
/// installs the same store by its first sync into a new store the app already has open (its pages copied in).
struct BootstrapScenario: Scenario {
    let number = "3"
    let title = "Bootstrap of a new client"

    func run(_ context: BenchContext) async throws -> ScenarioResult {
        var result = ScenarioResult()
        let big = try BigDocument.make(context)
        context.bigDocument = big
        let size = Floors.fileSize(big.a.db)
        result.note = "\(context.sizes.bigDocumentRows) rows, \(String(format: "%.0f", Double(size) / 1_048_576)) MiB SQLite file"
        try Floors.flushWrites()   // A's document and store, just written, would otherwise be written back during B's join
        context.log("B joins: opens its store from the whole store, then syncs")
        let joined = try big.b.run("join")
        guard joined["join.rows"] == Double(context.sizes.bigDocumentRows) else { throw BenchError("B's store does not hold the document") }
        try Floors.flushWrites()
        context.log("floor: cp of A's database file")
        let copied = big.root.appendingPathComponent("copy.sqlite")
        let copy = try Floors.copySeconds(big.a.db, to: copied)
        // For comparison only: the copy made durable, as an install must be (`sync FILE` fsyncs it).
        let durable = try ChildProcess.mustRun(["sync", copied.path]).seconds
        try? FileManager.default.removeItem(at: copied)
        try Floors.flushWrites()
        context.log("for comparison: C's first sync installs the whole store into a store the app has open")
        let c = BenchClient("C", in: big.root, remote: big.b.remote, document: big.b.document, schema: big.b.schema)
        let copiedIn = try c.run("sync:bootstrap")
        guard copiedIn["bootstrap.installedWholeStore"] == 1 else { throw BenchError("C did not install the whole store") }
        for suffix in ["", "-wal", "-shm", ".helper"] { try? FileManager.default.removeItem(atPath: c.db.path + suffix) }

        result.figure("document file", Double(size), "B")
        result.figure("B: store opened from the whole store (download, verify, install by rename)", joined["join.openSeconds"], "s")
        result.figure("B: that and its first sync", joined["join.seconds"], "s")
        result.figure("for comparison: C's first sync into an open store (pages copied in)", copiedIn["bootstrap.seconds"], "s")
        result.figure("whole-store file", Double(wholeStoreSize(in: big.root)), "B")
        result.figure("floor: cp of the database file", copy, "s")
        result.figure("for comparison: fsync of that copy", durable, "s")
        result.check("bootstrap / cp", joined["join.seconds"] / copy, atMost: 2)
        result.check("peak memory of B", Double(joined.maxResidentBytes) / 1_048_576, atMost: 256, unit: "MiB")
        return result
    }

    private func wholeStoreSize(in root: URL) -> Int64 {
        let files = FileManager.default.enumerator(at: root.appendingPathComponent("remote"), includingPropertiesForKeys: nil)
        while let url = files?.nextObject() as? URL {
            if url.lastPathComponent == "WholeStore.ticdsync" { return Floors.fileSize(url) }
        }
        return 0
    }
}
