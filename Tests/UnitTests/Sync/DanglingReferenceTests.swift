import FolderSyncTesting
import Foundation
import GRDB
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// Rows an applied change set leaves pointing at nothing are reported, and only those: the rows it wrote, and the
/// rows whose parent it deleted. (Each table the set touched used to be checked whole, at every set applied.)
@Suite("Dangling references")
struct DanglingReferenceTests {
    /// The dangling-reference warnings of `report`, as "table syncID → parent", sorted.
    static func dangling(_ report: SyncReport) -> [String] {
        report.warnings.filter { $0.kind == .danglingReference }
            .map {
                "\($0.table ?? "?") \($0.syncID ?? "?") → \($0.message.components(separatedBy: "missing row of ").last ?? "?")"
            }.sorted()
    }

    /// A and B with folder f1 and tag t1; A deletes both while B files `notes` notes in f1 and tags the first with t1.
    static func concurrentDeletes(notes: Int, in directory: TemporaryDirectory) async throws -> (
        a: TestClient, b: TestClient
    ) {
        let (a, b) = try await TestClient.pair(InMemoryFileSystem(), in: directory)
        try a.execute("INSERT INTO folders VALUES ('f1', 'Work')")
        try a.execute("INSERT INTO tags VALUES ('t1', 'urgent')")
        try await converge(a, b)
        try a.execute("DELETE FROM folders WHERE id = 'f1'")
        try a.execute("DELETE FROM tags WHERE id = 't1'")
        try await b.store.database.write { db in
            for index in 0..<notes {
                try db.execute(
                    sql: "INSERT INTO notes(id, title, folder_id) VALUES (?, 'in f1', 'f1')", arguments: ["n\(index)"])
            }
            try db.execute(sql: "INSERT INTO note_tags VALUES ('nt1', 'n0', 't1')")
        }
        return (a, b)
    }

    @Test(
        "Rows a set writes and rows whose parent it deletes are reported, in both directions, by the key they break",
        arguments: [3, GRDBStore.rowByRowCheckLimit + 44])
    func reportedBothWays(notes: Int) async throws {
        let directory = TemporaryDirectory()
        let (a, b) = try await Self.concurrentDeletes(notes: notes, in: directory)
        let expected = ((0..<notes).map { "notes n\($0) → folders" } + ["note_tags nt1 → tags"]).sorted()
        try await a.sync()
        let atB = try await b.sync()  // applies A's deletes, then publishes its rows
        #expect(Self.dangling(atB) == expected, "the rows whose parents the set deleted")
        let atA = try await a.sync()  // applies B's rows
        #expect(Self.dangling(atA) == expected, "the rows the set wrote")
        #expect(Self.dangling(try await b.sync()) == [], "nothing new")
    }

    @Test(
        "A row left dangling is reported by the set that wrote it or deleted its parent, not again by every later set")
    func reportedOnce() async throws {
        let directory = TemporaryDirectory()
        let (a, b) = try await Self.concurrentDeletes(notes: 2, in: directory)
        try await b.sync()
        let applied = try await a.sync()  // applies B's notes: A's deletes are still unpublished
        #expect(Self.dangling(applied) == ["note_tags nt1 → tags", "notes n0 → folders", "notes n1 → folders"])
        let deletesApplied = try await b.sync()  // applies A's deletes: B's rows lose their parents
        #expect(Self.dangling(deletesApplied) == ["note_tags nt1 → tags", "notes n0 → folders", "notes n1 → folders"])
        // A later set that touches notes reports only the dangling row it wrote.
        try b.execute("INSERT INTO folders VALUES ('f2', 'Home')")
        try b.execute("INSERT INTO notes(id, title, folder_id) VALUES ('n9', 'at home', 'f2')")
        try b.execute("UPDATE notes SET title = 'edited' WHERE id = 'n1'")  // a dangling row, edited as it is
        try await b.sync()
        let later = try await a.sync()
        #expect(Self.dangling(later) == ["notes n1 → folders"])
    }
}
