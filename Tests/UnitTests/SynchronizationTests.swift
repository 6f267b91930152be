import FolderSyncTesting
import Foundation
import GRDB
import Testing

@_spi(Tooling) @_spi(ModelAdapter) @testable import FolderSync
@testable import TestSupport

@Suite("Synchronization")
struct SynchronizationTests {
    @Test("Inserts, updates and deletes travel both ways, and replicas end equal")
    func basicRoundTrip() async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let (a, b) = try await TestClient.pair(remote, in: directory)

        try a.execute("INSERT INTO folders VALUES ('f1', 'Work')")
        try a.execute("INSERT INTO notes VALUES ('n1', 'One', 'first', 'f1'), ('n2', 'Two', 'second', 'f1')")
        let sent = try await a.sync()
        #expect(sent.changeSetsSent == 1 && sent.changesSent == 3)
        let received = try await b.sync()
        #expect(received.changeSetsApplied == 1 && received.changesApplied == 3)
        #expect(try b.value("SELECT body FROM notes WHERE id = 'n2'") == "second")

        try b.execute("UPDATE notes SET body = 'first, edited on B' WHERE id = 'n1'")
        try a.execute("DELETE FROM notes WHERE id = 'n2'")
        try await converge(a, b)
        #expect(try NotesSchema.dump(a.store) == NotesSchema.dump(b.store))
        #expect(try a.value("SELECT body FROM notes WHERE id = 'n1'") == "first, edited on B")
        #expect(try b.value("SELECT count(*) FROM notes WHERE id = 'n2'") == "0")
    }

    @Test("Applied remote changes are not echoed back as local changes")
    func noEcho() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let (a, b) = try await TestClient.pair(remote, in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'Hello')")
        try await a.sync()
        try await b.sync()
        #expect(try b.store.hasUnpublishedChanges() == false)
        let again = try await b.sync()
        #expect(again.changeSetsSent == 0)
    }

    @Test("An idle sync lists two folders and reads no change set")
    func idleSync() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let (a, b) = try await TestClient.pair(remote, in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'Hello')")
        try await a.sync()
        try await b.sync()
        try await a.sync()
        let before = await remote.operationCounts
        let idle = try await b.sync()
        let after = await remote.operationCounts
        #expect(idle.isIdle)
        #expect(after["read", default: 0] == before["read", default: 0], "an idle sync read a file")
        #expect(idle.remoteRequests <= 2, "idle sync made \(idle.remoteRequests) requests")
        print("Idle sync: \(idle.remoteRequests) remote requests")
    }

    @Test("Concurrent edits of different columns merge; of the same column, the last writer wins")
    func columnMerge() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let (a, b) = try await TestClient.pair(remote, in: directory)
        try a.execute("INSERT INTO notes(id, title, body) VALUES ('n1', 'T', 'B')")
        try await a.sync()
        try await b.sync()
        try a.execute("UPDATE notes SET title = 'title from A' WHERE id = 'n1'")
        try b.execute("UPDATE notes SET body = 'body from B' WHERE id = 'n1'")
        try a.execute("UPDATE notes SET folder_id = NULL WHERE id = 'n1'")
        try b.execute("UPDATE notes SET title = 'title from B' WHERE id = 'n1'")  // B writes the title last
        try await converge(a, b)
        #expect(try NotesSchema.dump(a.store) == NotesSchema.dump(b.store))
        #expect(try a.value("SELECT title || '|' || body FROM notes") == "title from B|body from B")
    }

    @Test("A conflict is offered to the resolver; a merged answer reaches every replica")
    func conflictResolver() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let (a, b) = try await TestClient.pair(remote, in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'start')")
        try await a.sync()
        try await b.sync()
        try a.execute("UPDATE notes SET title = 'alpha' WHERE id = 'n1'")
        try b.execute("UPDATE notes SET title = 'beta' WHERE id = 'n1'")
        try await a.sync()
        let offered = Locked<[SyncConflict]>([])
        b.document.conflictResolver = { conflict in
            offered.withLock { $0.append(conflict) }
            guard case .text(let local) = conflict.localValue, case .text(let remote) = conflict.remoteValue else {
                return nil
            }
            return .merged(.text([local, remote].sorted().joined(separator: "+")))
        }
        let report = try await b.sync()
        #expect(offered.current.count == 1)
        let conflict = try #require(offered.current.first)
        #expect(conflict.table == "notes" && conflict.syncID == "n1" && conflict.column == "title")
        #expect(conflict.localValue == .text("beta") && conflict.remoteValue == .text("alpha"))
        #expect(report.conflicts.map(\.resolution) == [.merged(.text("alpha+beta"))])
        try await a.sync()
        try await b.sync()
        #expect(try a.value("SELECT title FROM notes") == "alpha+beta")
        #expect(try NotesSchema.dump(a.store) == NotesSchema.dump(b.store))
    }

    @Test("Delete wins over a concurrent update; the dropped change is a warning")
    func deleteWins() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let (a, b) = try await TestClient.pair(remote, in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'start')")
        try await a.sync()
        try await b.sync()
        try a.execute("DELETE FROM notes WHERE id = 'n1'")
        try b.execute("UPDATE notes SET title = 'edited' WHERE id = 'n1'")
        try await a.sync()
        let report = try await b.sync()
        #expect(report.warnings.contains { $0.kind == .changeToDeletedRow && $0.syncID == "n1" })
        try await a.sync()
        try await b.sync()
        #expect(try a.value("SELECT count(*) FROM notes") == "0")
        #expect(try b.value("SELECT count(*) FROM notes") == "0")
    }

    @Test("A note left pointing at a concurrently deleted folder is reported as a dangling reference")
    func danglingReference() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let (a, b) = try await TestClient.pair(remote, in: directory)
        try a.execute("INSERT INTO folders VALUES ('f1', 'Work')")
        try await a.sync()
        try await b.sync()
        try a.execute("DELETE FROM folders WHERE id = 'f1'")
        try b.execute("INSERT INTO notes(id, title, folder_id) VALUES ('n1', 'in f1', 'f1')")
        try await b.sync()
        try await a.sync()
        let report = try await b.sync()
        let warnings = report.warnings.filter { $0.kind == .danglingReference }
        #expect(warnings.contains { $0.table == "notes" && $0.syncID == "n1" }, "\(report.warnings)")
    }
}

