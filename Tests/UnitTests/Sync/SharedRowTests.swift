import FolderSyncTesting
import Foundation
import GRDB
import Testing

@_spi(Tooling) @_spi(ModelAdapter) @testable import FolderSync
@testable import TestSupport

/// One row created on two devices before either syncs, under a `NOT NULL` column (issue 38, item 7): what a client
/// publishes never depends on an order its dependencies do not state, and a set a constraint refuses waits for the
/// sets that let it apply instead of failing the sync.
@Suite("Rows created on two devices")
struct SharedRowTests {
    /// A clock the test moves: writes are ordered by it, not by how fast the machine is.
    final class TestClock: Sendable {
        private let time = Locked(Date(timeIntervalSince1970: 1_800_000_000))
        var now: Date { time.current }
        func advance(seconds: TimeInterval) { time.withLock { $0 = $0.addingTimeInterval(seconds) } }

        func environment() -> SyncEnvironment {
            var environment = Fixture.quietEnvironment()
            environment.now = { [self] in now }
            return environment
        }
    }

    /// The notes schema with a note's title required.
    static let titleRequired = NotesSchema.createTables.replacingOccurrences(
        of: "title TEXT,", with: "title TEXT NOT NULL,")
    /// The notes schema of an app version that let a tag have no name.
    static let nameOptional = NotesSchema.createTables.replacingOccurrences(
        of: "tags(id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL)",
        with: "tags(id TEXT PRIMARY KEY NOT NULL, name TEXT)")

