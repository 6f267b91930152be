import FolderSyncTesting
import Foundation
import GRDB
import Testing

@_spi(Tooling) @_spi(ModelAdapter) @testable import FolderSync
@testable import TestSupport

private func code(of error: any Error) -> FolderSyncError.Code? { (error as? FolderSyncError)?.code }

/// Rewrites a client's recent sync as if it last synced at `date`.
@Suite("Lifecycle with real syncs")
struct LifecycleSyncTests {
    @Test("Vacuum between real syncs never removes a change set someone still needs: clients converge afterwards")
    func vacuumKeepsConvergence() async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let a = try await TestClient.make(remote, name: "A", in: directory)
        let b = try await TestClient.make(remote, name: "B", in: directory)
        let c = try await TestClient.make(remote, name: "C", in: directory)
        for client in [a, b, c] { client.document.policy.acknowledgementDelay = 0 }  // acknowledged by each sync
        let fabricator = try DocumentFabricator(remote)

        try a.execute("INSERT INTO folders VALUES ('f1', 'Work')")
        try await a.sync()
        try await b.sync()
        try b.execute("INSERT INTO notes VALUES ('n1', 'One', 'first', 'f1')")
        try await b.sync()
        try await c.sync()
        try await a.sync()
        try a.execute("INSERT INTO notes VALUES ('n2', 'Two', 'second', 'f1')")
        try await a.sync()
        try await b.sync()
        // A whole store that contains everything published so far (C has not applied A's second set).
        try await fabricator.wholeStore("client-A", covers: ["client-A": 2, "client-B": 1])

