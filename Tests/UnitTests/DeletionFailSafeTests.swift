@_spi(ModelAdapter) import FolderSyncTesting
import Foundation
import GRDB
import Testing

@_spi(Tooling) @_spi(ModelAdapter) @testable import FolderSync
@testable import TestSupport

/// A sync that would delete most of a table's rows stops and asks first; declining leaves the local store untouched.
@Suite("Deletion fail-safe")
struct DeletionFailSafeTests {
    /// Two clients on a real folder sharing `count` notes.
    static func shared(notes count: Int, in directory: TemporaryDirectory) async throws -> (TestClient, TestClient) {
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let (a, b) = try await TestClient.pair(remote, in: directory)
        try await a.store.database.write { db in
            for index in 0..<count {
                try db.execute(
                    sql: "INSERT INTO notes(id, title) VALUES (?, ?)",
                    arguments: [String(format: "n%03d", index), "note \(index)"])
            }
        }
        try await converge(a, b)
        return (a, b)
    }

    /// Everything the fail-safe must leave alone when it declines: the rows and the ledger.
    static func localState(_ client: TestClient) throws -> [String] {
        let ledger = try client.store.appliedChangeSets()
        let clients = Set(ledger.contiguous.keys).union(ledger.beyond.keys)
        return try NotesSchema.dump(client.store) + clients.sorted().map { "\($0) \(ledger.sequences(of: $0))" }
    }

    /// Answers with `answer` and remembers what it was asked.
    final class Asker: Sendable {
        let asked = Locked<[MassDeletion]>([])
        let answer: Bool
        init(answer: Bool) { self.answer = answer }
        var handler: @Sendable (MassDeletion) async -> Bool {
            { deletion in
                self.asked.withLock { $0.append(deletion) }
                return self.answer
            }
        }
    }

    @Test(
        "Without a handler or delegate a mass deletion is declined: typed error, nothing applied, asked again next time"
    )
    func declinedByDefault() async throws {
        let directory = TemporaryDirectory()
        let (a, b) = try await Self.shared(notes: 200, in: directory)
        try a.execute("DELETE FROM notes WHERE id < 'n150'")
        try a.execute("UPDATE notes SET title = 'kept' WHERE id = 'n199'")
        try await a.sync()
        let before = try Self.localState(b)

        let error = await #expect(throws: FolderSyncError.self) { try await b.sync() }
        #expect(error?.code == .massDeletionDeclined)
        #expect(error?.message.contains("150 of 200 rows of notes") == true, "\(String(describing: error))")
        #expect(try Self.localState(b) == before, "a declined sync changed the local store")
        await #expect(throws: FolderSyncError.self) { try await b.sync() }
        #expect(try Self.localState(b) == before)
    }

