import FolderSyncTesting
import Foundation
import Testing

@testable import TestSupport

/// Issue 20, outages: the shared folder goes away for stretches of steps (an empty mount point, the folder moved
/// away, a server that does not answer) while clients keep writing, syncing and relaunching. Every sync meanwhile
/// says `remoteUnavailable` and changes nothing, nothing is written into the folder, no outage ends in a reset,
/// and every replica converges with no write lost once the folder is back.
@Suite("Simulator outages")
struct SimulatorOutageTests {
    @Test("Simulated clients across outages converge and lose no write (in-memory adapter and remote)")
    func outages() async {
        let first: UInt64 = 900_001
        let summary = await SimulatorTests.simulate(
            first..<first + 300, test: "outages", remote: .inMemory,
            makeStore: ConvergenceSimulator.inMemoryStore, steps: 60...120,
            suite: "SimulatorOutageTests"
        ) { $0.outages = true }
        print(Self.describe(summary, "outage seeds"))
        if SimulatorTests.checksCoverage {
            #expect(
                summary.steps > 10_000 && summary.outages > 100 && summary.unavailableSyncs > 500
                    && summary.restarts > 0)
        }
    }

    @Test(
        "Outages among the document lifecycle (wipes, deletions, vacuums, whole stores) on SQLite and a folder on disk")
    func outagesWithLifecycle() async {
        let first: UInt64 = 910_001
        let summary = await SimulatorTests.simulate(
            first..<first + 60, test: "outagesWithLifecycle", remote: .fileManager,
            makeStore: GRDBSimulatorStore.factory, lifecycle: true, steps: 40...80,
            suite: "SimulatorOutageTests"
        ) { $0.outages = true }
        print(
            SimulatorLifecycleTests.describe(summary, "lifecycle outage seeds")
                + "; \(summary.outages) outages, \(summary.unavailableSyncs) unavailable syncs")
        if SimulatorTests.checksCoverage {
            #expect(summary.outages > 0 && summary.unavailableSyncs > 0 && summary.wipes > 0 && summary.rejoins > 0)
        }
    }

    static func describe(_ s: ConvergenceSimulator.Summary, _ what: String) -> String {
        SimulatorTests.describe(s, what) + "; \(s.outages) outages, \(s.unavailableSyncs) syncs found the folder away"
    }
}
