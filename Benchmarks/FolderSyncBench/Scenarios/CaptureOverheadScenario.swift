@_spi(ModelAdapter) import FolderSync
import Foundation
import GRDB

/// Scenario 7: what change capture adds to the app's own writes.
///
/// The same app code (scenario 1's: prepared statements, values made as it goes) writes the same rows of the same
/// schema twice: into a ``GRDBStore``, whose triggers record every change in the app's transaction, and into a
/// plain GRDB database opened as the store opens its file (WAL, `synchronous = FULL`), so that capture is the only
/// difference. Four workloads in turn, each timed on both databases back to back (which goes first alternates
/// from run to run): bulk inserts, column updates, deletes, then single-row transactions as an interactive app
/// makes them, each committed (and fsynced) on its own. The median ratio of the runs is judged.
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
            Workload(name: "insert \(rows) rows × 10 columns", target: 1.5) {
                try Worker.write($0, schema: .items, rows: rows)
            },
            Workload(name: "update \(sizes.bulkUpdatedValues) column values", target: 2) {
                try Worker.update($0, rows: rows, values: sizes.bulkUpdatedValues)
            },
            Workload(name: "delete \(deletes) rows", target: 1.5) { try Self.delete($0, rows: deletes) },
            Workload(name: "\(transactions) single-row transactions", target: 1.3) {
                try Self.singleRowTransactions($0, count: transactions, rows: rows)
            },
        ]
        var result = ScenarioResult()
        result.note =
            "the same app code with FolderSync's capture (GRDBStore) and on a plain GRDB database (WAL, synchronous = FULL)"
            + (sizes.bulkRuns > 1 ? "; median of \(sizes.bulkRuns) runs" : "")
        var times = [[(captured: Double, plain: Double)]](repeating: [], count: workloads.count)
        for run in 1...sizes.bulkRuns {
            if sizes.bulkRuns > 1 { context.log("run \(run) of \(sizes.bulkRuns)") }
            let root = try context.folder("capture-run\(run)")
            defer { try? FileManager.default.removeItem(at: root) }
            let store = try BenchSchema.items.openStore(root.appendingPathComponent("captured.sqlite").path)
            let plain = try Self.openPlain(root.appendingPathComponent("plain.sqlite").path)
            for (index, workload) in workloads.enumerated() {
                context.log(workload.name)
                // Alternating which goes first, so that neither always pays for the other's write-back.
                var captured = 0.0
                var uncaptured = 0.0
                for capturing in run % 2 == 1 ? [true, false] : [false, true] {
                    try Floors.flushWrites()
                    let started = ContinuousClock.now
                    try workload.run(capturing ? store.database : plain as any DatabaseWriter)
                    let seconds = (ContinuousClock.now - started).seconds
                    if capturing { captured = seconds } else { uncaptured = seconds }
                }
                times[index].append((captured, uncaptured))
            }
            guard try store.hasUnpublishedChanges() else { throw BenchError("the store captured no change") }
            try store.database.close()
            try plain.close()
        }
        for (index, workload) in workloads.enumerated() {
            let median = times[index].sorted { $0.captured / $0.plain < $1.captured / $1.plain }[times[index].count / 2]
            result.figure("\(workload.name): with capture", median.captured, "s")
            result.figure("\(workload.name): plain GRDB", median.plain, "s")
            if times[index].count > 1 {
                for (run, time) in times[index].enumerated() {
                    result.figure("\(workload.name): run \(run + 1)", time.captured / time.plain, "×")
                }
            }
            result.check(
                "\(workload.name): with capture / plain", median.captured / median.plain, atMost: workload.target)
        }
        return result
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