    @Test("The handler is asked once with the tables and change sets; yes applies everything and the replicas converge")
    func confirmedByHandler() async throws {
        let directory = TemporaryDirectory()
        let (a, b) = try await Self.shared(notes: 200, in: directory)
        try a.execute("DELETE FROM notes WHERE id >= 'n050'")
        try await a.sync()
        let asker = Asker(answer: true)
        b.document.massDeletionHandler = asker.handler
        let report = try await b.sync()
        #expect(
            asker.asked.current.map(\.tables) == [[MassDeletion.Table(table: "notes", rowsDeleted: 150, rowCount: 200)]]
        )
        #expect(asker.asked.current.first?.changeSets.count == 1)
        #expect(report.confirmedMassDeletion == asker.asked.current.first)
        #expect(try b.value("SELECT count(*) FROM notes") == "50")
        try await converge(a, b)
        #expect(try NotesSchema.dump(a.store) == NotesSchema.dump(b.store))
    }

    @Test("A delegate that declines stops the sync; the handler takes precedence over it")
    func delegate() async throws {
        final class Declining: DocumentSyncManagerDelegate, @unchecked Sendable {
            let asked = Locked(0)
            func documentSyncManager(_ manager: DocumentSyncManager, shouldApply deletion: MassDeletion) async -> Bool {
                asked.withLock { $0 += 1 }
                return false
            }
        }
        let directory = TemporaryDirectory()
        let (a, b) = try await Self.shared(notes: 120, in: directory)
        try a.execute("DELETE FROM notes")
        try await a.sync()
        let delegate = Declining()
        b.document.delegate = delegate
        await #expect(throws: FolderSyncError.self) { try await b.sync() }
        #expect(delegate.asked.current == 1)
        #expect(try b.value("SELECT count(*) FROM notes") == "120")
        b.document.massDeletionHandler = Asker(answer: true).handler
        try await b.sync()
        #expect(delegate.asked.current == 1)
        #expect(try b.value("SELECT count(*) FROM notes") == "0")
    }

    @Test("Deletions spread over several change sets of one sync count together")
    func spreadOverChangeSets() async throws {
        let directory = TemporaryDirectory()
        let (a, b) = try await Self.shared(notes: 200, in: directory)
        for range in [("n000", "n060"), ("n060", "n120")] {
            try a.execute("DELETE FROM notes WHERE id >= ? AND id < ?", [range.0, range.1])
            try await a.sync()
        }
        let asker = Asker(answer: false)
        b.document.massDeletionHandler = asker.handler
        await #expect(throws: FolderSyncError.self) { try await b.sync() }
        #expect(
            asker.asked.current.first?.tables == [MassDeletion.Table(table: "notes", rowsDeleted: 120, rowCount: 200)])
        #expect(asker.asked.current.first?.changeSets.count == 2)
        #expect(try b.value("SELECT count(*) FROM notes") == "200")
    }

    @Test("Small tables, small shares and a disabled fail-safe never ask; the share and the size are configurable")
    func thresholds() async throws {
        let directory = TemporaryDirectory()
        let (a, b) = try await Self.shared(notes: 200, in: directory)
        let asker = Asker(answer: false)
        b.document.massDeletionHandler = asker.handler
        // Half exactly is not more than half.
        try a.execute("DELETE FROM notes WHERE id < 'n100'")
        try await a.sync()
        try await b.sync()
        #expect(asker.asked.current.isEmpty)
        // 100 rows left: not over 100, so deleting them all does not ask.
        try a.execute("DELETE FROM notes WHERE id < 'n190'")
        try await a.sync()
        try await b.sync()
        #expect(asker.asked.current.isEmpty)
        #expect(try b.value("SELECT count(*) FROM notes") == "10")

        let other = TemporaryDirectory()
        let (c, d) = try await Self.shared(notes: 200, in: other)
        d.document.massDeletionHandler = asker.handler
        d.document.policy.deletionFailSafe = DeletionFailSafe(maximumShare: 0.1, minimumTableRows: 150)
        try c.execute("DELETE FROM notes WHERE id < 'n030'")
        try await c.sync()
        await #expect(throws: FolderSyncError.self) { try await d.sync() }
        #expect(asker.asked.current.count == 1)
        d.document.policy.deletionFailSafe = nil
        try await d.sync()
        #expect(asker.asked.current.count == 1)
        #expect(try d.value("SELECT count(*) FROM notes") == "170")
    }

    @Test(
        "A store tells whether a synced table has more rows than the fail-safe's minimum, the in-memory adapter alike")
    func tableLargerThan() async throws {
        let directory = TemporaryDirectory()
        let (a, b) = try await Self.shared(notes: 100, in: directory)
        #expect(try a.store.hasTable(largerThan: 100) == false)
        #expect(try a.store.hasTable(largerThan: 99))
        #expect(try b.store.hasTable(largerThan: 99), "B holds the synced rows too")
        try a.execute("DELETE FROM notes WHERE id = 'n000'")
        #expect(try a.store.hasTable(largerThan: 99) == false)

        let memory = InMemoryModelAdapter(tables: SimulatedNotes.tables)
        #expect(try memory.hasTable(largerThan: 0) == false)
        try memory.insert(table: "tags", syncID: "t1", values: ["name": .text("one")])
        #expect(try memory.hasTable(largerThan: 0))
        #expect(try memory.hasTable(largerThan: 1) == false)
    }
}
