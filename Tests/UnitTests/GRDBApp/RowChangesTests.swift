import FolderSync
import Foundation
import GRDB
import Testing

@testable import TestSupport

/// The change feed: each sync says which rows other clients' changes changed here, per table and client, in its
/// report and as an event per applied change set, with exact counts and sync IDs up to the app's limit.
@Suite("Change feed")
struct RowChangesTests {
    @Test("The report and the events list the rows inserted, updated (with columns) and deleted, by client")
    func insertsUpdatesDeletes() async throws {
        let directory = TemporaryDirectory()
        let shared = directory.subdirectory("shared")
        let a = try await AppDevice.make("A", in: directory, shared: shared, connection: .queue)
        let b = try await AppDevice.make("B", in: directory, shared: shared, connection: .pool)
        let c = try await AppDevice.make("C", in: directory, shared: shared, connection: .queue)
        try a.write("INSERT INTO notes(id, body) VALUES ('n1', 'one'), ('n2', 'two'), ('n3', 'three')")
        try await a.sync()
        let events = Self.rowEvents(of: b.document)
        let first = try await b.sync()
        var expected = RowChanges(table: "notes", client: "client-A")
        expected.insertCount = 3
        expected.inserted = ["n1", "n2", "n3"]
        #expect(first.rowChanges == [expected])
        #expect(await events.value == [[expected]])

        try a.write("UPDATE notes SET body = 'one, edited' WHERE id = 'n1'")
        try a.write("DELETE FROM notes WHERE id = 'n2'")
        try await a.sync()
        try c.write("INSERT INTO notes(id, body) VALUES ('c1', 'from C')")
        try await c.sync()
        let second = try await b.sync()
        var fromA = RowChanges(table: "notes", client: "client-A")
        fromA.updateCount = 1
        fromA.updated = ["n1": ["body"]]
        fromA.deleteCount = 1
        fromA.deleted = ["n2"]
        var fromC = RowChanges(table: "notes", client: "client-C")
        fromC.insertCount = 1
        fromC.inserted = ["c1"]
        #expect(Set(second.rowChanges) == [fromA, fromC])
        #expect(second.rowChanges.allSatisfy { $0.listsEveryRow })
        #expect(second.rowChanges.first { $0.client == "client-A" }?.touches("n1") == true)
    }

    @Test("Past the app's limit only the counts grow; a limit of 0 lists no row")
    func limit() async throws {
        let directory = TemporaryDirectory()
        let shared = directory.subdirectory("shared")
        let a = try await AppDevice.make("A", in: directory, shared: shared, connection: .queue)
        let b = try await AppDevice.make("B", in: directory, shared: shared, connection: .queue) {
            $0.changedRowIDLimit = 2
        }
        let c = try await AppDevice.make("C", in: directory, shared: shared, connection: .queue) {
            $0.changedRowIDLimit = 0
        }
        try a.write(
            "INSERT INTO notes(id, body) VALUES ('n1', '1'), ('n2', '2'), ('n3', '3'), ('n4', '4'), ('n5', '5')")
        try await a.sync()
        let limited = try #require(try await b.sync().rowChanges.first)
        #expect(limited.insertCount == 5 && limited.inserted == ["n1", "n2"] && !limited.listsEveryRow)
        let counted = try #require(try await c.sync().rowChanges.first)
        #expect(counted.insertCount == 5 && counted.inserted.isEmpty && !counted.listsEveryRow)
    }

    @Test("A remote change that lost to a newer local write changed nothing and is not listed")
    func lostChangeNotListed() async throws {
        let directory = TemporaryDirectory()
        let shared = directory.subdirectory("shared")
        let a = try await AppDevice.make("A", in: directory, shared: shared, connection: .queue)
        let b = try await AppDevice.make("B", in: directory, shared: shared, connection: .queue)
        try a.write("INSERT INTO notes(id, body) VALUES ('n1', 'one'), ('n2', 'two')")
        try await a.sync()
        try await b.sync()
        try a.write("UPDATE notes SET body = 'A' WHERE id IN ('n1', 'n2')")
        try await a.sync()
        try b.write("UPDATE notes SET body = 'B, later' WHERE id = 'n1'")
        let report = try await b.sync()
        #expect(report.changesIgnored == 1)
        let changes = try #require(report.rowChanges.first)
        #expect(changes.updated == ["n2": ["body"]] && changes.updateCount == 1)
    }

    /// The `rowsChanged` events of `document`'s next sync, each event's changes, until it ends.
    static func rowEvents(of document: DocumentSyncManager) -> Task<[[RowChanges]], Never> {
        let events = document.events()
        return Task {
            var seen: [[RowChanges]] = []
            for await event in events {
                switch event {
                case .rowsChanged(let changes): seen.append(changes)
                case .completed, .failed: return seen
                default: continue
                }
            }
            return seen
        }
    }
}
