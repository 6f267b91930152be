import FolderSync
import Foundation

/// Scenario 12: an app's reads while a bulk sync applies, on a `DatabasePool`.
///
/// Scenario 1's data (A writes the rows and updates them, then publishes); B's store is a pool, and while B's sync
/// applies A's change sets an app's view refreshes on another thread: one indexed query each (a screenful of rows
/// by primary key, from a random place), one every 5 ms. Then as many refreshes with no sync running, on the full
/// table. The reads must not wait for the apply (their 99th percentile at most 10 ms, and at most 3× the same reads
/// with no sync), and the apply, reads and all, must still meet scenario 1's target against the same floor.
struct AppReadsScenario: Scenario {
    var number: String { "12" }
    var title: String { "An app's reads on a pool while a bulk sync applies" }

    private struct Run {
        var writer: WorkerOutput
        var reader: WorkerOutput
        var floor: Double
        var endToEnd: Double { writer["publish.seconds"] + reader["apply.seconds"] }
        var ratio: Double { endToEnd / floor }
        var readRatio: Double { reader["apply.readP99"] / max(reader["idleReads.readP99"], 1e-9) }
    }

    func run(_ context: BenchContext) async throws -> ScenarioResult {
        var result = ScenarioResult()
        let rows = context.sizes.bulkRows
        let values = context.sizes.bulkUpdatedValues
        result.note =
            "scenario 1's \(rows) rows × 10 columns and \(values) updated values, B on a DatabasePool while its view refreshes"
        var runs: [Run] = []
        for index in 1...context.sizes.bulkRuns {
            if context.sizes.bulkRuns > 1 { context.log("run \(index) of \(context.sizes.bulkRuns)") }
            let root = try context.folder("app-reads-run\(index)")
            defer { try? FileManager.default.removeItem(at: root) }
            let remote = root.appendingPathComponent("remote").path
            try FileManager.default.createDirectory(atPath: remote, withIntermediateDirectories: true)
            let document = "reads-\(UUID().uuidString.prefix(8))"
            let (writer, reader) = try BulkSyncScenario.endToEnd(
                context, root: root, remote: remote, document: document, readingOnPool: true)
            let floor = try await BulkSyncScenario.floor(
                context, root: root, remote: remote, document: document, transport: .folder)
            runs.append(Run(writer: writer, reader: reader, floor: floor.insert + floor.transfer))
        }
        // As in scenario 1, the run with the median end-to-end ratio is reported; the reads are judged on the
        // median of the runs' figures.
        let median = runs.sorted { $0.ratio < $1.ratio }[runs.count / 2]
        let p99 = runs.map { $0.reader["apply.readP99"] }.sorted()[runs.count / 2]
        let readRatio = runs.map(\.readRatio).sorted()[runs.count / 2]
        result.figure("reads during B's apply", median.reader["apply.reads"], "")
        result.figure("read p50 during the apply", median.reader["apply.readP50"] * 1000, "ms")
        result.figure("read p99 during the apply", median.reader["apply.readP99"] * 1000, "ms")
        result.figure("slowest read during the apply", median.reader["apply.readMax"] * 1000, "ms")
        result.figure("read p50 with no sync", median.reader["idleReads.readP50"] * 1000, "ms")
        result.figure("read p99 with no sync", median.reader["idleReads.readP99"] * 1000, "ms")
        result.figure("A: sync (stage and publish)", median.writer["publish.seconds"], "s")
        result.figure("B: sync (download, verify, apply) on a pool, reads running", median.reader["apply.seconds"], "s")
        result.figure("floor: SQLite insert + cp", median.floor, "s")
        if runs.count > 1 {
            for (index, run) in runs.enumerated() {
                result.figure("run \(index + 1): end to end / floor", run.ratio, "×")
                result.figure("run \(index + 1): read p99 during / without sync", run.readRatio, "×")
            }
        }
        result.check("read p99 during the apply", p99 * 1000, atMost: 10, unit: "ms")
        result.check("read p99 during the apply / without a sync", readRatio, atMost: 3)
        result.check(
            runs.count > 1 ? "end to end / floor (median of \(runs.count) runs)" : "end to end / floor", median.ratio,
            atMost: 1.5)
        return result
    }
}
