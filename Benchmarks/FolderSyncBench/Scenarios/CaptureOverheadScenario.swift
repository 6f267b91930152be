@_spi(ModelAdapter) import FolderSync
import Foundation
import GRDB
import GRDBSQLite

/// Scenario 7: what change capture adds to the app's own writes.
///
/// The same app code (scenario 1's: prepared statements, values made as it goes) writes the same rows of the same
/// schema twice: into a ``GRDBStore``, whose triggers record every change in the app's transaction, and into a
/// plain GRDB database opened as the store opens its file (WAL, `synchronous = FULL`), so that capture is the only
/// difference. Four workloads in turn, each timed on both databases back to back (which goes first alternates
/// from run to run): bulk inserts, column updates, deletes, then single-row transactions as an interactive app
/// makes them, each committed (and fsynced) on its own. The median ratio of the runs is judged.
///
/// A third database shows the limit the targets are set against (issue 43): the plain one with the store's own
/// triggers, each calling a function that returns at once. What any capture inside the app's transaction pays
/// before it writes anything: the trigger program, the call, the statement journal SQLite keeps for a statement
/// that fires triggers. It is reported, not judged, with how far above it the capture is.
struct CaptureOverheadScenario: Scenario {
    let number = "7"
    let title = "Change-capture overhead of app writes"

    /// One workload: its name, its target and the app code that runs it.
    private struct Workload {
        var name: String
        var target: Double
        var run: (any DatabaseWriter) throws -> Void
    }

    func run(_ context: BenchContext) async throws -> ScenarioResult {
        let sizes = context.sizes
        let rows = sizes.bulkRows
        let deletes = min(sizes.captureDeletes, rows / 2)
        let transactions = sizes.captureTransactions
        let workloads = [
            Workload(name: "insert \(rows) rows × 10 columns", target: 1.75) {
                try Worker.write($0, schema: .items, rows: rows)
            },
            Workload(name: "update \(sizes.bulkUpdatedValues) column values", target: 2) {
                try Worker.update($0, rows: rows, values: sizes.bulkUpdatedValues)
            },
            Workload(name: "delete \(deletes) rows", target: 2) { try Self.delete($0, rows: deletes) },
            Workload(name: "\(transactions) single-row transactions", target: 1.5) {
                try Self.singleRowTransactions($0, count: transactions, rows: rows)
            },
        ]
        var result = ScenarioResult()
        result.note =
            "the same app code with FolderSync's capture (GRDBStore) and on a plain GRDB database (WAL, synchronous = FULL)"
            + (sizes.captureRuns > 1 ? "; median of \(sizes.captureRuns) runs" : "")
        var times = [[Times]](repeating: [], count: workloads.count)
        for run in 1...sizes.captureRuns {
            if sizes.captureRuns > 1 { context.log("run \(run) of \(sizes.captureRuns)") }
            let root = try context.folder("capture-run\(run)")
            defer { try? FileManager.default.removeItem(at: root) }
            let store = try BenchSchema.items.openStore(root.appendingPathComponent("captured.sqlite").path)
            let plain = try Self.openPlain(root.appendingPathComponent("plain.sqlite").path)
            let limit = try Self.openLimit(root.appendingPathComponent("limit.sqlite").path, triggersOf: store)
            let databases: [any DatabaseWriter] = [store.database, plain, limit]
            for (index, workload) in workloads.enumerated() {
                context.log(workload.name)
                // Which goes first turns from run to run, so that none always pays for another's write-back.
                var seconds = [0.0, 0.0, 0.0]
                for turn in 0..<databases.count {
                    let database = (turn + run) % databases.count
                    try Floors.flushWrites()
                    let started = ContinuousClock.now
                    try workload.run(databases[database])
                    seconds[database] = (ContinuousClock.now - started).seconds
                }
                times[index].append(Times(captured: seconds[0], plain: seconds[1], limit: seconds[2]))
            }
            guard try store.hasUnpublishedChanges() else { throw BenchError("the store captured no change") }
            try store.database.close()
            try plain.close()
            try limit.close()
        }
        for (index, workload) in workloads.enumerated() {
            let runs = times[index]
            let median = runs.sorted { $0.ratio < $1.ratio }[runs.count / 2]
            result.figure("\(workload.name): with capture", median.captured, "s")
            result.figure("\(workload.name): plain GRDB", median.plain, "s")
            if runs.count > 1 {
                for (run, time) in runs.enumerated() {
                    result.figure("\(workload.name): run \(run + 1)", time.ratio, "×")
                }
            }
            let limit = runs.map { $0.limit / $0.plain }.sorted()[runs.count / 2]
            result.figure("\(workload.name): limit (triggers calling a function that does nothing) / plain", limit, "×")
            result.figure(
                "\(workload.name): with capture / limit", runs.map { $0.captured / $0.limit }.sorted()[runs.count / 2],
                "×")
            result.check("\(workload.name): with capture / plain", median.ratio, atMost: workload.target)
        }
        return result
    }

