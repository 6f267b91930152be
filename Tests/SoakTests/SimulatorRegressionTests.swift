import FolderSyncTesting
import Foundation
import Testing

@_spi(Tooling) @_spi(ModelAdapter) @testable import FolderSync
@testable import TestSupport

@Suite("Simulator regressions")
struct SimulatorRegressionTests {
    @Test("Cancelling the task that awaits synchronize() stops the sync (Simulator regression)")
    func callerCancellationReachesTheSync() async throws {
        let directory = TemporaryDirectory()
        let interruptions = Interruptions()
        let a = try await TestClient.make(interruptions.remote(over: InMemoryFileSystem()), name: "A", in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'Hello')")
        let caller = Locked<Task<SyncReport, any Error>?>(nil)
        interruptions.arm(atRequest: 1, failing: false, cancel: { caller.current?.cancel() })
        let task = Task { try await a.document.synchronize() }
        caller.withLock { $0 = task }
        let result = await task.result
        #expect(interruptions.disarm(), "the armed cancellation did not happen")
        #expect(throws: FolderSyncError.self) { try result.get() }
        #expect(try a.store.hasUnpublishedChanges(), "the cancelled sync published anyway")
        try await a.sync()
        #expect(try a.store.hasUnpublishedChanges() == false)
    }

    /// Seeds `scripts/soak` found failing, once fixed: each replays its whole schedule.
    /// - 1800149: a store restored to a copy taken before a sync that published a set but died before its marker
    ///   numbered its next set as that one, and readers skipped it as applied (RestoredStoreTests).
    /// - 1800058: a row put back by a whole-store install that lacked it lost the registers of its columns not being
    ///   changed (WholeStoreInstallTests.rowPutBackKeepsItsRegisters).
    /// - 3800005: a restored store uploaded a whole store before its first sync, replacing its older store, the only
    ///   copy of a set vacuumed since (RestoredStoreTests).
    /// - 5800035, 5800139: passed before these fixes, and lost writes with an intermediate one (a snapshot claiming
    ///   fewer of its own sets than it held, after a folder restore): kept, since they exercise that claim.
    /// - 1910032 (outages): a re-join stopped by a second reset left syncs saying notRegistered rather than the reset
    ///   (LifecycleRegressionTests.secondResetIsTheAnswer).
    /// - 9800006, 9800150: schedules the simulator should not have played: a store put back below sets its client had
    ///   published, and the folder put back to before them (in either order), so that a write was nowhere, or only in
    ///   a third client's replica, which no restore heals from. The restore steps now check for it.
    /// - 11800033: a sync found its own sets gone from a restored folder, rewrote its marker (the only evidence), then
    ///   was cancelled before saving that it owed a whole store: the sets stayed lost (CarriedChangeSetTests). -
    ///   15800030: a store restored while an expiry had removed its marker never noticed it went back: its own
    ///   published writes never came back to it, though the other clients had applied them
    ///   (RestoredStoreTests.restoredWithoutMarker).
    /// - 19800051: a store restored from a copy holding a change not yet published then, published and overwritten by a
    ///   later write of its own since, put the old value back over the newer one when it installed a whole store
    ///   (RestoredStoreTests.resurrectedChangeLosesToNewerOwnWrite).
    @Test(
        "Seeds the soak found failing replay clean",
        arguments: [
            (seed: UInt64(1_800_149), outages: false), (seed: 1_800_058, outages: false),
            (seed: 3_800_005, outages: false),
            (seed: 5_800_035, outages: false), (seed: 5_800_139, outages: false),
            (seed: 9_800_006, outages: false), (seed: 9_800_150, outages: false), (seed: 11_800_033, outages: false),
            (seed: 15_800_030, outages: false),
            (seed: 19_800_051, outages: false),
            (seed: 1_910_032, outages: true),
        ])
    func fixedSoakFindings(seed: UInt64, outages: Bool) async throws {
        _ = try await Self.replay(seed, outages: outages)
    }

    static func replay(_ seed: UInt64, outages: Bool) async throws -> ConvergenceSimulator.Summary {
        try await SimulatorTests.run(
            seed, remote: .fileManager, makeStore: GRDBSimulatorStore.factory, lifecycle: true,
            steps: 40...80
        ) {
            $0.restores = !outages
            $0.outages = outages
        }
    }
}
