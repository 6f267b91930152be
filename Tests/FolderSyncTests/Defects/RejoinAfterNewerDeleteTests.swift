import Foundation
import Testing
@_spi(Tooling) @testable import FolderSync
import FolderSyncTesting

/// Convergence defect found by the simulator (lifecycle with churn under last writer wins, seed 420022): after a wipe,
/// a device re-joining onto a whole store that holds a newer delete of one of its rows put the row back, with stamps
/// older than the delete. The other devices ignored the re-published row (their delete is newer): replicas differed.
@Suite("Re-join onto a newer delete")
struct RejoinAfterNewerDeleteTests {
    @Test("After a wipe, a row deleted by the device that re-joined first stays deleted on a device re-joining onto its whole store")
    func newerDeleteInTheInstalledStore() async throws {
        let directory = TemporaryDirectory()
        let clock = LivenessTests.TestClock()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let a = try await TestClient.make(remote, name: "A", in: directory, deletePolicy: .lastWriterWins, environment: clock.environment)
        let b = try await TestClient.make(remote, name: "B", in: directory, deletePolicy: .lastWriterWins, environment: clock.environment)
        try a.execute("INSERT INTO notes(id, title, body) VALUES ('n1', 'first', 'first')")
        try await converge(a, b)

        try await remote.remove(a.document.relativePathToThisDocumentDirectory)
        // B deletes the note a minute after it was written, re-joins first and leaves a whole store with the delete.
        clock.advance(60)
        try b.execute("DELETE FROM notes WHERE id = 'n1'")
        for client in [a, b] {
            await #expect { try await client.sync() } throws: { ($0 as? FolderSyncError)?.code == .integrityKeyMismatch }
        }
        try await b.document.rejoin()
        #expect(try await b.document.uploadWholeStore() != nil)
        clock.advance(60)
        let report = try await a.document.rejoin()
        #expect(report.installedWholeStore?.clientIdentifier == b.document.clientIdentifier)
        try await converge(a, b)

        // The delete is newer than every write A re-publishes (each keeps the time it was written): the row stays gone.
        for client in [a, b] {
            #expect(try client.value("SELECT count(*) FROM notes WHERE id = 'n1'") == "0", "\(client.document.clientIdentifier)")
        }
        #expect(try NotesSchema.dump(a.store) == NotesSchema.dump(b.store))
    }

    @Test("After a wipe, a write newer than the delete in the installed store brings the row back on every device")
    func newerWriteThanTheInstalledDelete() async throws {
        let directory = TemporaryDirectory()
        let clock = LivenessTests.TestClock()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let a = try await TestClient.make(remote, name: "A", in: directory, deletePolicy: .lastWriterWins, environment: clock.environment)
        let b = try await TestClient.make(remote, name: "B", in: directory, deletePolicy: .lastWriterWins, environment: clock.environment)
        try a.execute("INSERT INTO notes(id, title, body) VALUES ('n1', 'first', 'first')")
        try await converge(a, b)

        try await remote.remove(a.document.relativePathToThisDocumentDirectory)
        clock.advance(60)
        try b.execute("DELETE FROM notes WHERE id = 'n1'")
        clock.advance(60)
        try a.execute("UPDATE notes SET title = 'after the delete' WHERE id = 'n1'")
        for client in [a, b] {
            await #expect { try await client.sync() } throws: { ($0 as? FolderSyncError)?.code == .integrityKeyMismatch }
        }
        try await b.document.rejoin()
        #expect(try await b.document.uploadWholeStore() != nil)
        let report = try await a.document.rejoin()
        #expect(report.installedWholeStore?.clientIdentifier == b.document.clientIdentifier)
        try await converge(a, b)

        for client in [a, b] {
            #expect(try client.value("SELECT title || '/' || body FROM notes WHERE id = 'n1'") == "after the delete/first",
                    "\(client.document.clientIdentifier)")
        }
        #expect(try NotesSchema.dump(a.store) == NotesSchema.dump(b.store))
    }
}
