import FolderSync
import FolderSyncTesting
import Foundation
import Testing

@testable import TestSupport

/// Seeded lifecycle simulations with churn (notes inserted and deleted again and again) and tombstone collection
/// (<doc:TombstoneCollection>), on SQLite stores and a file-manager remote, under both delete policies: replicas
/// converge and no committed write is lost with tombstones collected on the way.
///
/// Replay one seed with `FOLDERSYNC_SEED=<seed> swift test --filter SimulatorTombstoneTests`.
@Suite("Simulator tombstone collection")
struct SimulatorTombstoneTests {
    static let seeds: UInt64 = 30
    /// Seeds of a wider sweep (`FOLDERSYNC_SEED_OFFSET` 30 to 180) that lost a delete or left replicas apart after
    /// wipes, until a re-join forgot the old epoch's tombstone horizon and collection awaited the old epoch's devices.
    static let wipeRegressionSeeds: [(seed: UInt64, policy: DeletePolicy)] = [
        (410_095, .deleteWins), (420_037, .lastWriterWins), (420_045, .lastWriterWins), (420_128, .lastWriterWins),
        (420_171, .lastWriterWins),
    ]

    static func run(_ seed: UInt64, deletePolicy: DeletePolicy) async throws -> ConvergenceSimulator.Summary {
        let directory = ScratchDirectory(seed: seed)
        var configuration = ConvergenceSimulator.Configuration(seed: seed, directory: directory.url)
        configuration.remote = .fileManager
        configuration.makeStore = GRDBSimulatorStore.factory(deletePolicy: deletePolicy)
        configuration.deletePolicy = deletePolicy
        configuration.lifecycle = true
        configuration.churn = true
        configuration.steps = 40...80
        return try await ConvergenceSimulator(configuration).run()
    }

    @Test(
        "Churned documents converge and lose no write while tombstones are collected",
        arguments: [DeletePolicy.deleteWins, .lastWriterWins])
    func churn(deletePolicy: DeletePolicy) async {
        let first: UInt64 = deletePolicy == .deleteWins ? 410_001 : 420_001
        var total = ConvergenceSimulator.Summary()
        var failures = 0
        for seed in SimulatorTests.seeds(Array(first..<first + Self.seeds)) {
            do {
                total = total + (try await Self.run(seed, deletePolicy: deletePolicy))
            } catch {
                failures += 1
                Issue.record("\(error)\nreplay: FOLDERSYNC_SEED=\(seed) swift test --filter 'SimulatorTombstoneTests'")
                if failures >= 3 { break }
            }
        }
        print(
            SimulatorLifecycleTests.describe(total, "churn seeds (\(deletePolicy))")
                + "; \(total.deletes) deletes, \(total.tombstonesCollected) tombstones collected by explicit collections"
        )
        if failures == 0 && SimulatorTests.replaySeed == nil {
            #expect(total.deletes > 0 && total.tombstonesCollected > 0, "the churn collected nothing")
        }
    }

    @Test("Churned schedules that once lost a delete or diverged after wipes converge and lose nothing")
    func wipeRegressions() async throws {
        var ran = 0
        for (seed, policy) in Self.wipeRegressionSeeds where SimulatorTests.replaySeed.map({ $0 == seed }) ?? true {
            _ = try await Self.run(seed, deletePolicy: policy)
            ran += 1
        }
        #expect(ran == Self.wipeRegressionSeeds.count || SimulatorTests.replaySeed != nil)
    }
}
