import FolderSync
import Foundation

/// Scenarios 1 and 4: A writes rows and updates them, B syncs everything, through a folder or over WebDAV.
///
/// FolderSync's time is end to end from "A has written" to "B has everything": A's sync (stage and publish)
/// plus B's sync (download, verify, apply). The floor is what moving that data costs at the least: inserting
/// the final rows into a fresh SQLite file in one transaction, plus copying the published change-set bytes
/// (`cp` for a folder, `curl` PUTs for WebDAV).
struct BulkSyncScenario: Scenario {
    enum Transport: Sendable { case folder, webDAV }

    let transport: Transport
    var number: String { transport == .folder ? "1" : "4" }
    var title: String {
        transport == .folder ? "Bulk sync through a local folder" : "Bulk sync over WebDAV (127.0.0.1)"
    }

    /// One run: the workers' figures and the floor measured right after them.
    private struct Run {
        var writer: WorkerOutput
        var reader: WorkerOutput
        var bytes: Int64
        var insert: Double
        var transfer: Double
        var folderSync: Double { writer["publish.seconds"] + reader["apply.seconds"] }
        var floor: Double { insert + transfer }
        var ratio: Double { folderSync / floor }
    }

    func run(_ context: BenchContext) async throws -> ScenarioResult {
        if transport == .webDAV && context.webDAVURL == nil {
            return ScenarioResult(
                status: "missing",
                note: "no WebDAV server: run scripts/bench, which starts one (or set FOLDERSYNC_BENCH_WEBDAV)")
        }
        var result = ScenarioResult()
        let rows = context.sizes.bulkRows
        let values = context.sizes.bulkUpdatedValues
        result.note = "\(rows) rows × 10 columns, then \(values) column values updated"
        var runs: [Run] = []
        for index in 1...context.sizes.bulkRuns {
            if context.sizes.bulkRuns > 1 { context.log("run \(index) of \(context.sizes.bulkRuns)") }
            runs.append(try await measure(context, folder: "bulk-\(number)-run\(index)"))
        }
        // Each run's ratio pairs FolderSync with a floor measured seconds later, so a slow spell of the shared
        // machine moves both; the run with the median ratio is reported.
        let median = runs.sorted { $0.ratio < $1.ratio }[runs.count / 2]
        result.figure("A: write rows (app, not timed as sync)", median.writer["write.seconds"], "s")
        result.figure("A: update values (app, not timed as sync)", median.writer["update.seconds"], "s")
        result.figure("A: sync (stage and publish)", median.writer["publish.seconds"], "s")
        result.figure("B: sync (download, verify, apply)", median.reader["apply.seconds"], "s")
        result.figure("FolderSync end to end", median.folderSync, "s")
        result.figure("change-set bytes published", Double(median.bytes), "B")
        result.figure("change sets published", median.writer["publish.changeSetsSent"], "")
        result.figure("floor: SQLite insert, one transaction", median.insert, "s")
        result.figure(
            transport == .folder ? "floor: cp of the change sets" : "floor: curl PUT of the change sets",
            median.transfer, "s")
        result.figure("floor", median.floor, "s")
        result.figure("B: idle sync", median.reader["idle.seconds"], "s")
        if runs.count > 1 {
            for (index, run) in runs.enumerated() {
                result.figure("run \(index + 1): end to end / floor", run.ratio, "×")
            }
        }
        result.check(
            runs.count > 1 ? "end to end / floor (median of \(runs.count) runs)" : "end to end / floor",
            // round two raised the folder's 3× (issue 23)
            median.ratio, atMost: transport == .folder ? 1.5 : 2)
        result.check(
            "peak memory of A", Double(runs.map(\.writer.maxResidentBytes).max()!) / 1_048_576, atMost: 256, unit: "MiB"
        )
        result.check(
            "peak memory of B", Double(runs.map(\.reader.maxResidentBytes).max()!) / 1_048_576, atMost: 256, unit: "MiB"
        )
        result.check(
            "requests of an idle sync (2 + 0 clients with new data)", runs.map { $0.reader["idle.requests"] }.max()!,
            atMost: 2, unit: "")
        result.check(
            "change sets read by an idle sync", runs.map { $0.reader["idle.changeSetReads"] }.max()!, atMost: 0,
            unit: "")
        return result
    }

