import FolderSyncTesting
import Foundation
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// Convergence defect found by the simulator (lifecycle with churn under last writer wins, seed 420022): after a wipe,
/// a device re-joining onto a whole store that holds a newer delete of one of its rows put the row back, with stamps
/// older than the delete. The other devices ignored the re-published row (their delete is newer): replicas differed.
@Suite("Re-join onto a newer delete")
struct RejoinAfterNewerDeleteTests {
    @Test(
        "After a wipe, a row deleted by the device that re-joined first stays deleted on a device re-joining onto its whole store"
    )
    func newerDeleteInTheInstalledStore() async throws {
        let directory = TemporaryDirectory()
        let (a, b) = try await Self.rejoinOntoDelete(in: directory, writingAfterIt: false)
        // The delete is newer than every write A re-publishes (each keeps the time it was written): the row stays gone.
        for client in [a, b] {
            #expect(
                try client.value("SELECT count(*) FROM notes WHERE id = 'n1'") == "0",
                "\(client.document.clientIdentifier)")
        }
        #expect(try NotesSchema.dump(a.store) == NotesSchema.dump(b.store))
    }

    @Test("After a wipe, a write newer than the delete in the installed store brings the row back on every device")
    func newerWriteThanTheInstalledDelete() async throws {
        let directory = TemporaryDirectory()
        let (a, b) = try await Self.rejoinOntoDelete(in: directory, writingAfterIt: true)
        for client in [a, b] {
            #expect(
                try client.value("SELECT title || '/' || body FROM notes WHERE id = 'n1'") == "after the delete/first",
                "\(client.document.clientIdentifier)")
        }
        #expect(try NotesSchema.dump(a.store) == NotesSchema.dump(b.store))
    }

    @Test("A deleted device's unpublished delete, newer than the delete in the store it re-joins onto, still travels")
    func newerLocalDeleteOverTheInstalledDelete() async throws {
        let directory = TemporaryDirectory()
        let clock = LivenessTests.TestClock()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let clients = try await ["A", "B", "C", "D"].asyncMap {
            try await TestClient.make(
                remote, name: $0, in: directory, deletePolicy: .lastWriterWins, environment: clock.environment)
        }
        let (a, b, c, d) = (clients[0], clients[1], clients[2], clients[3])
        try a.execute("INSERT INTO notes(id, title, body) VALUES ('n1', 'first', 'first')")
        try await converge(a, b, c, d)
        // B deletes the note and leaves a whole store with it; then D writes it, offline; then C deletes it,
        // unpublished.
        clock.advance(60)
        try b.execute("DELETE FROM notes WHERE id = 'n1'")
        try await b.sync()
        #expect(try await b.document.uploadWholeStore() != nil)
        clock.advance(60)
        try d.execute("UPDATE notes SET title = 'offline' WHERE id = 'n1'")
        clock.advance(60)
        try c.execute("DELETE FROM notes WHERE id = 'n1'")
        try await a.document.deleteClient(c.document.clientIdentifier)
        await #expect { try await c.sync() } throws: { ($0 as? FolderSyncError)?.code == .clientDeleted }
        try await c.document.rejoin()
        try await converge(a, b, c, d)

        // C's delete is the newest write of the note: D's older write does not bring it back.
        for client in clients {
            #expect(
                try client.value("SELECT count(*) FROM notes WHERE id = 'n1'") == "0",
                "\(client.document.clientIdentifier)")
        }
    }

    /// A and B (last-writer-wins tables) share a note; the document is wiped; B deletes the note a minute later (and A,
    /// `writingAfterIt`, changes its title a minute after that); B re-joins first and uploads a whole store with the
    /// delete; A re-joins onto that store; both sync twice in turn.
    static func rejoinOntoDelete(in directory: TemporaryDirectory, writingAfterIt: Bool) async throws -> (
        TestClient, TestClient
    ) {
        let clock = LivenessTests.TestClock()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let a = try await TestClient.make(
            remote, name: "A", in: directory, deletePolicy: .lastWriterWins, environment: clock.environment)
        let b = try await TestClient.make(
            remote, name: "B", in: directory, deletePolicy: .lastWriterWins, environment: clock.environment)
        try a.execute("INSERT INTO notes(id, title, body) VALUES ('n1', 'first', 'first')")
        try await converge(a, b)

        try await remote.remove(a.document.relativePathToThisDocumentDirectory)
        clock.advance(60)
        try b.execute("DELETE FROM notes WHERE id = 'n1'")
        if writingAfterIt {
            clock.advance(60)
            try a.execute("UPDATE notes SET title = 'after the delete' WHERE id = 'n1'")
        }
        for client in [a, b] {
            await #expect { try await client.sync() } throws: {
                ($0 as? FolderSyncError)?.code == .integrityKeyMismatch
            }
        }
        try await b.document.rejoin()
        #expect(try await b.document.uploadWholeStore() != nil)
        clock.advance(60)
        let report = try await a.document.rejoin()
        #expect(report.installedWholeStore?.clientIdentifier == b.document.clientIdentifier)
        try await converge(a, b)
        return (a, b)
    }
}
