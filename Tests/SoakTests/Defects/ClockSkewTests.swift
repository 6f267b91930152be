import FolderSyncTesting
import Foundation
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// Safety defect found by reading the code (issue 24, item 6): clock skew had no bound and no warning, and the
/// fault tests went only to a day.
@Suite("Clocks years apart")
struct ClockSkewTests {
    static let fiveYears: TimeInterval = 5 * 365 * 86_400

    @Test(
        "A change stamped years ahead is reported with clockSkew naming its author, applied as stamped, and a later write still wins"
    )
    func warning() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        var ahead = Fixture.quietEnvironment()
        ahead.now = { Date().addingTimeInterval(Self.fiveYears) }
        let future = try await TestClient.make(remote, name: "F", in: directory, environment: ahead)
        let present = try await TestClient.make(remote, name: "P", in: directory)
        try future.execute("INSERT INTO notes(id, title) VALUES ('n1', 'from the future')")
        try await future.sync()
        let report = try await present.sync()
        let warning = try #require(report.warnings.first { $0.kind == .clockSkew })
        #expect(warning.message.contains("client-F"), "\(warning)")
        #expect(try present.value("SELECT title FROM notes WHERE id = 'n1'") == "from the future")
        // The present device's clock followed the far-ahead stamp, so its next write of the column wins everywhere.
        try present.execute("UPDATE notes SET title = 'edited after' WHERE id = 'n1'")
        try await converge(present, future)
        #expect(try future.value("SELECT title FROM notes WHERE id = 'n1'") == "edited after")
    }

    @Test(
        "Simulated clients with clocks years apart converge and lose no write (in memory and with the lifecycle on SQLite)",
        arguments: [false, true])
    func yearsApart(lifecycle: Bool) async {
        let first: UInt64 = lifecycle ? 700_001 : 700_501
        let summary = await SimulatorTests.simulate(
            first..<first + 40, test: "yearsApart", remote: lifecycle ? .fileManager : .inMemory,
            makeStore: lifecycle ? GRDBSimulatorStore.factory : ConvergenceSimulator.inMemoryStore,
            lifecycle: lifecycle, steps: lifecycle ? 25...50 : nil, suite: "ClockSkewTests",
            clockSkews: [0, Self.fiveYears, -Self.fiveYears, 3 * 86_400])
        if SimulatorTests.checksCoverage {
            #expect(summary.syncs > 0 && summary.writes > 0 && summary.conflicts > 0)
            #expect(summary.clockSkewWarnings > 0, "no sync met a clock years apart")
        }
    }
}