    /// One end-to-end sync, then its floor, in a folder of its own (removed afterwards).
    private func measure(_ context: BenchContext, folder: String) async throws -> Run {
        let root = try context.folder(folder)
        defer { try? FileManager.default.removeItem(at: root) }
        let document = "bulk-\(UUID().uuidString.prefix(8))"
        let remoteLocation: String
        switch transport {
        case .folder:
            remoteLocation = root.appendingPathComponent("remote").path
            try FileManager.default.createDirectory(atPath: remoteLocation, withIntermediateDirectories: true)
        case .webDAV:
            remoteLocation = context.webDAVURL!
        }
        let (writer, reader) = try Self.endToEnd(context, root: root, remote: remoteLocation, document: document)
        let floor = try await Self.floor(
            context, root: root, remote: remoteLocation, document: document, transport: transport)
        return Run(writer: writer, reader: reader, bytes: floor.bytes, insert: floor.insert, transfer: floor.transfer)
    }

    /// The floor of the end-to-end sync just measured in `root`: the change-set bytes A published, the plain SQLite
    /// insert of the final rows, and the transfer of those bytes (`cp`, or `curl` PUTs).
    static func floor(
        _ context: BenchContext, root: URL, remote remoteLocation: String, document: String,
        transport: Transport
    ) async throws -> (bytes: Int64, insert: Double, transfer: Double) {
        context.log("floor: plain SQLite insert and \(transport == .folder ? "cp" : "curl PUT") of the change sets")
        let remote = try openRemote(remoteLocation)
        let layout = try RemoteLayout(applicationIdentifier: BenchSchema.applicationIdentifier)
        let files = try await Floors.fetch(
            layout.syncChangesDirectory(document, client: "A"), from: remote,
            into: root.appendingPathComponent("changes"))
        let bytes = files.reduce(0) { $0 + Floors.fileSize($1) }
        let rows = context.sizes.bulkRows
        let insert = try Floors.plainInsertSeconds(
            schema: .items, rows: rows, version: context.sizes.bulkUpdatedValues / 10 / rows,
            at: root.appendingPathComponent("floor.sqlite"))
        let transfer: Double
        switch transport {
        case .folder:
            transfer = try Floors.copySeconds(
                root.appendingPathComponent("changes"), to: root.appendingPathComponent("changes-copy"))
        case .webDAV:
            let folder = "bench-floor-\(UUID().uuidString.prefix(8))"
            try await remote.createDirectory(at: try RemotePath(folder))
            transfer = try Floors.curlPutSeconds(
                files,
                to: remoteLocation.hasSuffix("/") ? remoteLocation + folder + "/" : remoteLocation + "/" + folder + "/")
            try await remote.remove(try RemotePath(folder))
        }
        return (bytes, insert, transfer)
    }

    /// A registers, writes and updates the rows and syncs; B joins and syncs them all. The workers' figures.
    /// With `readingOnPool`, B's store is a pool and an app's view refreshes while B applies (`apply.read…`
    /// figures), then as often with no sync running (`idleReads.read…`): scenario 12.
    static func endToEnd(
        _ context: BenchContext, root: URL, remote: String, document: String,
        password: String? = nil, readingOnPool: Bool = false
    ) throws -> (writer: WorkerOutput, reader: WorkerOutput) {
        let a = BenchClient("A", in: root, remote: remote, document: document, schema: .items, password: password)
        let b = BenchClient(
            "B", in: root, remote: remote, document: document, schema: .items, password: password, pool: readingOnPool)
        let rows = context.sizes.bulkRows
        let values = context.sizes.bulkUpdatedValues
        context.log("A and B register")
        _ = try a.run("sync:register")
        _ = try b.run("sync:join")
        context.log("A writes \(rows) rows, updates \(values) values, syncs")
        let writer = try a.run("write,update,sync:publish", rows: rows, updatedValues: values)
        context.log(readingOnPool ? "B syncs while its app reads" : "B syncs")
        let reader = try b.run(
            readingOnPool ? "sync-reading:apply,reads:idleReads" : "sync:apply,sync:idle", rows: rows)
        guard reader["apply.changesApplied"] == Double(rows) else {
            throw BenchError("B applied \(Int(reader["apply.changesApplied"])) changes, expected \(rows)")
        }
        return (writer, reader)
    }
}
