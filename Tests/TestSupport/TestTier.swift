import Foundation

/// How much the seeded tests run: `FOLDERSYNC_TEST_SCALE` times their CI counts, at least one. `scripts/test` runs 1
/// (CI's counts); `scripts/test --quick` 0.05, every test at a few seeds and kills. Seeds are never more than a
/// test's CI range (more seeds are new rounds: `scripts/soak`, `FOLDERSYNC_SEED_OFFSET`); kills are. Every seeded
/// test also checks that its seeds did work, so that a run of nothing cannot pass.
enum TestTier {
    static let scale: Double = ProcessInfo.processInfo.environment["FOLDERSYNC_TEST_SCALE"].flatMap(Double.init) ?? 1

    /// `count` at this tier's scale, at least 1.
    static func count(_ count: Int) -> Int { max(1, Int((Double(count) * scale).rounded())) }
}
