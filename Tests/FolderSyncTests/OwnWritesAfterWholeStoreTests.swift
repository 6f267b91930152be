import Foundation
import Testing
@testable import FolderSync
import FolderSyncTesting

/// A whole store that covers less than this client published does not hide the client's own writes: found by
/// the kill torture, where a delete made right after such a download hit a missing row and was lost.
@Suite("Own writes across a whole-store install")
struct OwnWritesAfterWholeStoreTests {
    @Test("After installing an older whole store, own published rows stay visible, and a delete of one sticks")
    func ownWritesStay() async throws {
        let directory = TemporaryDirectory()
        let (a, b) = try await TestClient.pair(InMemoryFileSystem(), in: directory)
        try await b.document.uploadWholeStore()                 // covers nothing of A
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'one'), ('n2', 'two')")
        try await a.sync()                                      // published, not in B's store
        try a.execute("UPDATE notes SET title = 'two, edited' WHERE id = 'n2'")
        try await a.sync()
        let installed = try await a.document.downloadWholeStore()
        #expect(installed?.clientIdentifier == "client-B")
        let rows = try NotesSchema.dump(a.store)
        #expect(rows.count == 2, "own published rows vanished: \(rows)")
        #expect(try a.value("SELECT title FROM notes WHERE id = 'n2'") == "two, edited")
        try a.execute("DELETE FROM notes WHERE id = 'n1'")
        try await converge(a, b)
        #expect(try a.value("SELECT group_concat(id) FROM notes") == "n2")
        #expect(try NotesSchema.dump(a.store) == NotesSchema.dump(b.store))
    }
}
