import FolderSync
import Foundation
import GRDB
import GRDBSQLite

/// Scenario 14 (issue 41): one large value in an app's column costs about its size, end to end.
///
/// A writes a `largeValueBytes` value into a `BLOB` column (streamed, as an app holding a large file writes it:
/// `zeroblob` then SQLite's incremental I/O), syncs; B syncs and reads the value's first bytes, as a list does. Each
/// step is a process of its own, so that its peak memory is its own. Targets: every step's peak memory at most twice
/// the value plus 64 MiB, and each sync at most three times a `cp` of the value made durable (`sync FILE`): a sync
/// makes every file it writes durable, which a bare `cp` into the page cache does not.
struct LargeValueScenario: Scenario {
    let number = "14"
    let title = "A large value in an app's column"

    static let fixedAllowance = Double(64 << 20)

    func run(_ context: BenchContext) async throws -> ScenarioResult {
        let bytes = context.sizes.largeValueBytes
        let root = try context.folder("large-value")
        defer { try? FileManager.default.removeItem(at: root) }
        let remote = root.appendingPathComponent("remote", isDirectory: true)
        try FileManager.default.createDirectory(at: remote, withIntermediateDirectories: true)
        var result = ScenarioResult()
        result.note = "one \(bytes >> 20) MiB value: written, synced by A, synced and listed by B"

        // The floor: cp of a file of the same bytes, made durable as a sync makes what it writes (`sync FILE`,
        // an fsync), after the machine's pending writes went out.
        let source = root.appendingPathComponent("value.bin")
        let copy = root.appendingPathComponent("copy.bin")
        try LargeValueWorker.writeValue(to: source, bytes: bytes)
        try Floors.flushWrites()
        let cp = try ChildProcess.mustRun(["sh", "-c", "cp \"$0\" \"$1\" && sync \"$1\"", source.path, copy.path])
            .seconds
        try? FileManager.default.removeItem(at: copy)
        result.figure("cp of the value, synced to disk", cp, "s")

        let steps: [(client: String, step: String, isSync: Bool)] = [
            ("A", "write", false), ("A", "sync", true), ("B", "sync", true),
            ("B", "list", false),
        ]
        for (client, step, isSync) in steps {
            context.log("\(client) \(step)")
            try Floors.flushWrites()
            let output = try ChildProcess.worker([
                "large", "--db", root.appendingPathComponent("\(client).sqlite").path,
                "--remote", remote.path, "--client", client, "--bytes", "\(bytes)", "--step", step,
            ])
            let name = "\(client) \(step)"
            result.figure("\(name): time", output["seconds"], "s")
            result.figure("\(name): peak memory", Double(output.maxResidentBytes), "bytes")
            result.check(
                "\(name): peak memory / (2 × value + 64 MiB)",
                Double(output.maxResidentBytes) / (2 * Double(bytes) + Self.fixedAllowance), atMost: 1)
            if isSync {
                result.figure("\(name): the sync alone", output["syncSeconds"], "s")
                result.check("\(name): the sync's time / cp of the value", output["syncSeconds"] / cp, atMost: 3)
            }
            if step == "list", output["prefixBytes"] != 64 {
                throw BenchError("B listed \(output["prefixBytes"]) bytes, not 64")
            }
        }
        return result
    }
}

/// `foldersync-bench worker large --db PATH --remote DIR --client ID --bytes N --step write|sync|list`: one step of
/// scenario 14 in a process of its own.
enum LargeValueWorker {
    static let createSQL = "CREATE TABLE IF NOT EXISTS files(id TEXT PRIMARY KEY NOT NULL, name TEXT, data BLOB)"

    static func run(_ arguments: [String]) async throws {
        let options = try WorkerOptions(arguments)
        let path = try options.require("db")
        let bytes = try options.int("bytes")
        let store = try GRDBStore(path: path, tables: [SyncedTable("files")]) { try $0.execute(sql: createSQL) }
        var output = WorkerOutput()
        let started = ContinuousClock.now
        switch try options.require("step") {
        case "write":
            try await store.database.write { db in
                try db.execute(
                    sql: "INSERT INTO files(id, name, data) VALUES ('big', 'value.bin', zeroblob(?))",
                    arguments: [bytes])
                try writeValue(into: db, rowid: db.lastInsertedRowID, bytes: bytes)
            }
        case "sync":
            let manager = try await registerClient(
                store: store, remote: try openRemote(try options.require("remote")),
                client: try options.require("client"), document: "large",
                helper: URL(fileURLWithPath: path + ".helper"), manualPolicy: true)
            let phases =
                ProcessInfo.processInfo.environment["FOLDERSYNC_BENCH_PHASES"] != nil
                ? Worker.tracePhases(manager, try options.require("client")) : nil
            let syncStarted = ContinuousClock.now  // the sync alone: registration is not a sync's cost
            let report = try await manager.synchronize()
            phases?.cancel()
            output.figures["syncSeconds"] = (ContinuousClock.now - syncStarted).seconds
            output.figures["changesSent"] = Double(report.changesSent)
            output.figures["changesApplied"] = Double(report.changesApplied)
        case "list":
            let prefix = try await store.database.read { db in
                try GRDBStore.valuePrefix(db, table: "files", column: "data", key: "big", maxBytes: 64)
            }
            guard let prefix, prefix.byteCount == bytes else {
                throw BenchError("the value is not \(bytes) bytes here")
            }
            output.figures["prefixBytes"] = Double(prefix.prefix.count)
        default:
            throw BenchError("unknown step")
        }
        output.figures["seconds"] = (ContinuousClock.now - started).seconds
        print(String(decoding: try JSONEncoder().encode(output), as: UTF8.self))
    }

    /// The value's bytes at `offset`: varied (they do not compress), the same in every run.
    static func chunk(_ offset: Int, count: Int) -> [UInt8] {
        var state = UInt64(truncatingIfNeeded: offset) &* 0x9E37_79B9_7F4A_7C15 | 1
        return (0..<count).map { _ in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(truncatingIfNeeded: state)
        }
    }

    static let chunkSize = 1 << 20

    /// Writes the value into the row's `data`, a MiB at a time, through SQLite's incremental I/O.
    static func writeValue(into db: Database, rowid: Int64, bytes: Int) throws {
        var blob: OpaquePointer?
        guard sqlite3_blob_open(db.sqliteConnection, "main", "files", "data", rowid, 1, &blob) == SQLITE_OK else {
            throw BenchError("cannot open the value for writing")
        }
        defer { sqlite3_blob_close(blob) }
        for offset in stride(from: 0, to: bytes, by: chunkSize) {
            let piece = chunk(offset, count: min(chunkSize, bytes - offset))
            guard sqlite3_blob_write(blob, piece, Int32(piece.count), Int32(offset)) == SQLITE_OK else {
                throw BenchError("cannot write the value")
            }
        }
    }

    /// The same bytes into a file, for the `cp` floor.
    static func writeValue(to url: URL, bytes: Int) throws {
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        let file = try FileHandle(forWritingTo: url)
        defer { try? file.close() }
        for offset in stride(from: 0, to: bytes, by: chunkSize) {
            try file.write(contentsOf: chunk(offset, count: min(chunkSize, bytes - offset)))
        }
    }
}
