import FolderSync
public import Foundation

/// The simulation's wall clock: advanced only by the schedule, so every run of a seed sees the same times.
///
/// Each client reads it through its own skew (some clients run a day ahead or
/// behind), which the hybrid logical clocks must absorb.
public final class SimulatedTime: Sendable {
    private let milliseconds: Locked<Int64>

    /// A clock frozen at `start` (2026-01-01 by default) until advanced.
    public init(start: Date = Date(timeIntervalSince1970: 1_767_225_600)) {  // 2026-01-01
        milliseconds = Locked(Int64(start.timeIntervalSince1970 * 1000))
    }

    /// Moves the clock forward by `delta` milliseconds, for every client at once.
    public func advance(byMilliseconds delta: Int64) {
        milliseconds.withLock { $0 += delta }
    }

    /// The clock as a client whose wall clock is off by `skew` seconds sees it.
    public func clock(skew: TimeInterval) -> @Sendable () -> Date {
        { [milliseconds] in Date(timeIntervalSince1970: Double(milliseconds.current) / 1000 + skew) }
    }
}

/// Identifiers that look like UUIDs, numbered per client, so that change-set names replay exactly.
final class IdentifierSource: Sendable {
    private let client: Int
    private let counter = Locked(0)

    init(client: Int) { self.client = client }

    func next() -> String {
        let counter = counter.withLock {
            $0 += 1
            return $0
        }
        let c = String(client, radix: 16, uppercase: true)
        let n = String(counter, radix: 16, uppercase: true)
        return String(repeating: "0", count: 8 - c.count) + c + "-0000-4000-8000-"
            + String(repeating: "0", count: 12 - n.count) + n
    }
}
