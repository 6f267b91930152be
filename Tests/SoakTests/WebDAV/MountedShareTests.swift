@_spi(Tooling) import FolderSync
import FolderSyncTesting
import Foundation
import Testing

@testable import TestSupport

/// The file-manager backend on the wsgidav share mounted with `rclone mount` (FUSE, write cache on: uploads
/// land after the writes return, the delayed visibility a mounted share has). A machine that cannot mount
/// records why, as a known issue: never a silent pass.
@Suite("File-manager backend on a mounted WebDAV share", .serialized)
struct MountedShareTests {
    @Test("Simulated clients converge through an rclone mount of the wsgidav share, on the file-manager runs' seeds")
    func simulatedClientsConverge() async throws {
        let directory = TemporaryDirectory()
        let mount = try RcloneMount(
            share: try WebDAVTestServers.url("wsgidav"), at: directory.subdirectory("mount"),
            log: directory.url.appendingPathComponent("rclone.log"))
        defer { mount.unmount() }
        if let failure = mount.failure {
            withKnownIssue("this machine cannot mount the WebDAV share, so the mounted-share run did not run") {
                Issue.record("precondition: \(failure)")
            }
            return
        }
        var summary = ConvergenceSimulator.Summary()
        let seeds: ClosedRange<UInt64> = 100_001...100_016
        for seed in SimulatorTests.seeds(seeds) {
            let scratch = ScratchDirectory(seed: seed)
            let root = mount.mountPoint.appendingPathComponent(
                "seed-\(seed)-\(UUID().uuidString.prefix(8))", isDirectory: true)
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            var configuration = ConvergenceSimulator.Configuration(seed: seed, directory: scratch.url)
            configuration.remote = .custom(FileManagerFileSystem(rootURL: root))
            configuration.makeStore = GRDBSimulatorStore.factory
            do {
                summary = summary + (try await ConvergenceSimulator(configuration).run())
            } catch {
                Issue.record("\(error)\nreplay: FOLDERSYNC_SEED=\(seed) swift test --filter MountedShareTests")
            }
        }
        print(SimulatorTests.describe(summary, "rclone-mounted wsgidav seeds \(seeds)"))
        #expect(summary.syncs > 0)
    }
}
