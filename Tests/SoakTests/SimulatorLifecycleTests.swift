import FolderSync
import FolderSyncTesting
import Foundation
import Testing

@testable import TestSupport

/// Seeded simulations with the document lifecycle (issue 4): whole-store uploads and bootstraps, vacuums and
/// expiry, client deletions, remote wipes and re-joins, on SQLite stores and a file-manager remote.
///
/// Replay one seed with `FOLDERSYNC_SEED=<seed> swift test --filter SimulatorLifecycleTests`;
/// explore others with `FOLDERSYNC_SEED_OFFSET=<n>`.
@Suite("Simulator lifecycle")
struct SimulatorLifecycleTests {
    static let chunks = 2, seedsPerChunk: UInt64 = 70
    /// Shorter schedules than the plain runs: each lifecycle step costs more (snapshots, re-joins).
    static let steps = 25...50
    /// Seeds of the range above that fail, left out until fixed (replaying one runs it anyway). None at present.
    static let failingSeeds: Set<UInt64> = []
    /// Longer schedules (30–70 steps) that lost a write after wipes and re-joins until re-applied unpublished
    /// columns were always recorded as new changes; kept as regression seeds.
    static let rejoinRegressionSeeds: [UInt64] = [300_019, 300_027, 300_158, 300_233, 300_234]

    @Test(
        "Simulated clients with the document lifecycle converge and lose no write (SQLite, file-manager remote)",
        arguments: 0..<chunks)
    func lifecycle(chunk: Int) async {
        let first = 300_000 + UInt64(chunk) * Self.seedsPerChunk + 1
        let summary = await SimulatorTests.simulate(
            first..<first + Self.seedsPerChunk, test: "lifecycle", remote: .fileManager,
            makeStore: GRDBSimulatorStore.factory, lifecycle: true, steps: Self.steps,
            skipping: Self.failingSeeds, suite: "SimulatorLifecycleTests")
        print(
            Self.describe(
                summary,
                "lifecycle seeds \(first + SimulatorTests.seedOffset)..<\(first + SimulatorTests.seedOffset + Self.seedsPerChunk)"
            ))
        if SimulatorTests.checksCoverage {
            // The schedule must really exercise the lifecycle, not only allow it.
            #expect(
                summary.wholeStoreUploads > 0 && summary.automaticWholeStoreUploads > 0
                    && summary.wholeStoreInstalls > 0)
            #expect(summary.vacuums > 0 && summary.changeSetsVacuumed > 0 && summary.expiredClients > 0)
            #expect(summary.clientDeletions > 0 && summary.wipes > 0 && summary.resets > 0 && summary.rejoins > 0)
        }
    }

    @Test("Long schedules that once lost a write after wipes and re-joins converge and lose nothing")
    func rejoinRegressionSeeds() async throws {
        // A re-applied unpublished column equal to the installed store's value was not recorded as a change, so a
        // lower-stamped re-push from another client won. `FOLDERSYNC_SEED=300019` replays one with its trace.
        for seed in Self.rejoinRegressionSeeds where SimulatorTests.replaySeed.map({ $0 == seed }) ?? true {
            _ = try await SimulatorTests.run(
                seed, remote: .fileManager, makeStore: GRDBSimulatorStore.factory, lifecycle: true)
        }
    }

    static func describe(_ s: ConvergenceSimulator.Summary, _ what: String) -> String {
        SimulatorTests.describe(s, what)
            + "; \(s.wholeStoreUploads) explicit and \(s.automaticWholeStoreUploads) automatic "
            + "whole-store uploads, \(s.wholeStoreInstalls) installs, \(s.vacuums) vacuums (\(s.changeSetsVacuumed) change sets, "
            + "\(s.expiredClients) clients expired), \(s.clientDeletions) deletions, \(s.wipes) wipes, \(s.resets) resets, \(s.rejoins) re-joins"
    }
}

/// The lifecycle with restores (issue 24): clients' stores put back to earlier copies of themselves, with and without
/// their helper folders, and the shared folder put back to an earlier copy, among every other lifecycle step.
@Suite("Simulator restores")
struct SimulatorRestoreTests {
    @Test("Simulated clients whose stores and shared folder are restored from backups converge and lose no write")
    func restores() async {
        let first: UInt64 = 800_001
        let summary = await SimulatorTests.simulate(
            first..<first + 100, test: "restores", remote: .fileManager,
            makeStore: GRDBSimulatorStore.factory, lifecycle: true, steps: 40...80,
            suite: "SimulatorRestoreTests"
        ) { $0.restores = true }
        print(
            SimulatorLifecycleTests.describe(summary, "restore seeds")
                + "; \(summary.storeRestores) store restores (\(summary.restoredStoresNoticed) noticed), \(summary.folderRestores) folder restores"
        )
        if SimulatorTests.checksCoverage {
            #expect(summary.storeRestores > 0 && summary.restoredStoresNoticed > 0 && summary.folderRestores > 0)
            #expect(summary.rejoins > 0 && summary.vacuums > 0 && summary.wholeStoreUploads > 0)
        }
    }
}

