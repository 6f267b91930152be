import Foundation
import Testing
import FolderSyncTesting

@Test func simulatorProbe() async throws {
    let env = ProcessInfo.processInfo.environment
    let base = UInt64(env["PROBE_BASE"] ?? "1")!, n = UInt64(env["PROBE_N"] ?? "20")!, g = UInt64(env["PROBE_G"] ?? "10")!
    let clock = ContinuousClock()
    let start = clock.now
    let s = await SimulatorTests.simulate(base..<(base + n), test: "probe", remote: .inMemory, makeStore: ConvergenceSimulator.inMemoryStore)
    print(SimulatorTests.describe(s, "in-memory x\(n)"), clock.now - start)
    let start2 = clock.now
    let r = await SimulatorTests.simulate(base..<(base + g), test: "probe", remote: .fileManager, makeStore: GRDBSimulatorStore.factory)
    print(SimulatorTests.describe(r, "grdb x\(g)"), clock.now - start2)
}
