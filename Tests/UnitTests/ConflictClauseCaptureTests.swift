import FolderSyncTesting
import Foundation
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// App writes with their own conflict clause (UPSERT, `UPDATE OR IGNORE`, `INSERT OR REPLACE`) are captured like
/// any other. SQLite lets such a clause override the conflict policy of the trigger statements it fires: found by
/// the kill torture, whose clients write with UPSERT (the first one failed with a UNIQUE constraint error).
@Suite("Writes with conflict clauses")
struct ConflictClauseCaptureTests {
    @Test("An UPSERT or INSERT OR REPLACE of an existing row is recorded and reaches the other client")
    func upsert() async throws {
        let directory = TemporaryDirectory()
        let (a, b) = try await TestClient.pair(InMemoryFileSystem(), in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'first')")
        try await a.sync()
        try a.execute(
            "INSERT INTO notes(id, title) VALUES ('n1', 'upserted') ON CONFLICT(id) DO UPDATE SET title = excluded.title"
        )
        try a.execute(
            "INSERT INTO notes(id, title) VALUES ('n2', 'new') ON CONFLICT(id) DO UPDATE SET title = excluded.title")
        try a.execute("INSERT OR REPLACE INTO notes(id, title, body) VALUES ('n2', 'new', 'replaced')")
        try await converge(a, b)
        #expect(try b.value("SELECT body FROM notes WHERE id = 'n2'") == "replaced")
        #expect(try b.value("SELECT title FROM notes WHERE id = 'n1'") == "upserted")
        #expect(try b.value("SELECT title FROM notes WHERE id = 'n2'") == "new")
    }

    @Test("UPDATE OR IGNORE over a column last written by another client gets a new clock, so it wins everywhere")
    func updateOrIgnore() async throws {
        let directory = TemporaryDirectory()
        let (a, b) = try await TestClient.pair(InMemoryFileSystem(), in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'a')")
        try await converge(a, b)
        try b.execute("UPDATE notes SET title = 'b' WHERE id = 'n1'")
        try await converge(b, a)
        // A's register for the title now holds B's stamp: an ignored clock update would republish B's stamp.
        try a.execute("UPDATE OR IGNORE notes SET title = 'a again' WHERE id = 'n1'")
        try await converge(a, b)
        #expect(try b.value("SELECT title FROM notes WHERE id = 'n1'") == "a again")
        #expect(try NotesSchema.dump(a.store) == NotesSchema.dump(b.store))
    }
}