/// A note as a GRDB record, to show that record writes are captured like raw SQL.
struct NoteRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "notes"
    var id: String
    var title: String?
    var body: String?
    // swift-format-ignore: AlwaysUseLowerCamelCase
    // (the column's name)
    var folder_id: String?
}

@Suite("Change capture and delegate")
struct CaptureAndDelegateTests {
    @Test("Inserts, updates and deletes made with GRDB records are captured in the same transaction")
    func recordWrites() async throws {
        let directory = TemporaryDirectory()
        let (a, b) = try await TestClient.pair(InMemoryFileSystem(), in: directory)
        try await a.store.database.write { db in
            var note = NoteRecord(id: "r1", title: "record", body: nil, folder_id: nil)
            try note.insert(db)
            note.body = "updated through the record"
            try note.update(db)
            try NoteRecord(id: "r2", title: "gone").insert(db)
            _ = try NoteRecord.deleteOne(db, key: "r2")
        }
        try await converge(a, b)
        #expect(try b.value("SELECT body FROM notes WHERE id = 'r1'") == "updated through the record")
        #expect(try b.value("SELECT count(*) FROM notes") == "1")
        // A rolled-back write leaves no change behind.
        try? await a.store.database.write { db in
            try NoteRecord(id: "r3", title: "never").insert(db)
            throw CancellationError()
        }
        #expect(try a.store.hasUnpublishedChanges() == false)
    }

    @Test("Without a resolver closure, the delegate settles conflicts")
    func delegateResolvesConflicts() async throws {
        final class Resolver: DocumentSyncManagerDelegate, @unchecked Sendable {
            let seen = Locked<[SyncConflict]>([])
            func documentSyncManager(_ manager: DocumentSyncManager, resolve conflict: SyncConflict) async
                -> ConflictResolution?
            {
                seen.withLock { $0.append(conflict) }
                return .localWins
            }
        }
        let directory = TemporaryDirectory()
        let (a, b) = try await TestClient.pair(InMemoryFileSystem(), in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'start')")
        try await a.sync()
        try await b.sync()
        try b.execute("UPDATE notes SET title = 'B first' WHERE id = 'n1'")
        try a.execute("UPDATE notes SET title = 'A later' WHERE id = 'n1'")
        try await a.sync()
        let resolver = Resolver()
        b.document.delegate = resolver
        let report = try await b.sync()
        #expect(resolver.seen.current.map(\.column) == ["title"])
        #expect(report.conflicts.first?.decidedByResolver == true)
        try await converge(a, b)
        // B kept its value although A wrote later: the decision was recorded as a new change.
        #expect(try a.value("SELECT title FROM notes") == "B first")
        #expect(try NotesSchema.dump(a.store) == NotesSchema.dump(b.store))
    }
}
