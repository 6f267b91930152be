public import Foundation

/// A hybrid-logical-clock timestamp: wall-clock milliseconds plus a counter, packed in 64 bits.
///
/// Timestamps order sync changes without trusting wall clocks to agree: a
/// client whose clock runs behind still produces timestamps greater than
/// everything it has seen (see `HybridLogicalClock`). The packing
/// (`milliseconds << 16 | counter`) makes the order a plain integer comparison
/// and the stored form a single `UInt64`.
public struct HybridTimestamp: Comparable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The largest representable milliseconds value (48 bits: far beyond the year 10000).
    public static let maximumMilliseconds: UInt64 = (1 << 48) - 1

    /// The earliest timestamp; no event carries it.
    public static let zero = HybridTimestamp(rawValue: 0)

    /// `milliseconds << 16 | counter`.
    public let rawValue: UInt64

    /// A timestamp from its packed form (`milliseconds << 16 | counter`), as stored in files and databases.
    public init(rawValue: UInt64) {
        self.rawValue = rawValue
    }

    /// - Precondition: `milliseconds` fits in 48 bits.
    public init(milliseconds: UInt64, counter: UInt16) {
        precondition(milliseconds <= Self.maximumMilliseconds, "HybridTimestamp milliseconds exceed 48 bits")
        self.rawValue = milliseconds << 16 | UInt64(counter)
    }

    /// Milliseconds since 1970 (physical time, possibly advanced by the clock to stay monotonic).
    public var milliseconds: UInt64 { rawValue >> 16 }

    /// Orders events within one millisecond.
    public var counter: UInt16 { UInt16(truncatingIfNeeded: rawValue) }

    public static func < (lhs: HybridTimestamp, rhs: HybridTimestamp) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(UInt64.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// The wall-clock time in UTC and the counter, e.g. `2024-05-29T16:26:40.000Z#3` (as `foldersync inspect` shows
    /// it).
    public var description: String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000)) + "#\(counter)"
    }
}

/// A hybrid logical clock (Kulkarni et al., 2014) issuing this client's timestamps.
///
/// Each new timestamp is strictly greater than the previous one and than every
/// remote timestamp observed, whatever the wall clock says: a clock set back by
/// days only stops physical time from advancing the timestamps until it catches up.
/// Public so that other ``ModelAdapter`` implementations stamp writes exactly like ``GRDBStore``.
@_spi(ModelAdapter) @_spi(Tooling) public struct HybridLogicalClock: Sendable {
    /// The greatest timestamp issued or observed.
    public var last: HybridTimestamp

    /// A clock that will issue timestamps greater than `last`; pass the newest stored stamp when reopening a store.
    public init(last: HybridTimestamp = .zero) {
        self.last = last
    }

    /// The timestamp of a new local event: strictly greater than ``last``
    /// (except at the 48-bit ceiling, reached only through a hostile timestamp, where it saturates).
    public mutating func tick(now: Date) -> HybridTimestamp {
        let physical = Self.milliseconds(of: now)
        if physical > last.milliseconds {
            last = HybridTimestamp(milliseconds: physical, counter: 0)
        } else if last.counter < UInt16.max {
            last = HybridTimestamp(milliseconds: last.milliseconds, counter: last.counter + 1)
        } else if last.milliseconds < HybridTimestamp.maximumMilliseconds {
            // Counter exhausted within one millisecond: borrow the next millisecond.
            last = HybridTimestamp(milliseconds: last.milliseconds + 1, counter: 0)
        }
        return last
    }

    /// Takes a received timestamp into account, so the next ``tick(now:)`` is greater than it.
    public mutating func observe(_ remote: HybridTimestamp) {
        if remote > last { last = remote }
    }

    /// How far ahead of this device's wall clock another device's timestamp may be: one day (a wrong time zone is
    /// at most 14 hours). Beyond it one of the two clocks is wrong, and the sync says so with a
    /// ``SyncWarning/Kind/clockSkew`` naming the other device. The change is applied as stamped, on every device
    /// alike, so replicas converge whatever their clocks, and this clock follows it as a hybrid clock does (a device
    /// whose clock runs behind must catch up, or its writes would lose to everything for ever). What the bound
    /// cannot undo: writes made before a device saw the far-ahead timestamps lose to them.
    public static let maximumDrift: TimeInterval = 86_400

    /// The greatest timestamp within ``maximumDrift`` of `now`.
    public static func driftLimit(now: Date) -> HybridTimestamp {
        HybridTimestamp(milliseconds: milliseconds(of: now.addingTimeInterval(maximumDrift)), counter: .max)
    }

    /// Wall-clock milliseconds since 1970, clamped to the representable range (a clock before 1970 counts as 0).
    static func milliseconds(of date: Date) -> UInt64 {
        let value = (date.timeIntervalSince1970 * 1000).rounded(.down)
        guard value > 0 else { return 0 }
        guard value < Double(HybridTimestamp.maximumMilliseconds) else { return HybridTimestamp.maximumMilliseconds }
        return UInt64(value)
    }
}

/// The last-writer-wins order of writes: hybrid timestamp first, the writing client's identifier as the tiebreak.
public struct ChangeStamp: Comparable, Hashable, Sendable {
    /// When the write happened, by the writer's hybrid clock.
    public var timestamp: HybridTimestamp
    /// The client that wrote; breaks ties between equal timestamps.
    public var clientIdentifier: String

    /// The stamp of a write made at `timestamp` by client `clientIdentifier`.
    public init(timestamp: HybridTimestamp, clientIdentifier: String) {
        self.timestamp = timestamp
        self.clientIdentifier = clientIdentifier
    }

    public static func < (lhs: ChangeStamp, rhs: ChangeStamp) -> Bool {
        if lhs.timestamp != rhs.timestamp { return lhs.timestamp < rhs.timestamp }
        return lhs.clientIdentifier < rhs.clientIdentifier
    }
}
