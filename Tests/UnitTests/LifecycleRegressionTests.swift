import FolderSyncTesting
import Foundation
import GRDB
import Testing

@_spi(Tooling) @_spi(ModelAdapter) @testable import FolderSync
@testable import TestSupport

private func code(of error: any Error) -> FolderSyncError.Code? { (error as? FolderSyncError)?.code }

/// Bugs the lifecycle simulator found (issue 4), each reduced to the few steps that showed it.
@Suite("Lifecycle regressions")
struct LifecycleRegressionTests {
    @Test("A reset found by a relaunch (after a wipe) at its first sync has a backup and rejoin() recovers (Simulator)")
    func resetAtRegistration() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let a = try await TestClient.make(remote, name: "A", in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'kept')")
        try await a.sync()
        try await remote.remove(a.document.layout.applicationDirectory)
        // The relaunched app: same store and helper folder, new managers. It comes up from its helper folder.
        let app = ApplicationSyncManager(remote: remote, environment: Fixture.quietEnvironment())
        try app.configure(
            .init(applicationIdentifier: "com.example.notes", clientIdentifier: "client-A", clientDescription: "A"))
        let document = try DocumentSyncManager(
            applicationSyncManager: app, configuration: a.document.configuration, store: a.store)
        app.remoteReplacementHandler = { _ in true }
        try await document.registerConfigured()
        await #expect { try await document.synchronize() } throws: { error in
            guard let error = error as? FolderSyncError, error.code == .integrityKeyMismatch,
                let backup = error.backupPath
            else { return false }
            return FileManager.default.fileExists(atPath: backup)
        }
        try await document.rejoin()
        #expect(try a.value("SELECT title FROM notes WHERE id = 'n1'") == "kept")
        #expect(try a.store.hasUnpublishedChanges() == false)
    }

    /// Found by the soak (seed 1910032 of the outage schedule): the manager said notRegistered, which sends an app
    /// to register, where only rejoin() recovers (and registering is what the failed re-join just did).
    @Test(
        "A re-join stopped by a second reset leaves every remote task saying that reset, with its backup, until rejoin() recovers"
    )
    func secondResetIsTheAnswer() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let (a, b) = try await TestClient.pair(remote, in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'kept')")
        try await converge(a, b)
        try await b.document.deleteClient("client-A")
        await #expect { try await a.sync() } throws: { code(of: $0) == .clientDeleted }
        try await remote.remove(a.document.layout.documentDirectory("DOC"))
        _ = try await TestClient.make(remote, name: "C", in: directory)  // the document again, another epoch
        await #expect { try await a.document.rejoin() } throws: { code(of: $0) == .integrityKeyMismatch }
        let stopped: (any Error) -> Bool = { error in
            guard let error = error as? FolderSyncError, error.code == .integrityKeyMismatch,
                let backup = error.backupPath
            else { return false }
            return FileManager.default.fileExists(atPath: backup)
        }
        await #expect(performing: { try await a.sync() }, throws: stopped)
        await #expect(performing: { try await a.document.downloadWholeStore() }, throws: stopped)
        await #expect(performing: { try await a.document.uploadWholeStore() }, throws: stopped)
        try await a.document.rejoin()
        #expect(try a.value("SELECT title FROM notes WHERE id = 'n1'") == "kept")
    }

    @Test("A deleted client's first sync does not install a whole store before stopping (Simulator)")
    func noBootstrapOnDeletedClient() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let a = try await TestClient.make(remote, name: "A", in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'from A')")
        try await a.sync()
        try await a.document.uploadWholeStore()
        let b = try await TestClient.make(remote, name: "B", in: directory)
        try b.execute("INSERT INTO notes(id, title) VALUES ('n2', 'from B')")
        try await a.document.deleteClient("client-B")
        let before = try NotesSchema.dump(b.store)
        await #expect { try await b.sync() } throws: { code(of: $0) == .clientDeleted }
        #expect(
            try NotesSchema.dump(b.store) == before, "the whole store was installed before the deletion was noticed")
    }

    @Test("Whole-store transfers refuse a remote wiped since the last sync (Simulator)")
    func noTransferAcrossEpochs() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let (a, b) = try await TestClient.pair(remote, in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'old epoch')")
        try await converge(a, b)
        try await remote.remove(a.document.layout.documentDirectory("DOC"))
        await #expect { try await a.sync() } throws: { code(of: $0) == .integrityKeyMismatch }
        try await a.document.rejoin()
        // B has not noticed: its old-epoch store must not become the new epoch's, nor the reverse.
        await #expect { try await b.document.uploadWholeStore() } throws: { code(of: $0) == .integrityKeyMismatch }
        await #expect { try await b.document.downloadWholeStore() } throws: { code(of: $0) == .integrityKeyMismatch }
        #expect(await remote.item(at: a.document.layout.wholeStoreDirectory("DOC", client: "client-B")) == nil)
    }

    @Test("Re-joining a wiped remote keeps deletes not yet published (Simulator)")
    func rejoinKeepsUnpublishedDeletes() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let (a, b) = try await TestClient.pair(remote, in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'doomed')")
        try await converge(a, b)
        try b.execute("DELETE FROM notes WHERE id = 'n1'")
        try await remote.remove(a.document.layout.documentDirectory("DOC"))
        for client in [a, b] {
            await #expect { try await client.sync() } throws: { code(of: $0) == .integrityKeyMismatch }
            try await client.document.rejoin()
        }
        try await converge(a, b)
        #expect(
            try a.value("SELECT title FROM notes WHERE id = 'n1'") == nil, "A's copy brought back the row B deleted")
        #expect(try b.value("SELECT title FROM notes WHERE id = 'n1'") == nil)
        #expect(throws: (any Error).self) { try b.execute("INSERT INTO notes(id, title) VALUES ('n1', 'again')") }
    }

    @Test("Installing a whole store keeps an unpublished delete of a row the store lacks (Simulator)")
    func restoreKeepsDeleteOfMissingRow() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let (a, b) = try await TestClient.pair(remote, in: directory)
        try await a.sync()
        try await a.document.uploadWholeStore()  // covers nothing
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'published after the store')")
        try await converge(a, b)
        try b.execute("DELETE FROM notes WHERE id = 'n1'")
        try await b.document.downloadWholeStore()
        try await converge(a, b)
        #expect(
            try a.value("SELECT title FROM notes WHERE id = 'n1'") == nil,
            "the delete was lost when the store was installed")
        #expect(try b.value("SELECT title FROM notes WHERE id = 'n1'") == nil)
    }

    @Test("Installing a whole store keeps an unpublished update of a row the store lacks (Simulator)")
    func restoreKeepsUpdateOfMissingRow() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let (a, b) = try await TestClient.pair(remote, in: directory)
        try await a.sync()
        try await a.document.uploadWholeStore()  // covers nothing
        try a.execute("INSERT INTO notes(id, title, body) VALUES ('n1', 'title', 'old body')")
        try await converge(a, b)
        try b.execute("UPDATE notes SET body = 'new body' WHERE id = 'n1'")
        try await b.document.downloadWholeStore()
        try await converge(a, b)
        #expect(
            try b.value("SELECT body FROM notes WHERE id = 'n1'") == "new body",
            "the update was lost when the store was installed")
        #expect(try a.value("SELECT body FROM notes WHERE id = 'n1'") == "new body")
        #expect(try a.value("SELECT title FROM notes WHERE id = 'n1'") == "title")
    }
}