    @Test("An insert that lost a required column to another device's later write depends on that device's set")
    func partialInsertStatesItsDependency() async throws {
        let directory = TemporaryDirectory()
        let shared = directory.subdirectory("shared")
        let remote = FileManagerFileSystem(rootURL: shared)
        let clock = TestClock()
        func make(_ name: String) async throws -> TestClient {
            try await TestClient.make(
                remote, name: name, in: directory, createTables: Self.titleRequired,
                environment: clock.environment())
        }
        // Readers try change sets in client order: A's set comes first.
        let (a, b, c) = (try await make("A"), try await make("B"), try await make("C"))
        try a.execute("INSERT INTO notes(id, title, body) VALUES ('welcome', 'from A', 'A''s body')")
        clock.advance(seconds: 1)
        try b.execute("INSERT INTO notes(id, title, body) VALUES ('welcome', 'from B', 'B''s body')")
        clock.advance(seconds: 1)
        try a.execute("UPDATE notes SET body = 'A''s body, edited' WHERE id = 'welcome'")
        try await b.sync()
        try await a.sync()  // takes B's title; publishes its body, which is newer

        let folder = shared.appendingPathComponent("com.example.notes/Documents/DOC/SyncChanges/client-A")
        let published = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
        let set = try #require(published.first, "A published nothing")
        #expect(published.count == 1)
        #expect(try ChangeSetReader.readHeader(at: set, path: set.path).dependencies["client-B"] == 1)
        let report = try await c.sync()
        #expect(
            !report.warnings.contains { $0.kind == .changeSetRefused || $0.kind == .changeSetWaiting },
            "\(report.warnings)")
        try await converge(a, b, c)
        for client in [a, b, c] {
            #expect(
                try client.value("SELECT title || '/' || body FROM notes WHERE id = 'welcome'")
                    == "from B/A's body, edited")
        }
    }

    @Test(
        "A set that leaves a required column empty waits, naming the constraint, until a set supplies it; the sync goes on"
    )
    func refusedSetWaits() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let clock = TestClock()
        // A runs an app version whose tags may have no name; B and C require one.
        let a = try await TestClient.make(
            remote, name: "A", in: directory, createTables: Self.nameOptional,
            environment: clock.environment())
        let b = try await TestClient.make(remote, name: "B", in: directory, environment: clock.environment())
        let c = try await TestClient.make(remote, name: "C", in: directory, environment: clock.environment())
        try a.execute("INSERT INTO tags(id) VALUES ('tag:red')")
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'from A')")
        try await a.sync()
        try c.execute("INSERT INTO notes(id, title) VALUES ('n2', 'from C')")

        let waiting = try await c.sync()
        let refused = waiting.warnings.filter { $0.kind == .changeSetRefused }
        #expect(
            refused.count == 1 && refused.first?.message.contains("NOT NULL constraint failed: tags.name") == true,
            "\(waiting.warnings)")
        #expect(try c.value("SELECT count(*) FROM notes") == "1", "nothing of the refused set is applied")
        try await a.sync()
        #expect(try a.value("SELECT title FROM notes WHERE id = 'n2'") == "from C", "C's own change still went out")

        clock.advance(seconds: 1)
        try b.execute("INSERT INTO tags(id, name) VALUES ('tag:red', 'red')")
        try await b.sync()
        let applied = try await c.sync()
        #expect(!applied.warnings.contains { $0.kind == .changeSetRefused }, "\(applied.warnings)")
        try await converge(a, b, c)
        for client in [a, b, c] {
            #expect(try client.value("SELECT name FROM tags WHERE id = 'tag:red'") == "red")
            #expect(
                try client.value("SELECT group_concat(title, ',') FROM (SELECT title FROM notes ORDER BY id)")
                    == "from A,from C")
        }
    }

    @Test(
        "Both adapters alike: a write taking over an unpublished insert is said, the insert left with nothing is not staged, a refused set changes nothing"
    )
    func adaptersAgree() throws {
        let directory = TemporaryDirectory()
        let time = SimulatedTime()
        let memory = InMemoryModelAdapter(tables: SimulatedNotes.tables, now: time.clock(skew: 0))
        let sqlite = try GRDBSimulatorStore(
            url: directory.url.appendingPathComponent("notes.sqlite"), now: time.clock(skew: 0))
        let author = InMemoryModelAdapter(tables: SimulatedNotes.tables, now: time.clock(skew: 0))
        let stores: [any SimulatorStore] = [memory, sqlite]
        for store in stores {
            try store.insert(table: "tags", syncID: "tag:red", values: ["name": .text("red")])
            #expect(throws: (any Error).self) { try store.insert(table: "tags", syncID: "tag:blue", values: [:]) }
        }
        time.advance(byMilliseconds: 5)
        try author.insert(table: "tags", syncID: "tag:red", values: ["name": .text("Red")])
        try author.insert(table: "folders", syncID: "f1", values: ["name": .text("Work")])
        let supplying = try RowRegistersTests.changeSet(from: author, client: "A", sequence: 1)
        let refused = (
            ChangeSetHeader(
                changeSetIdentifier: "A-2", clientIdentifier: "A", sequence: 2, schemaVersion: 1, changeCount: 2,
                createdAt: Date(timeIntervalSince1970: 0)),
            [
                SyncChange(
                    kind: .insert, table: "notes", syncID: "n1",
                    columns: [
                        ColumnChange(column: "title", value: .text("t"), timestamp: HybridTimestamp(rawValue: 1 << 40))
                    ]),
                SyncChange(kind: .insert, table: "tags", syncID: "tag:green", columns: []),
            ]
        )

        var outcomes: [[ApplyOutcome]] = [[], []]
        var staged: [[SyncChange]] = [[], []]
        for (index, store) in stores.enumerated() {
            for (header, changes) in [supplying, refused] {
                outcomes[index].append(
                    try store.adapter.apply(
                        header, localClient: "L",
                        changes: { body in
                            for change in changes { try body(change) }
                        }, resolutions: [:]))
            }
            _ = try store.adapter.stageChanges(sequence: 1, emit: { staged[index].append($0) }, seal: { 1 })
        }
        // The in-memory adapter records no changed rows (``ApplyOutcome/changedRows``): compared without them.
        let withoutChangedRows = outcomes.map {
            $0.map { outcome in
                var outcome = outcome
                outcome.changedRows = ChangedRowLog()
                return outcome
            }
        }
        #expect(withoutChangedRows[0] == withoutChangedRows[1])
        #expect(outcomes[0].map(\.suppliedUnpublishedInsert) == [true, false])
        #expect(outcomes[0].map(\.unmetConstraint) == [nil, "NOT NULL constraint failed: tags.name"])
        #expect(outcomes[0].map(\.applied) == [true, false])
        #expect(try memory.allRows() == sqlite.allRows())
        #expect(memory.allRows().map(\.syncID) == ["f1", "tag:red"], "nothing of the refused set")
        #expect(staged[0] == staged[1] && staged[0].isEmpty, "an insert with nothing left to say: \(staged[0])")
    }

    @Test(
        "What a sync learned of the remote is saved by the apply it is passed to: in the set's own commit, or after a set a constraint refused"
    )
    func knowledgeSavedWithApply() throws {
        let directory = TemporaryDirectory()
        let time = SimulatedTime()
        let sqlite = try GRDBSimulatorStore(
            url: directory.url.appendingPathComponent("notes.sqlite"), now: time.clock(skew: 0))
        let author = InMemoryModelAdapter(tables: SimulatedNotes.tables, now: time.clock(skew: 0))
        try author.insert(table: "folders", syncID: "f1", values: ["name": .text("Work")])
        let (header, changes) = try RowRegistersTests.changeSet(from: author, client: "A", sequence: 1)
        let refused = ChangeSetHeader(
            changeSetIdentifier: "A-2", clientIdentifier: "A", sequence: 2, schemaVersion: 1, changeCount: 1,
            createdAt: Date(timeIntervalSince1970: 0))
        let nameless = [SyncChange(kind: .insert, table: "tags", syncID: "tag:green", columns: [])]
        func stream(_ changes: [SyncChange]) -> ChangeStream { { body in for change in changes { try body(change) } } }
        let commits = try FixedCostTests.Commits.counting(sqlite.store)
        _ = commits.take()

        var learned = LocalSyncState.RemoteKnowledge()
        learned.announcedSequence = 7
        let outcome = try sqlite.store.apply(
            header, localClient: "L", changes: stream(changes), resolutions: [:],
            savingRemoteKnowledge: learned)
        #expect(outcome.applied)
        #expect(commits.take() == 1, "the set and what the sync learned, in one commit")
        #expect(try sqlite.store.loadSyncState().remote == learned)

        learned.announcedSequence = 8
        let waiting = try sqlite.store.apply(
            refused, localClient: "L", changes: stream(nameless), resolutions: [:],
            savingRemoteKnowledge: learned)
        #expect(waiting.unmetConstraint != nil && !waiting.applied)
        #expect(try sqlite.store.loadSyncState().remote == learned, "saved although the set's transaction rolled back")
        #expect(try !sqlite.store.appliedChangeSets().contains(2, of: "A"))
    }
}
