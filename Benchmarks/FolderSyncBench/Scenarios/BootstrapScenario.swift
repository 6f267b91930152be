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
        context.log("B joins")
        let joined = try big.b.run("sync:bootstrap")
        guard joined["bootstrap.installedWholeStore"] == 1 else { throw BenchError("B did not install the whole store") }
        try Floors.flushWrites()
        context.log("floor: cp of A's database file")
        let copied = big.root.appendingPathComponent("copy.sqlite")
        let copy = try Floors.copySeconds(big.a.db, to: copied)
        // For comparison only: the copy made durable, as an install must be (`sync FILE` fsyncs it).
        let durable = try ChildProcess.mustRun(["sync", copied.path]).seconds
        try? FileManager.default.removeItem(at: copied)

        result.figure("document file", Double(size), "B")
        result.figure("B: first sync (download, verify, install)", joined["bootstrap.seconds"], "s")
        result.figure("whole-store file (compressed)", Double(wholeStoreSize(in: big.root)), "B")
        result.figure("floor: cp of the database file", copy, "s")
        result.figure("for comparison: fsync of that copy", durable, "s")
        result.check("bootstrap / cp", joined["bootstrap.seconds"] / copy, atMost: 2)
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
