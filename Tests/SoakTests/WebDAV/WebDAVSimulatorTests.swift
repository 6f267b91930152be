@_spi(Tooling) import FolderSync
import FolderSyncTesting
import Testing

@testable import TestSupport

/// The convergence simulator through each real WebDAV server, on the seeds the file-manager runs use.
@Suite("Simulator through WebDAV servers")
struct WebDAVSimulatorTests {
    /// Seeds of `SimulatorTests.grdbOnFileManagerRemote` (SQLite stores, 3–8 clients, syncs interrupted at a random
    /// request, restarts), played through the standard managers over HTTP. FOLDERSYNC_SEED replays one.
    @Test(
        "Simulated clients converge through the server on the file-manager runs' seeds",
        arguments: WebDAVTestServers.names)
    func simulatedClientsConverge(_ server: String) async throws {
        let seeds: ClosedRange<UInt64> = 100_001...100_016
        var summary = ConvergenceSimulator.Summary()
        for seed in SimulatorTests.seeds(seeds) {
            let scratch = ScratchDirectory(seed: seed)
            let remote = try await WebDAVTestServers.fileSystem(server, test: "seed\(seed)")
            var configuration = ConvergenceSimulator.Configuration(seed: seed, directory: scratch.url)
            configuration.remote = .custom(remote)
            configuration.makeStore = GRDBSimulatorStore.factory
            do {
                summary = summary + (try await ConvergenceSimulator(configuration).run())
            } catch {
                Issue.record("\(error)\nreplay: FOLDERSYNC_SEED=\(seed) swift test --filter WebDAVSimulatorTests")
            }
        }
        print(SimulatorTests.describe(summary, "\(server) seeds \(seeds)"))
        #expect(summary.syncs > 0)
    }
}
