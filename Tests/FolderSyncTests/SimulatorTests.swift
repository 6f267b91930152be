import Foundation
import Testing
import FolderSync
import FolderSyncTesting

/// Seeded multi-client simulations (invariants 1 and 2). Replay one seed with `FOLDERSYNC_SEED=<seed>`.
@Suite("Simulator")
struct SimulatorTests {
    /// `FOLDERSYNC_SEED=1234` runs only that seed in each simulation test.
    static let replaySeed: UInt64? = ProcessInfo.processInfo.environment["FOLDERSYNC_SEED"].flatMap { UInt64($0) }

    /// Runs `seeds` (or only the replay seed), recording one issue per failing seed with a replay line.
    static func simulate(_ seeds: some Sequence<UInt64>, test: String, remote: ConvergenceSimulator.Remote,
                         makeStore: @escaping ConvergenceSimulator.StoreFactory) async -> ConvergenceSimulator.Summary {
        var total = ConvergenceSimulator.Summary()
        var failures = 0
        for seed in replaySeed.map({ [$0] }) ?? Array(seeds) {
            let directory = ScratchDirectory(seed: seed)
            var configuration = ConvergenceSimulator.Configuration(seed: seed, directory: directory.url)
            configuration.remote = remote
            configuration.makeStore = makeStore
            do {
                total = total + (try await ConvergenceSimulator(configuration).run())
            } catch {
                failures += 1
                Issue.record("\(error)\nreplay: FOLDERSYNC_SEED=\(seed) swift test --filter 'SimulatorTests/\(test)'")
                if failures >= 3 { break }
            }
        }
        return total
    }

    static func describe(_ s: ConvergenceSimulator.Summary, _ what: String) -> String {
        "\(what): \(s.steps) steps, \(s.writes) writes, \(s.syncs) syncs (\(s.duplicatedSyncs) duplicated, "
            + "\(s.interruptedSyncs) cancelled), \(s.restarts) restarts, \(s.conflicts) conflicts, "
            + "\(s.refusedReinserts) refused re-inserts, \(s.finalRows) rows at the end"
    }
}

/// A folder for one simulation, on tmpfs when there is one (the simulator fsyncs a lot and tests nothing about disks).
final class ScratchDirectory {
    let url: URL

    init(seed: UInt64) {
        let shm = URL(fileURLWithPath: "/dev/shm", isDirectory: true)
        let base = FileManager.default.isWritableFile(atPath: shm.path) ? shm : URL(fileURLWithPath: NSTemporaryDirectory())
        url = base.appendingPathComponent("FolderSyncSimulator-\(seed)-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}
