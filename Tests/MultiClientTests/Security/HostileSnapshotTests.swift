import FolderSyncTesting
import Foundation
import GRDB
import Testing

@_spi(Tooling) @_spi(ModelAdapter) @testable import FolderSync
@testable import TestSupport

/// Issue 25, items 2 and 3: a whole store is another device's SQLite file, passed through a folder someone else
/// runs. It may hold only the synced tables (with the columns the app declares), their indexes and FolderSync's
/// merge metadata, and must pass SQLite's quick check, or nothing of it is installed.
@Suite("Hostile whole stores")
struct HostileSnapshotTests {
    /// A folder where A published 40 notes and a whole store, and a joiner C whose store holds an app-local secret.
    static func scene(_ directory: TemporaryDirectory) async throws -> (
        remote: FileManagerFileSystem, a: TestClient, c: TestClient, root: URL
    ) {
        let (remote, a) = try await WholeStoreInstallTests.publisher(in: directory)
        let c = try await WholeStoreInstallTests.joiner(remote, in: directory)
        try c.execute("INSERT INTO local_settings VALUES ('token', 'secret-of-C')")
        return (remote, a, c, directory.url.appendingPathComponent("remote"))
    }

    /// Plants `sql` in A's whole store.
    static func plant(_ sql: String, in a: TestClient, root: URL, scratch: URL) throws {
        let (file, manifest) = HostileFiles.wholeStore(of: a, remoteRoot: root)
        try HostileFiles.rewriteWholeStore(file, manifest: manifest, scratch: scratch) {
            try HostileFiles.execute(sql, on: $0)
        }
    }

    /// The error of `c`'s whole-store download, `nil` when it succeeded.
    static func downloadError(_ c: TestClient) async -> FolderSyncError? {
        do {
            _ = try await c.document.downloadWholeStore()
            return nil
        } catch {
            return error as? FolderSyncError ?? FolderSyncError(.localStoreFailed, "untyped: \(error)")
        }
    }

    /// What each hostile store holds, and the words the refusal must use.
    static let plantings: [(String, String, String)] = [
        (
            "trigger",
            """
            CREATE TRIGGER leak AFTER INSERT ON notes BEGIN
                UPDATE notes SET body = (SELECT group_concat(value) FROM local_settings) WHERE id = NEW.id;
            END
            """, "trigger"
        ),
        (
            "trigger named like the app's",
            """
            CREATE TRIGGER local_settings_logged AFTER INSERT ON notes BEGIN UPDATE notes SET title = 'owned' WHERE id = NEW.id; END
            """, "trigger"
        ),
        ("view", "CREATE VIEW local_summary AS SELECT title FROM notes", "view"),
        (
            "view named like a synced table",
            "ALTER TABLE tags RENAME TO tags_real; CREATE VIEW tags AS SELECT * FROM tags_real", "tags"
        ),
        (
            "unknown table",
            "CREATE TABLE local_settings(key TEXT PRIMARY KEY, value TEXT); INSERT INTO local_settings VALUES ('theme', 'planted')",
            "local_settings"
        ),
        ("virtual table", "CREATE VIRTUAL TABLE search USING fts5(body)", "virtual table"),
        ("extra column", "ALTER TABLE notes ADD COLUMN spy TEXT", "spy"),
        ("generated column", "ALTER TABLE notes ADD COLUMN echo TEXT GENERATED ALWAYS AS (title) VIRTUAL", "echo"),
        ("missing metadata column", "ALTER TABLE foldersync_shadow DROP COLUMN value", "value"),
        ("missing synced table", "DROP TABLE note_tags", "note_tags"),
    ]

