import Foundation

/// How often and how patiently a request is tried again after a transient failure.
///
/// Timeouts, lost connections, 5xx answers (but 501, 505 and 507), 423 and 429
/// are retried up to ``maximumAttempts`` times with exponential backoff and
/// jitter; a `Retry-After` header lengthens the wait. ``sleep`` and
/// ``random`` are injectable so tests check the schedule without waiting.
public struct WebDAVRetryPolicy: Sendable {
    /// Attempts in all, the first included. 1 turns retries off.
    public var maximumAttempts: Int
    /// The wait before the second attempt; each later wait doubles it.
    public var initialDelay: Duration
    /// The longest backoff wait.
    public var maximumDelay: Duration
    /// The longest wait a server's `Retry-After` may ask for; a longer request is capped.
    public var maximumRetryAfter: Duration
    /// Waits between attempts. Tests pass one that records and returns at once.
    public var sleep: @Sendable (Duration) async throws -> Void
    /// A random number in `0..<1`, for jitter.
    public var random: @Sendable () -> Double

    /// A policy; the defaults try four times, waiting from 250 ms up to 20 s, and honour `Retry-After` up to 60 s.
    /// - Parameters:
    ///   - maximumAttempts: Attempts in all, the first included; values below 1 count as 1.
    ///   - initialDelay: The wait before the second attempt.
    ///   - maximumDelay: The longest backoff wait.
    ///   - maximumRetryAfter: The longest wait a `Retry-After` header may ask for.
    ///   - sleep: Waits between attempts; `Task.sleep` by default.
    ///   - random: Returns a number in `0..<1` for jitter.
    public init(
        maximumAttempts: Int = 4,
        initialDelay: Duration = .milliseconds(250),
        maximumDelay: Duration = .seconds(20),
        maximumRetryAfter: Duration = .seconds(60),
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.maximumAttempts = max(1, maximumAttempts)
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.maximumRetryAfter = maximumRetryAfter
        self.sleep = sleep
        self.random = random
    }

    /// No retries at all.
    public static var none: WebDAVRetryPolicy { WebDAVRetryPolicy(maximumAttempts: 1) }

    /// The wait before attempt `attempt + 1` (attempt counts from 1): full backoff plus up to 50 % jitter,
    /// or the server's `Retry-After` when that is longer.
    func delay(afterAttempt attempt: Int, retryAfter: Duration?) -> Duration {
        let exponent = min(attempt - 1, 20)
        var backoff = initialDelay * (1 << exponent)
        if backoff > maximumDelay { backoff = maximumDelay }
        let jittered = backoff + backoff * (random() * 0.5)
        guard let retryAfter else { return jittered }
        return max(jittered, min(retryAfter, maximumRetryAfter))
    }

    /// Parses `Retry-After`: delay seconds or an HTTP date.
    static func retryAfter(_ value: String?, now: Date = Date()) -> Duration? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let seconds = Int(value) { return .seconds(max(0, seconds)) }
        guard let date = HTTPDate.parse(value) else { return nil }
        return .milliseconds(max(0, Int(date.timeIntervalSince(now) * 1000)))
    }
}