        let report = try await b.document.vacuum()
        #expect(
            Set(report.removedChangeSets.map(\.name).map { RemoteLayout.parseChangeSetFileName($0)!.sequence }) == [1])
        #expect(report.removedChangeSets.count == 2, "A's first and B's first set are applied by everyone")
        #expect(report.heldBack["client-C"]?.exclusiveChangeSetCount == 1, "C has not applied A's second set")

        try c.execute("UPDATE notes SET body = 'edited on C' WHERE id = 'n1'")
        try b.execute("INSERT INTO tags VALUES ('t1', 'urgent')")
        try await converge(a, b, c)
        #expect(try NotesSchema.dump(a.store) == NotesSchema.dump(c.store))
        #expect(try NotesSchema.dump(b.store) == NotesSchema.dump(c.store))
        #expect(try c.value("SELECT title FROM notes WHERE id = 'n2'") == "Two")

        // Once everyone caught up, everything covered goes, and syncing on still converges.
        try await fabricator.wholeStore("client-B", covers: ["client-A": 10, "client-B": 10, "client-C": 10])
        let second = try await a.document.vacuum()
        #expect(second.heldBack.isEmpty)
        try a.execute("DELETE FROM tags WHERE id = 't1'")
        try c.execute("INSERT INTO notes VALUES ('n3', 'Three', 'third', 'f1')")
        try await converge(a, b, c)
        #expect(try NotesSchema.dump(a.store) == NotesSchema.dump(b.store))
        #expect(try NotesSchema.dump(a.store) == NotesSchema.dump(c.store))
    }

    @Test(
        "Expiry marks a silent client deleted and removes its recent sync; it gets clientDeleted at its next sync and keeps its data"
    )
    func expiry() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let (a, b) = try await TestClient.pair(remote, in: directory)
        let fabricator = try DocumentFabricator(remote)
        let layout = fabricator.layout
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'Hello')")
        try await a.sync()
        try await b.sync()  // B only reads: it never publishes
        try await backdateFiles(of: "client-B", in: remote, to: Date().addingTimeInterval(-10 * 86_400))
        try b.execute("INSERT INTO notes(id, title) VALUES ('n2', 'Written on B while silent')")

        let dry = try await a.document.vacuum(dryRun: true, expireClientsAfter: 86_400)
        #expect(dry.expiredClients == ["client-B"])
        #expect(dry.removed.contains { $0.path == layout.recentSyncFile("DOC", client: "client-B") })
        #expect(
            try await !remote.exists(layout.deletedClientFile("DOC", client: "client-B")), "a dry run wrote a marker")

        let report = try await a.document.vacuum(expireClientsAfter: 86_400)
        #expect(report.expiredClients == ["client-B"])
        #expect(try await remote.exists(layout.deletedClientFile("DOC", client: "client-B")))
        #expect(try await !remote.exists(layout.recentSyncFile("DOC", client: "client-B")))

        let before = try NotesSchema.dump(b.store)
        await #expect { try await b.sync() } throws: { code(of: $0) == .clientDeleted }
        #expect(try NotesSchema.dump(b.store) == before)
        #expect(try b.store.hasUnpublishedChanges())
        try await a.sync()  // the others carry on
        let listed = try await a.document.registeredClients()
        #expect(listed.first { $0.identifier == "client-B" }?.isDeleted == true)
    }

    @Test("Deleting a client: marker first, recent sync and whole store gone, change sets kept until nobody needs them")
    func clientDeletion() async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let a = try await TestClient.make(remote, name: "A", in: directory)
        let b = try await TestClient.make(remote, name: "B", in: directory)
        let c = try await TestClient.make(remote, name: "C", in: directory)
        for client in [a, b, c] { client.document.policy.acknowledgementDelay = 0 }  // acknowledged by each sync
        let fabricator = try DocumentFabricator(remote)
        let layout = fabricator.layout
        try b.execute("INSERT INTO notes(id, title) VALUES ('n1', 'First from B')")
        try await b.sync()
        try await a.sync()
        try await c.sync()
        try b.execute("INSERT INTO notes(id, title) VALUES ('n2', 'Second from B')")
        try await b.sync()
        try await a.sync()
        try await fabricator.wholeStore("client-B", covers: ["client-B": 2])
        try await fabricator.wholeStore("client-A", covers: ["client-B": 2, "client-A": 0])

        await #expect { try await a.document.deleteClient("client-nobody") } throws: {
            code(of: $0) == .remoteItemNotFound
        }
        let deletion = try await a.document.deleteClient("client-B")
        #expect(!deletion.keptWholeStore)
        #expect(try await remote.exists(layout.deletedClientFile("DOC", client: "client-B")))
        #expect(try await !remote.exists(layout.recentSyncFile("DOC", client: "client-B")))
        #expect(try await !remote.exists(layout.wholeStoreDirectory("DOC", client: "client-B")))
        let bSets = layout.syncChangesDirectory("DOC", client: "client-B")
        #expect(try await remote.contentsOfDirectory(at: bSets).count == 2, "change sets must stay")

        // C has not applied B's second set: vacuum keeps it, and C still fetches it although B's marker is gone.
        let first = try await a.document.vacuum()
        #expect(
            first.removedChangeSets.map(\.name).compactMap { RemoteLayout.parseChangeSetFileName($0)?.sequence } == [1])
        #expect(first.heldBack["client-C"]?.changeSetCount == 1)
        #expect(try await remote.contentsOfDirectory(at: bSets).count == 1)
        try await c.sync()
        #expect(try c.value("SELECT title FROM notes WHERE id = 'n2'") == "Second from B")
        let second = try await a.document.vacuum()
        #expect(second.removedChangeSets.count == 1)
        #expect(second.removed.contains { $0.path == bSets && $0.reason == .deletedClientFolder })
        #expect(try await !remote.exists(bSets))

        // The deleted client notices at its next sync and after a relaunch, and keeps its data.
        try b.execute("INSERT INTO notes(id, title) VALUES ('n3', 'Unpushed on B')")
        let before = try NotesSchema.dump(b.store)
        await #expect { try await b.sync() } throws: { code(of: $0) == .clientDeleted }
        let relaunched = try await DocumentSyncManager(
            applicationSyncManager: b.app,
            registering: .init(
                documentIdentifier: "DOC", documentDescription: "Notes",
                helperDirectory: directory.url.appendingPathComponent("B/helper")),
            store: b.store, remoteDocumentCreationHandler: { _ in true })
        #expect(relaunched.resetState != nil)
        await #expect { try await relaunched.synchronize() } throws: { code(of: $0) == .clientDeleted }
        #expect(try NotesSchema.dump(b.store) == before)

        try await converge(a, c)
        #expect(try NotesSchema.dump(a.store) == NotesSchema.dump(c.store))
        let clients = try await a.app.registeredClients()
        #expect(clients.first { $0.identifier == "client-B" }?.deletedFromDocuments == ["DOC"])
        #expect(clients.first { $0.identifier == "client-A" }?.documents == ["DOC"])
        #expect(clients.first { $0.identifier == "client-A" }?.clientDescription == "A")
    }

    @Test("Deleting a client keeps its whole store when it is the only snapshot of vacuumed change sets")
    func deletionKeepsLastSnapshot() async throws {
        let remote = InMemoryFileSystem()
        let fabricator = try DocumentFabricator(remote)
        try await fabricator.createDocumentFolders()
        // 1 and 2 were vacuumed
        for sequence in 3...4 as ClosedRange<Int64> { try await fabricator.changeSet("c1", sequence) }
        try await fabricator.recentSync("c1", acknowledgement: [:], published: 4)
        try await fabricator.wholeStore("c1", covers: ["c1": 2])
        let maintenance = try DocumentMaintenance(
            context: DocumentOperationContext(
                fileSystem: remote, layout: fabricator.layout,
                documentIdentifier: "DOC", clientIdentifier: "foldersync", environment: Fixture.environment()))
        let report = try await maintenance.deleteClient("c1")
        #expect(report.keptWholeStore)
        #expect(try await remote.exists(fabricator.layout.wholeStoreFile("DOC", client: "c1")))
    }

    @Test("Listing shows last sync, acknowledgement, whole-store date and who holds vacuum back, without registering")
    func listing() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let a = try await TestClient.make(remote, name: "A", in: directory)
        let b = try await TestClient.make(remote, name: "B", in: directory)
        let c = try await TestClient.make(remote, name: "C", in: directory)
        let fabricator = try DocumentFabricator(remote)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'Hello')")
        try await a.sync()
        try await b.sync()
        try await fabricator.wholeStore("client-A", covers: ["client-A": 1])

        // An operator's view: no registration, no local store, and nothing written.
        let before = await remote.allPaths()
        let maintenance = try DocumentMaintenance(
            context: DocumentOperationContext(
                fileSystem: remote, layout: fabricator.layout,
                documentIdentifier: "DOC", clientIdentifier: "foldersync", environment: Fixture.environment()))
        let listed = try await maintenance.registeredClients()
        #expect(await remote.allPaths() == before)
        #expect(listed.map(\.identifier) == ["client-A", "client-B", "client-C"])
        let (la, lb, lc) = (listed[0], listed[1], listed[2])
        #expect(
            la.clientDescription == "A" && la.publishedSequence == 1 && la.lastSyncDate != nil
                && la.wholeStoreDate == Fixture.date)
        #expect(lb.acknowledgement == ["client-A": 1] && lb.lastSyncDate != nil && !lb.holdsVacuumBack)
        #expect(
            lc.lastSyncDate == nil && lc.holdsVacuumBack && lc.heldBack.exclusiveChangeSetCount == 1
                && lc.heldBack.byteCount > 0)
        #expect(!la.holdsVacuumBack && !la.isDeleted)

        // A document manager with no store, never registered, lists the same.
        let bare = try DocumentSyncManager(
            applicationSyncManager: a.app,
            configuration: .init(
                documentIdentifier: "DOC", documentDescription: "Notes", helperDirectory: directory.subdirectory("bare")
            ))
        #expect(try await bare.registeredClients() == listed)

        try await c.sync()
        #expect(try await maintenance.registeredClients().allSatisfy { !$0.holdsVacuumBack })
    }

    @Test("Deleting a document: others get documentDeleted and keep their data; listings and remove-all")
    func documentDeletion() async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let (a, b) = try await TestClient.pair(remote, in: directory)
        let other = try await TestClient.make(remote, name: "A2", in: directory, document: "DOC2")
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'Hello')")
        try await a.sync()
        try await b.sync()
        try await other.sync()

        let documents = try await a.app.previouslySynchronizedDocuments()
        #expect(documents.map(\.identifier) == ["DOC", "DOC2"])
        #expect(documents[0].documentDescription == "Notes" && documents[0].clients == ["client-A", "client-B"])
        #expect(documents[0].lastActivityDate != nil && documents[0].byteCount > 0 && documents[0].integrityKey != nil)
        #expect(documents[1].clients == ["client-A2"])

        try b.execute("INSERT INTO notes(id, title) VALUES ('n2', 'Unpushed on B')")
        let before = try NotesSchema.dump(b.store)
        try await a.app.deleteDocument(identifier: "DOC")
        let layout = try RemoteLayout(applicationIdentifier: Fixture.application)
        #expect(try await remote.exists(layout.deletedDocumentFile("DOC")))
        #expect(try await !remote.exists(layout.documentDirectory("DOC")))
        await #expect { try await b.sync() } throws: { code(of: $0) == .documentDeleted }
        await #expect { try await a.sync() } throws: { code(of: $0) == .documentDeleted }
        #expect(try NotesSchema.dump(b.store) == before)
        #expect(try b.store.hasUnpublishedChanges())
        #expect(try await a.app.previouslySynchronizedDocuments().map(\.identifier) == ["DOC2"])
        await #expect { try await a.app.deleteDocument(identifier: "NOPE") } throws: {
            code(of: $0) == .remoteItemNotFound
        }
        await #expect { try await a.app.deleteDocument(identifier: "../x") } throws: {
            code(of: $0) == .invalidIdentifier
        }

        try await a.app.removeAllRemoteSyncData()
        #expect(try await !remote.exists(layout.applicationDirectory))
        #expect(try await a.app.previouslySynchronizedDocuments().isEmpty)
        // To a client that registered before, a missing application tree looks like a folder not mounted…
        await #expect { try await other.sync() } throws: { code(of: $0) == .remoteUnavailable }
        #expect(try await !remote.exists(layout.applicationDirectory), "the removed tree was created again")
        // …until the app says the remote was replaced: then it is a reset.
        other.app.remoteReplacementHandler = { _ in true }
        await #expect { try await other.sync() } throws: { code(of: $0) == .integrityKeyMismatch }
    }
}
