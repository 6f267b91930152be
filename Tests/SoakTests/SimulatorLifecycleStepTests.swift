import Foundation
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import FolderSyncTesting
@testable import TestSupport

/// Each lifecycle step of the simulator does what it claims, on a small fixed run (3 clients, SQLite, file-manager
/// remote).
@Suite("Simulator lifecycle steps")
struct SimulatorLifecycleStepTests {
    /// A run set up with three joined clients that each wrote a note and synced.
    private func run(_ seed: UInt64, in directory: ScratchDirectory) async throws -> SimulationRun {
        var configuration = ConvergenceSimulator.Configuration(seed: seed, directory: directory.url)
        configuration.clients = 3...3
        configuration.remote = .fileManager
        configuration.makeStore = GRDBSimulatorStore.factory
        configuration.lifecycle = true
        let run = SimulationRun(configuration)
        try await run.setUp()
        while !run.waiting.isEmpty { try await run.join() }
        for client in run.clients {
            try client.store.insert(
                table: "notes", syncID: "note-\(client.index)",
                values: ["title": .text("t"), "body": .null, "folder_id": .null])
            try await run.sync(client, resetAllowed: false)
        }
        return run
    }

    private func finish(_ run: SimulationRun) async throws {
        try await run.finish()
        try run.checkInvariants()
    }

    private var layout: RemoteLayout {
        get throws { try RemoteLayout(applicationIdentifier: SimulatedClient.application) }
    }

    private func changeSets(_ run: SimulationRun) async throws -> Int {
        let directory = try layout.syncChangesDirectory(SimulatedClient.document)
        var count = 0
        for folder in try await run.remote!.contentsOfDirectoryIfPresent(at: directory) where folder.kind == .directory
        {
            count += try await run.remote!.contentsOfDirectoryIfPresent(at: directory.appending(folder.name)).count
        }
        return count
    }

    @Test("The whole-store step uploads a store (and downloads one) that a late joiner bootstraps from")
    func wholeStoreAndLateJoin() async throws {
        let directory = ScratchDirectory(seed: 1)
        let run = try await run(1, in: directory)
        for client in run.clients { try await run.sync(client, resetAllowed: false) }
        while run.summary.wholeStoreUploads == 0 || run.summary.wholeStoreInstalls == 0 {
            try await run.transferWholeStore(run.clients[0])
        }
        let uploader = run.clients[0].identifier
        #expect(
            try await run.remote!.item(at: layout.wholeStoreFile(SimulatedClient.document, client: uploader)) != nil)
        // A client joining late starts from the store.
        let late = try SimulatedClient(
            index: 9, folder: directory.url.appendingPathComponent("late"), now: run.time.clock(skew: 0),
            remote: run.remote!, resolvesConflicts: false, configuration: run.configuration)
        late.usesWholeStores = true
        run.waiting.append(late)
        try await run.join()
        let report = try await late.synchronize()
        #expect(report.installedWholeStore != nil)
        try await finish(run)
    }

    @Test("The vacuum step removes change sets every client has applied once a whole store contains them")
    func vacuumRemovesChangeSets() async throws {
        let directory = ScratchDirectory(seed: 2)
        let run = try await run(2, in: directory)
        for client in run.clients { try await run.sync(client, resetAllowed: false) }
        _ = try await run.clients[0].document!.uploadWholeStore()
        for client in run.clients { try await run.sync(client, resetAllowed: false) }
        let before = try await changeSets(run)
        try await run.vacuum(run.clients[1])
        #expect(run.summary.vacuums == 1 && run.summary.changeSetsVacuumed > 0)
        #expect(try await changeSets(run) < before)
        try await finish(run)
    }

    @Test(
        "The client-deletion step writes the marker; the client stops with clientDeleted, keeps its writes and re-joins"
    )
    func clientDeletion() async throws {
        let directory = ScratchDirectory(seed: 3)
        let run = try await run(3, in: directory)
        let target = run.clients[2]
        try await run.deleteClient(target)
        #expect(
            try await run.remote!.item(
                at: layout.deletedClientFile(SimulatedClient.document, client: target.identifier)) != nil)
        try target.store.insert(
            table: "notes", syncID: "unpublished", values: ["title": .text("kept"), "body": .null, "folder_id": .null])
        try await run.settleResets()
        #expect(run.summary.resets == 1 && run.summary.rejoins == 1 && target.reset == nil)
        try await finish(run)
        #expect(try run.clients[0].store.allRows().contains { $0.syncID == "unpublished" })
    }

    @Test("The wipe step removes the tree; every client stops with a reset, keeps its data and a backup, and re-joins")
    func wipe() async throws {
        let directory = ScratchDirectory(seed: 4)
        let run = try await run(4, in: directory)
        try await run.wipeRemote()
        #expect(run.summary.wipes == 1)
        #expect(try await run.remote!.item(at: layout.documentInfoFile(SimulatedClient.document)) == nil)
        for client in run.clients { #expect(!client.expectedResets.isEmpty) }
        // noteReset checks the code, the backup and the untouched data; settling re-joins everyone.
        try await run.settleResets()
        #expect(run.summary.resets == 3 && run.summary.rejoins == 3)
        try await finish(run)
        #expect(try run.clients[0].store.allRows().count == 3)
    }

    @Test("A low upload threshold uploads whole stores and vacuums inside ordinary syncs")
    func automaticUploads() async throws {
        let directory = ScratchDirectory(seed: 5)
        let run = try await run(5, in: directory)
        let client = run.clients[0]
        client.document!.policy.wholeStoreUploadAfterChangeSets = 1
        try client.store.insert(table: "tags", syncID: "tag-x", values: ["name": .text("x")])
        try await run.sync(client, resetAllowed: false)
        #expect(run.summary.automaticWholeStoreUploads > 0)
        try await finish(run)
    }
}