/// The lifecycle with vacuum hazards (issue 38, items 3, 4 and 8): whole stores damaged in place right after a vacuum
/// verified them, clients deleted right after another client's join met their damaged store, and clocks days apart
/// for expiry (every lifecycle run: the folder dates files by the simulation's time, clients run a day off).
@Suite("Simulator vacuum hazards")
struct SimulatorVacuumHazardTests {
    @Test(
        "Vacuums never remove what only a store damaged in place holds, deletions keep the only store of vacuumed sets, expiry goes by the folder's clock; every seed converges with no write lost"
    )
    func hazards() async {
        let first: UInt64 = 900_001
        let summary = await SimulatorTests.simulate(
            first..<first + 60, test: "hazards", remote: .fileManager,
            makeStore: GRDBSimulatorStore.factory, lifecycle: true, steps: 40...80,
            suite: "SimulatorVacuumHazardTests"
        ) { $0.vacuumHazards = true }
        print(
            SimulatorLifecycleTests.describe(summary, "vacuum hazard seeds")
                + "; \(summary.storesDamagedInPlace) stores damaged in place (\(summary.damagedStoresRefused) read and refused by "
                + "the next vacuum), \(summary.deletionsAfterFailedJoin) deletions after a failed join")
        if SimulatorTests.checksCoverage {
            #expect(
                summary.storesDamagedInPlace > 0 && summary.damagedStoresRefused > 0
                    && summary.deletionsAfterFailedJoin > 0)
            #expect(summary.vacuums > 0 && summary.expiredClients > 0)
        }
    }

    @Test(
        "The same hazards with every safeguard of vacuum and client deletion switched off: what they wrongly remove stays in the removed area, readers heal from it, no write is lost"
    )
    func hazardsWithoutSafeguards() async {
        let first: UInt64 = 910_001
        let summary = await SimulatorTests.simulate(
            first..<first + 60, test: "hazardsWithoutSafeguards", remote: .fileManager,
            makeStore: GRDBSimulatorStore.factory, lifecycle: true, steps: 40...80,
            suite: "SimulatorVacuumHazardTests"
        ) {
            $0.vacuumHazards = true
            $0.disabledSafeguards = Set(RemovalSafeguard.allCases)
        }
        print(
            SimulatorLifecycleTests.describe(summary, "vacuum hazard seeds without safeguards")
                + "; \(summary.storesDamagedInPlace) stores damaged in place, \(summary.removalsOnDamagedStores) vacuums removing on "
                + "their word, \(summary.syncsRecoveredFromRemoved) syncs healed "
                + "from the removed area, \(summary.changeSetsPurged) change sets purged after the grace period")
        if SimulatorTests.checksCoverage {
            #expect(
                summary.removalsOnDamagedStores > 0 && summary.syncsRecoveredFromRemoved > 0
                    && summary.changeSetsPurged > 0)
        }
    }
}

/// The lifecycle with what issue 38 found: a client's store copied to a second computer and used beside the first
/// (with its helper folder or without), one client's change-set folder put back from an older copy, and markers forged
/// to acknowledge another client's sets up to hostile numbers, among every other lifecycle step.
@Suite("Simulator identity hazards")
struct SimulatorIdentityTests {
    @Test(
        "Simulated clients copied to second computers, with folders put back and markers forged, converge and lose no write"
    )
    func identityHazards() async {
        let first: UInt64 = 3_800_001
        let summary = await SimulatorTests.simulate(
            first..<first + 80, test: "identityHazards", remote: .fileManager,
            makeStore: GRDBSimulatorStore.factory, lifecycle: true, steps: 40...80,
            suite: "SimulatorIdentityTests"
        ) { $0.identityHazards = true }
        print(
            SimulatorLifecycleTests.describe(summary, "identity hazard seeds")
                + "; \(summary.clones) copies (\(summary.sharedIdentitiesFound) found the other installation), "
                + "\(summary.clientFolderRestores) client folders put back, \(summary.forgedMarkers) forged markers")
        if SimulatorTests.checksCoverage {
            #expect(
                summary.clones > 0 && summary.sharedIdentitiesFound > 0 && summary.clientFolderRestores > 0
                    && summary.forgedMarkers > 0)
            #expect(summary.rejoins > 0 && summary.wholeStoreUploads > 0)
        }
    }
}
