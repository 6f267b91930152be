import Foundation
import Testing

@testable import TestSupport

/// The kill torture (Tests/TestWorker/Torture.swift): 120 SIGKILLs of real client processes writing, syncing, uploading
/// and downloading whole stores and vacuuming on one folder; then no committed write is lost, every replica holds the
/// same rows, and `foldersync doctor` finds the folder healthy. `scripts/torture --kills N` runs more; the test tier
/// scales the count (``TestTier``).
@Suite("Kill torture", .serialized)
struct TortureTests {
    @Test("120 kills at seeded random points lose no committed write and leave equal replicas and a healthy folder")
    func seededKills() async throws {
        let directory = TemporaryDirectory()
        let seed = ProcessInfo.processInfo.environment["FOLDERSYNC_TORTURE_SEED"] ?? "20261122"
        let planned = TestTier.count(120)
        let result = await
            (try ChildProcess(
                "foldersync-test-worker",
                ["torture", "--kills", "\(planned)", "--seed", seed, "--dir", directory.url.path])).finish()
        #expect(result.status == 0, "\(result.output)\n\(result.errors)")
        #expect(
            result.output.contains("lost writes: 0, phantom writes: 0, divergent replicas: 0, client errors: 0"),
            "\(result.output)")
        #expect(result.output.contains("doctor: healthy"))
        let kills =
            result.output.split(separator: "\n").first { $0.hasPrefix("kills: ") }
            .flatMap { Int($0.dropFirst("kills: ".count).prefix { $0.isNumber }) } ?? 0
        #expect(kills >= planned, "\(result.output)")
        print(result.output)  // the figures, for RELIABILITY.md
    }
}
