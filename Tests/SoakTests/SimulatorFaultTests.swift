import FolderSyncTesting
import Foundation
import Testing

@testable import TestSupport

/// The simulator's seeds under each fault mix (FaultMix.all): half-written uploads, lagging listings, vanishing
/// files, "name (1)" copies, ENOSPC, EACCES, EIO, and all at once, with clocks a day off on some clients as in
/// every simulation. Syncs may fail with the injected error; after the final rounds without faults, replicas
/// converge and no committed write is lost. `FOLDERSYNC_SEED=<seed>` replays one seed under every mix.
@Suite("Simulator under faults")
struct SimulatorFaultTests {
    static let seedsPerMix: UInt64 = 25

    @Test(
        "Simulated clients converge and lose no write under each fault mix (in-memory adapter and remote)",
        arguments: FaultMix.all)
    func inMemory(mix: FaultMix) async throws {
        let summary = await Self.simulate(
            mix, seeds: 300_000..<(300_000 + Self.seedsPerMix), makeStore: ConvergenceSimulator.inMemoryStore)
        #expect(!summary.faultsInjected.isEmpty, "no fault was injected under \(mix)")
        print(
            "\(mix): \(SimulatorTests.describe(summary, "in-memory seeds")); \(summary.faultedSyncs) syncs failed under faults; injected \(summary.faultsInjected.sorted { $0.key < $1.key })"
        )
    }

    @Test("SQLite stores with the whole-store lifecycle converge under every fault at once")
    func sqliteLifecycle() async throws {
        let everything = FaultMix.all.last!
        let summary = await Self.simulate(
            everything, seeds: 310_000..<310_010, makeStore: GRDBSimulatorStore.factory, lifecycle: true)
        #expect(!summary.faultsInjected.isEmpty)
        print(
            "\(everything), SQLite lifecycle: \(SimulatorTests.describe(summary, "seeds")); \(summary.faultedSyncs) syncs failed under faults"
        )
    }

    static func simulate(
        _ mix: FaultMix, seeds: Range<UInt64>, makeStore: @escaping ConvergenceSimulator.StoreFactory,
        lifecycle: Bool = false
    ) async -> ConvergenceSimulator.Summary {
        var total = ConvergenceSimulator.Summary()
        for seed in SimulatorTests.seeds(seeds) {
            let directory = ScratchDirectory(seed: seed)
            var configuration = ConvergenceSimulator.Configuration(seed: seed, directory: directory.url)
            configuration.makeStore = makeStore
            configuration.lifecycle = lifecycle
            configuration.faults = mix
            do {
                total = total + (try await ConvergenceSimulator(configuration).run())
            } catch {
                Issue.record(
                    "\(mix): \(error)\nreplay: FOLDERSYNC_SEED=\(seed) swift test --filter SimulatorFaultTests")
            }
        }
        #expect(total.steps > 0 && total.syncs > 0, "the seeds of \(mix) did nothing")
        return total
    }
}