    /// One run of a workload on each database, in seconds.
    private struct Times {
        var captured: Double
        var plain: Double
        var limit: Double
        var ratio: Double { captured / plain }
    }

    /// The limit's database: a plain database (``openPlain(_:schema:)``) with the triggers of `store`, whose functions
    /// return at once, defined on its one connection through SQLite's C API as the store defines its own.
    static func openLimit(_ path: String, triggersOf store: GRDBStore) throws -> DatabaseQueue {
        let database = try openPlain(path)
        let triggers = try store.database.read { db in
            try String.fetchAll(db, sql: "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'items'")
        }
        guard triggers.count == 3 else { throw BenchError("the store has \(triggers.count) triggers on items, not 3") }
        try database.writeWithoutTransaction { db in
            for sql in triggers {
                // SELECT "<the function's name>"(…)
                guard let start = sql.range(of: "SELECT \""), let end = sql[start.upperBound...].range(of: "\"(") else {
                    throw BenchError("a capture trigger without its call: \(sql)")
                }
                let name = String(sql[start.upperBound..<end.lowerBound])
                let code = sqlite3_create_function_v2(
                    db.sqliteConnection, name, -1, SQLITE_UTF8, nil, { context, _, _ in sqlite3_result_null(context) },
                    nil, nil, nil)
                guard code == SQLITE_OK else { throw BenchError("cannot define \(name): \(code)") }
                try db.execute(sql: sql)
            }
        }
        return database
    }

    /// A plain GRDB database set up as ``GRDBStore`` sets up its file: WAL, one fsync per commit.
    static func openPlain(_ path: String, schema: BenchSchema = .items) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.journalMode = .wal
        let database = try DatabaseQueue(path: path, configuration: configuration)
        // After opening, as the store does: GRDB's WAL set-up sets `synchronous = NORMAL` after `prepareDatabase`.
        try database.writeWithoutTransaction { try $0.execute(sql: "PRAGMA synchronous = FULL") }
        try database.write { try schema.createPlain($0) }
        return database
    }

    /// Deletes every other row of the first `2 × rows`, in one transaction with one prepared statement.
    static func delete(_ database: any DatabaseWriter, rows: Int) throws {
        try database.write { db in
            let statement = try db.makeStatement(sql: "DELETE FROM items WHERE id = ?")
            for index in 0..<rows { try statement.execute(arguments: [BenchSchema.rowID(2 * index)]) }
        }
    }

    /// `count` transactions of one row each, as an app saving one edit at a time: a new row, then a changed
    /// column of a row that is still there (an odd one: `delete` removed even ones), in turn.
    static func singleRowTransactions(_ database: any DatabaseWriter, count: Int, rows: Int) throws {
        let columns = BenchSchema.itemColumns
        for index in 0..<count {
            try database.write { db in
                if index % 2 == 0 {
                    let row = rows + index
                    try db.execute(
                        sql:
                            "INSERT INTO items(id, \(columns.joined(separator: ", "))) VALUES (?\(String(repeating: ", ?", count: columns.count)))",
                        arguments: StatementArguments(
                            [BenchSchema.rowID(row)]
                                + columns.indices.map { BenchSchema.itemValue(row, column: $0, version: 0) }))
                } else {
                    let row = (2 * index + 1) % rows
                    try db.execute(
                        sql: "UPDATE items SET c3 = ? WHERE id = ?",
                        arguments: [BenchSchema.itemValue(row, column: 3, version: 99), BenchSchema.rowID(row)])
                }
            }
        }
    }
}