    @Test(
        "A whole store holding anything but synced tables, their indexes and the merge metadata is refused before install, naming the store and what it holds",
        arguments: 0..<plantings.count)
    func refusedBeforeInstall(planting: Int) async throws {
        let (name, sql, words) = Self.plantings[planting]
        let directory = TemporaryDirectory()
        let (_, a, c, root) = try await Self.scene(directory)
        try Self.plant(sql, in: a, root: root, scratch: directory.url)
        let wholeStore = a.document.relativePathToThisDocumentWholeStoreThisClientDirectoryWholeStoreFile.description

        let error = try #require(await Self.downloadError(c), "\(name): the store should have been refused")
        #expect(
            error.code == .corruptFile && error.path == wholeStore && error.message.contains(words), "\(name): \(error)"
        )
        #expect(c.store.lastInstallCopiedPages.current == nil, "\(name): nothing may have been installed")
        #expect(try c.value("SELECT CAST(count(*) AS TEXT) FROM notes") == "0")
        #expect(
            try c.value("SELECT group_concat(key || '=' || value) FROM local_settings ORDER BY key")
                == "theme=dark,token=secret-of-C")
        #expect(
            try c.value(
                "SELECT group_concat(name) FROM sqlite_master WHERE type IN ('trigger', 'view') AND name NOT LIKE 'foldersync_%'"
            )
                == "local_settings_logged")
    }

    @Test(
        "The planted trigger never runs: the joiner syncs from the change sets instead, with a warning naming the store, and publishes no secret"
    )
    func plantedTriggerNeverRuns() async throws {
        let directory = TemporaryDirectory()
        let (_, a, c, root) = try await Self.scene(directory)
        try Self.plant(Self.plantings[0].1, in: a, root: root, scratch: directory.url)

        let report = try await c.sync()
        #expect(report.installedWholeStore == nil)
        let warning = try #require(report.warnings.first { $0.kind == .wholeStoreUnusable })
        #expect(
            warning.path == a.document.relativePathToThisDocumentWholeStoreThisClientDirectoryWholeStoreFile.description
        )
        #expect(
            try NotesSchema.dump(c.store) == NotesSchema.dump(a.store), "the change sets should have brought every note"
        )
        try c.execute("INSERT INTO notes(id, title, body) VALUES ('c1', 'from C', 'mine')")
        try await c.sync()
        try await a.sync()
        #expect(try a.value("SELECT body FROM notes WHERE id = 'c1'") == "mine")
        #expect(try a.value("SELECT CAST(count(*) AS TEXT) FROM notes WHERE body LIKE '%secret-of-C%'") == "0")
    }

    @Test(
        "Each install path checks the snapshot itself: the row merge (restoreSnapshot) and the new device's rename (openStore)"
    )
    func everyInstallPathChecks() async throws {
        let directory = TemporaryDirectory()
        let (remote, a, c, root) = try await Self.scene(directory)
        // A file that did not come through WholeStoreReader: restoreSnapshot, a public API, must refuse it on its own.
        let (file, manifestFile) = HostileFiles.wholeStore(of: a, remoteRoot: root)
        let snapshot = directory.url.appendingPathComponent("direct.sqlite")
        _ = try WholeStoreFile.read(file, to: snapshot, path: "honest")
        try HostileFiles.execute("CREATE TABLE planted(x); CREATE VIEW planted_view AS SELECT 1", on: snapshot)
        try c.execute("INSERT INTO notes(id, title) VALUES ('mine', 'a synced row: the row merge path')")
        #expect(throws: FolderSyncError.self) {
            try c.store.restoreSnapshot(from: snapshot, covers: [:], localClient: "client-C")
        }
        #expect(try c.value("SELECT group_concat(id) FROM notes") == "mine")
        #expect(try c.value("SELECT CAST(count(*) AS TEXT) FROM sqlite_master WHERE name LIKE 'planted%'") == "0")

        // A new device opening its store from the remote: the hostile store is skipped, the store opened empty.
        try Self.plant("CREATE TABLE planted(x)", in: a, root: root, scratch: directory.url)
        _ = manifestFile
        let (newDevice, url) = try await NewDeviceStoreTests.newDevice(remote, name: "N", in: directory)
        let store = try await newDevice.openStore(at: url, NewDeviceStoreTests.openApp())
        let (planted, notes) = try await store.database.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master WHERE name = 'planted'"),
                try Int.fetchOne(db, sql: "SELECT count(*) FROM notes")
            )
        }
        #expect(planted == 0 && notes == 0)
    }

    @Test(
        "A store with malformed pages (checksums recomputed) fails SQLite's quick check while it is downloaded: the next store is installed"
    )
    func malformedPagesSkipped() async throws {
        let directory = TemporaryDirectory()
        let (remote, a, c, root) = try await Self.scene(directory)
        // B covers one more change set than A: its store is the first choice.
        let b = WholeStoreTests.manual(try await TestClient.make(remote, name: "B", in: directory))
        try await b.sync()
        try b.execute("INSERT INTO notes(id, title) VALUES ('b1', 'from B')")
        try await b.sync()
        _ = try #require(try await b.document.uploadWholeStore())
        let (file, manifest) = HostileFiles.wholeStore(of: b, remoteRoot: root)
        try HostileFiles.rewriteWholeStore(file, manifest: manifest, scratch: directory.url) {
            try HostileFiles.corruptRootPage(of: "notes", in: $0)
        }

        let installed = try #require(try await c.document.downloadWholeStore())
        #expect(installed.clientIdentifier == "client-A", "the damaged store of B should have been skipped for A's")
        #expect(try c.value("PRAGMA quick_check") == "ok")
        #expect(try c.value("SELECT CAST(count(*) AS TEXT) FROM notes") == "40")
        _ = a
    }

    @Test(
        "A store with malformed pages and no other store: refused with corruptFile naming it, the local store untouched and readable"
    )
    func malformedPagesRefused() async throws {
        let directory = TemporaryDirectory()
        let (_, a, c, root) = try await Self.scene(directory)
        let (file, manifest) = HostileFiles.wholeStore(of: a, remoteRoot: root)
        try HostileFiles.rewriteWholeStore(file, manifest: manifest, scratch: directory.url) {
            try HostileFiles.corruptRootPage(of: "notes", in: $0)
        }

        let error = try #require(await Self.downloadError(c), "the store should have been refused")
        #expect(error.code == .corruptFile && error.message.contains("quick check"), "\(error)")
        #expect(
            error.path == a.document.relativePathToThisDocumentWholeStoreThisClientDirectoryWholeStoreFile.description)
        #expect(try c.value("PRAGMA quick_check") == "ok")
        #expect(try c.value("SELECT CAST(count(*) AS TEXT) FROM notes") == "0")
        // And the next sync works, from the change sets.
        #expect(try await c.sync().warnings.contains { $0.kind == .wholeStoreUnusable })
        #expect(try NotesSchema.dump(c.store) == NotesSchema.dump(a.store))
    }

    @Test(
        "Honest stores still install: an app view identical to the receiver's, sqlite_stat1 from PRAGMA optimize, an older schema lacking a column"
    )
    func honestVariantsInstall() async throws {
        let directory = TemporaryDirectory()
        let (_, a, c, root) = try await Self.scene(directory)
        try c.execute("CREATE VIEW titles AS SELECT id, title FROM notes")
        try Self.plant(
            """
            CREATE VIEW titles AS SELECT id, title FROM notes;
            ANALYZE;
            ALTER TABLE folders DROP COLUMN name;
            """, in: a, root: root, scratch: directory.url)
        let installed = try await c.document.downloadWholeStore()
        #expect(installed?.clientIdentifier == "client-A")
        #expect(try c.value("SELECT CAST(count(*) AS TEXT) FROM titles") == "40")
    }

    @Test("The app's connection is defensive and does not trust its schema; so are the connections on a snapshot")
    func connectionsHardened() async throws {
        let directory = TemporaryDirectory()
        let store = try NotesSchema.open(directory.url.appendingPathComponent("notes.sqlite"))
        let (trusted, hardened) = try await store.database.read { db in
            (try Int.fetchOne(db, sql: "PRAGMA trusted_schema"), SQLiteHardening.isHardened(db))
        }
        #expect(trusted == 0 && hardened)
        // Defensive mode: SQL cannot rewrite the schema table, which it could before.
        #expect(throws: (any Error).self) {
            try store.database.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA writable_schema = ON")
                try db.execute(
                    sql: "UPDATE sqlite_master SET sql = replace(sql, 'title', 'titel') WHERE name = 'notes'")
            }
        }
        // Change capture, which calls FolderSync's functions from triggers, still works under trusted_schema = OFF.
        try await store.database.write { db in try db.execute(sql: "INSERT INTO notes(id, title) VALUES ('n1', 'x')") }
        #expect(try store.hasUnpublishedChanges())
        let scratch = try DatabaseQueue(
            path: directory.url.appendingPathComponent("scratch.sqlite").path,
            configuration: SQLiteHardening.configuration())
        #expect(try await scratch.read { SQLiteHardening.isHardened($0) })
    }
}
