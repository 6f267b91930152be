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
    var title: String { transport == .folder ? "Bulk sync through a local folder" : "Bulk sync over WebDAV (127.0.0.1)" }

    func run(_ context: BenchContext) async throws -> ScenarioResult {
        var result = ScenarioResult()
        let sizes = context.sizes
        let root = try context.folder("bulk-\(number)")
        let document = "bulk-\(UUID().uuidString.prefix(8))"
        let remoteLocation: String
        switch transport {
        case .folder:
            remoteLocation = root.appendingPathComponent("remote").path
            try FileManager.default.createDirectory(atPath: remoteLocation, withIntermediateDirectories: true)
        case .webDAV:
            guard let url = context.webDAVURL else {
                return ScenarioResult(status: "missing", note: "no WebDAV server: run scripts/bench, which starts one (or set FOLDERSYNC_BENCH_WEBDAV)")
            }
            remoteLocation = url
        }
        let rows = sizes.bulkRows, values = sizes.bulkUpdatedValues
        result.note = "\(rows) rows × 10 columns, then \(values) column values updated"
        let (writer, reader) = try Self.endToEnd(context, root: root, remote: remoteLocation, document: document)
        let folderSync = writer["publish.seconds"] + reader["apply.seconds"]

        context.log("floor: plain SQLite insert and \(transport == .folder ? "cp" : "curl PUT") of the change sets")
        let remote = try openRemote(remoteLocation)
        let layout = try RemoteLayout(applicationIdentifier: BenchSchema.applicationIdentifier)
        let files = try await Floors.fetch(layout.syncChangesDirectory(document, client: "A"), from: remote, into: root.appendingPathComponent("changes"))
        let bytes = files.reduce(0) { $0 + Floors.fileSize($1) }
        let insert = try Floors.plainInsertSeconds(schema: .items, rows: rows, version: values / 10 / rows, at: root.appendingPathComponent("floor.sqlite"))
        let transfer: Double
        switch transport {
        case .folder:
            transfer = try Floors.copySeconds(root.appendingPathComponent("changes"), to: root.appendingPathComponent("changes-copy"))
        case .webDAV:
            let folder = "bench-floor-\(UUID().uuidString.prefix(8))"
            try await remote.createDirectory(at: try RemotePath(folder))
            transfer = try Floors.curlPutSeconds(files, to: remoteLocation.hasSuffix("/") ? remoteLocation + folder + "/" : remoteLocation + "/" + folder + "/")
            try await remote.remove(try RemotePath(folder))
        }
        let floor = insert + transfer

        result.figure("A: write rows (app, not timed as sync)", writer["write.seconds"], "s")
        result.figure("A: update values (app, not timed as sync)", writer["update.seconds"], "s")
        result.figure("A: sync (stage and publish)", writer["publish.seconds"], "s")
        result.figure("B: sync (download, verify, apply)", reader["apply.seconds"], "s")
        result.figure("FolderSync end to end", folderSync, "s")
        result.figure("change-set bytes published", Double(bytes), "B")
        result.figure("change sets published", writer["publish.changeSetsSent"], "")
        result.figure("floor: SQLite insert, one transaction", insert, "s")
        result.figure(transport == .folder ? "floor: cp of the change sets" : "floor: curl PUT of the change sets", transfer, "s")
        result.figure("floor", floor, "s")
        result.figure("B: idle sync", reader["idle.seconds"], "s")
        result.check("end to end / floor", folderSync / floor, atMost: transport == .folder ? 3 : 2)
        result.check("peak memory of A", Double(writer.maxResidentBytes) / 1_048_576, atMost: 256, unit: "MiB")
        result.check("peak memory of B", Double(reader.maxResidentBytes) / 1_048_576, atMost: 256, unit: "MiB")
        result.check("requests of an idle sync (2 + 0 clients with new data)", reader["idle.requests"], atMost: 2, unit: "")
        result.check("change sets read by an idle sync", reader["idle.changeSetReads"], atMost: 0, unit: "")
        return result
    }

    /// A registers, writes and updates the rows and syncs; B joins and syncs them all. The workers' figures.
    static func endToEnd(_ context: BenchContext, root: URL, remote: String, document: String,
                         password: String? = nil) throws -> (writer: WorkerOutput, reader: WorkerOutput) {
        let a = BenchClient("A", in: root, remote: remote, document: document, schema: .items, password: password)
        let b = BenchClient("B", in: root, remote: remote, document: document, schema: .items, password: password)
        let rows = context.sizes.bulkRows, values = context.sizes.bulkUpdatedValues
        context.log("A and B register")
        _ = try a.run("sync:register")
        _ = try b.run("sync:join")
        context.log("A writes \(rows) rows, updates \(values) values, syncs")
        let writer = try a.run("write,update,sync:publish", rows: rows, updatedValues: values)
        context.log("B syncs")
        let reader = try b.run("sync:apply,sync:idle")
        guard reader["apply.changesApplied"] == Double(rows) else {
            throw BenchError("B applied \(Int(reader["apply.changesApplied"])) changes, expected \(rows)")
        }
        return (writer, reader)
    }
}
