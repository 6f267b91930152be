/// SplitMix64: a tiny, fast, seeded generator, so that a simulation seed replays the same schedule on every platform.
///
/// The helpers below avoid the standard library's `random(in:using:)`, whose
/// algorithm is not promised to stay the same across Swift versions.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose whole sequence is determined by `seed`.
    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `range` (multiply-shift: unbiased enough for scheduling, and stable).
    public mutating func int(_ range: ClosedRange<Int>) -> Int {
        let width = UInt64(range.upperBound - range.lowerBound + 1)
        return range.lowerBound + Int(next().multipliedFullWidth(by: width).high)
    }

    /// `true` with probability `percent` / 100.
    public mutating func chance(_ percent: Int) -> Bool { int(0...99) < percent }

    /// One element of `items` chosen at random, or `nil` when it is empty.
    public mutating func pick<T>(_ items: [T]) -> T? {
        items.isEmpty ? nil : items[int(0...items.count - 1)]
    }
}
