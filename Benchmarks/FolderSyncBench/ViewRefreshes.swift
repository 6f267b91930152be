import FolderSync
import Foundation
import GRDB

/// An app's view refreshing while the app works (scenario 12): one indexed query per refresh, a screenful of rows
/// from a random place by primary key, each a read of its own on the store's database, one every `interval` (a
/// view refreshes at a display's pace, not in a busy loop), on a thread of its own. Records each read's latency.
final class ViewRefreshes: @unchecked Sendable {
    private let lock = NSLock()
    private var latencies: [Double] = []
    private var stopping = false
    private let finished = DispatchSemaphore(value: 0)
    /// Whether the refreshes end by themselves, after a count of them.
    private let counted: Bool

    /// Starts refreshing: until ``stop()``, or `count` times when given (``stop()`` then waits for them).
    init(_ store: GRDBStore, schema: BenchSchema, rows: Int, count: Int? = nil, interval: Duration = .milliseconds(5))
        throws
    {
        counted = count != nil
        let database = store.database
        let sql = "SELECT * FROM \(schema.rawValue) WHERE id >= ? ORDER BY id LIMIT 20"
        let pause = useconds_t(
            interval.components.attoseconds / 1_000_000_000_000 + interval.components.seconds * 1_000_000)
        Thread { [self] in
            var generator = SystemRandomNumberGenerator()
            var done = 0
            while lock.withLock({ !stopping }) && done < (count ?? .max) {
                let key = BenchSchema.rowID(Int.random(in: 0..<max(1, rows), using: &generator))
                let started = ContinuousClock.now
                let fetched = try? database.read { db in
                    try Row.fetchAll(db.cachedStatement(sql: sql), arguments: [key]).count
                }
                let seconds = (ContinuousClock.now - started).seconds
                // A read that failed counts as one that never answered (JSON has no infinity).
                lock.withLock { latencies.append(fetched == nil ? Latencies.failed : seconds) }
                done += 1
                usleep(pause)
            }
            finished.signal()
        }.start()
    }

    /// Stops refreshing (after `count` refreshes, when given) and returns the latencies.
    func stop() -> Latencies {
        if !counted { lock.withLock { stopping = true } }
        finished.wait()
        return Latencies(seconds: lock.withLock { latencies })
    }
}

/// Latencies of reads, in seconds, and the figures a worker reports of them.
struct Latencies {
    var seconds: [Double]
    /// The latency recorded for a read that failed.
    static let failed = 1e9

    /// The `fraction` quantile (0.99: the 99th percentile), by the nearest rank.
    func quantile(_ fraction: Double) -> Double {
        guard !seconds.isEmpty else { return Self.failed }
        let sorted = seconds.sorted()
        return sorted[min(sorted.count - 1, max(0, Int((fraction * Double(sorted.count)).rounded(.up)) - 1))]
    }

    func figures(_ label: String) -> [String: Double] {
        [
            "\(label).reads": Double(seconds.count), "\(label).readP50": quantile(0.5),
            "\(label).readP99": quantile(0.99),
            "\(label).readMax": seconds.max() ?? Self.failed,
        ]
    }
}
