import Foundation
import Testing
import FolderSyncTesting

@Test func simulatorProbe() async throws {
    let clock = ContinuousClock()
    let start = clock.now
    let s = await SimulatorTests.simulate(1...20, test: "probe", remote: .inMemory, makeStore: ConvergenceSimulator.inMemoryStore)
    print(SimulatorTests.describe(s, "in-memory x20"), clock.now - start)
    let start2 = clock.now
    let g = await SimulatorTests.simulate(1...10, test: "probe", remote: .fileManager, makeStore: GRDBSimulatorStore.factory)
    print(SimulatorTests.describe(g, "grdb x10"), clock.now - start2)
}
