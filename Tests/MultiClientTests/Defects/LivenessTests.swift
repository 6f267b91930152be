import FolderSyncTesting
import Foundation
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// Defect found from outside (issue 19, item 2): an idle sync never rewrote its recent sync, so "last sync" froze at
/// the last sync that sent something, and client expiry deleted devices that sync every minute.
@Suite("Client liveness")
struct LivenessTests {
    /// A clock the test moves; every client and the vacuum read it.
    final class TestClock: Sendable {
        let now = Locked(Fixture.date)
        func advance(_ seconds: TimeInterval) { now.withLock { $0 = $0.addingTimeInterval(seconds) } }
        var environment: SyncEnvironment {
            var environment = Fixture.quietEnvironment()
            environment.now = { self.now.current }
            return environment
        }
    }

    @Test(
        "Devices that sync with nothing new stay alive for vacuum's expiry; a silent one expires; idle syncs within the heartbeat write nothing"
    )
    func heartbeat() async throws {
        let directory = TemporaryDirectory()
        let clock = TestClock()
        let remote = InMemoryFileSystem(now: { clock.now.current })
        let a = try await TestClient.make(remote, name: "A", in: directory, environment: clock.environment)
        let b = try await TestClient.make(remote, name: "B", in: directory, environment: clock.environment)
        let quiet = try await TestClient.make(remote, name: "Q", in: directory, environment: clock.environment)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'the only write')")
        try await converge(a, b, quiet)

        // Two days of syncing every 10 minutes with nothing new; Q stays silent.
        var writesWithinHeartbeat = 0
        for _ in 0..<(2 * 24 * 6) {
            clock.advance(600)
            for client in [a, b] {
                let before = await remote.operationCounts["write", default: 0]
                let report = try await client.sync()
                #expect(report.isIdle)
                if await remote.operationCounts["write", default: 0] > before { writesWithinHeartbeat += 1 }
            }
        }
        // One marker write per client per heartbeat (an hour): 2 clients × 48 hours, not one per sync.
        #expect(writesWithinHeartbeat == 2 * 48, "\(writesWithinHeartbeat) marker writes")

        let listed = try await a.document.documentMaintenance().registeredClients()
        for client in listed where client.identifier != "client-Q" {
            let age = try #require(client.lastSyncDate.map { clock.now.current.timeIntervalSince($0) })
            #expect(age <= RecentSync.heartbeatInterval, "\(client.identifier) looks \(age) s silent")
        }
        let report = try await a.document.vacuum(dryRun: true, expireClientsAfter: VacuumOperation.minimumClientExpiry)
        #expect(report.expiredClients == ["client-Q"])
    }

    @Test("Expiry shorter than a day is refused by the library and by foldersync, naming the limit")
    func shortExpiryRefused() async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let a = try await TestClient.make(remote, name: "A", in: directory)
        try await a.sync()
        await #expect { try await a.document.vacuum(dryRun: true, expireClientsAfter: 3) } throws: {
            ($0 as? FolderSyncError)?.code == .invalidConfiguration
        }
        for short in ["3s", "15s", "23h"] {
            let result = try await FoldersyncTool.run([
                "vacuum", "--remote", remote.rootURL.path, "--dry-run", "--expire-clients-after", short,
            ])
            #expect(result.status == 2 && result.errors.contains("'\(short)' is too short"), "\(result)")
        }
        let allowed = try await FoldersyncTool.run([
            "vacuum", "--remote", remote.rootURL.path, "--dry-run", "--expire-clients-after", "1d",
        ])
        #expect(allowed.status == 0, "\(allowed)")
    }
}
