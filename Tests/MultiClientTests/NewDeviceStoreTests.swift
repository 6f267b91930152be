import FolderSyncTesting
import Foundation
import GRDB
import Testing

@_spi(Tooling) @_spi(ModelAdapter) @_spi(Testing) @testable import FolderSync
@testable import TestSupport

/// A new device's first open (`DocumentSyncManager.openStore(at:_:)`): the store's file is made from the remote's
/// whole store and put in place by a rename, before the app opens it.
@Suite("New device: store opened from a whole store")
struct NewDeviceStoreTests {
    /// A registered manager of client `name` created without a store, as a new device has it.
    static func newDevice(_ remote: FileManagerFileSystem, name: String = "C", in directory: TemporaryDirectory)
        async throws
        -> (document: DocumentSyncManager, storeURL: URL)
    {
        let folder = directory.subdirectory(name)
        let app = ApplicationSyncManager(remote: remote, environment: Fixture.quietEnvironment())
        try await app.register(
            .init(
                applicationIdentifier: "com.example.notes", clientIdentifier: "client-\(name)", clientDescription: name)
        )
        let document = try DocumentSyncManager(
            applicationSyncManager: app,
            configuration: .init(
                documentIdentifier: "DOC", documentDescription: "Notes",
                helperDirectory: folder.appendingPathComponent("helper")))
        var policy = SyncPolicy()
        policy.wholeStoreUploadAfterChangeSets = nil
        policy.wholeStoreUploadAfterBytes = nil
        document.policy = policy
        try await document.registerConfigured()
        return (document, folder.appendingPathComponent("notes.sqlite"))
    }

    /// How the app opens its store: a migration by schema version (`user_version`), which must not run again on
    /// the installed file, creates the notes schema and an app-local table; with `declaredOtherwise`, a notes
    /// table declared in other words than the store's.
    static func openApp(declaredOtherwise: Bool = false) -> (URL) throws -> GRDBStore {
        { url in
            try GRDBStore(path: url.path, tables: NotesSchema.tables) { db in
                guard try Int.fetchOne(db, sql: "PRAGMA user_version") == 0 else { return }
                if declaredOtherwise {
                    try db.execute(
                        sql:
                            "CREATE TABLE notes(id TEXT NOT NULL PRIMARY KEY, title TEXT, body TEXT, folder_id TEXT REFERENCES folders(id))"
                    )
                }
                try db.execute(sql: NotesSchema.createTables)
                try db.execute(
                    sql: """
                        CREATE TABLE local_settings(key TEXT PRIMARY KEY, value TEXT);
                        INSERT INTO local_settings VALUES ('theme', 'dark');
                        PRAGMA user_version = 7;
                        """)
            }
        }
    }

    static func dump(_ document: DocumentSyncManager) throws -> [String] {
        try NotesSchema.dump(try #require(document.store as? GRDBStore))
    }

    @Test(
        "The whole store becomes the new device's file, completed with the app's own tables, and the first sync brings only later sets"
    )
    func installedByRename() async throws {
        let directory = TemporaryDirectory()
        let (remote, a) = try await WholeStoreInstallTests.publisher(in: directory)
        try a.execute("UPDATE notes SET title = 'after the store' WHERE id = 'n1'")
        try await a.sync()
        let (c, url) = try await Self.newDevice(remote, in: directory)

        let store = try await c.openStore(at: url, Self.openApp())
        #expect(c.store as? GRDBStore === store)
        #expect(
            store.lastInstallCopiedPages.current == nil,
            "the store should have been renamed into place, not copied into")
        #expect(try NotesSchema.dump(store).count == 40)
        let (setting, userVersion, integrity) = try await store.database.read { db in
            (
                try String.fetchOne(db, sql: "SELECT value FROM local_settings WHERE key = 'theme'"),
                try Int.fetchOne(db, sql: "PRAGMA user_version"),
                try String.fetchOne(db, sql: "PRAGMA integrity_check")
            )
        }
        #expect(setting == "dark" && userVersion == 7 && integrity == "ok")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path).filter
        { $0.contains("foldersync-join") }
        #expect(leftovers.isEmpty)

        let first = try await c.synchronize()
        #expect(
            first.installedWholeStore == nil && first.changeSetsApplied == 1,
            "only the set after the whole store should be applied")
        #expect(try Self.dump(c) == NotesSchema.dump(a.store))
        // Change capture and the clock work on the installed file, and its writes reach A.
        try await store.database.write { db in
            try db.execute(sql: "UPDATE notes SET body = 'edited on C' WHERE id = 'n2'")
        }
        #expect(try await c.synchronize().changeSetsSent == 1)
        try await a.sync()
        #expect(try a.value("SELECT body FROM notes WHERE id = 'n2'") == "edited on C")
        #expect(try NotesSchema.dump(a.store) == Self.dump(c))
    }

    @Test(
        "An existing file is opened as it is; a manager with a store, or not registered, is refused with nothing created"
    )
    func existingFileAndMisuse() async throws {
        let directory = TemporaryDirectory()
        let (remote, _) = try await WholeStoreInstallTests.publisher(in: directory)
        let (c, url) = try await Self.newDevice(remote, in: directory)
        let existing = try Self.openApp()(url)
        try await existing.database.write { db in
            try db.execute(sql: "INSERT INTO local_settings VALUES ('mine', 'kept')")
        }
        try existing.close()

        let store = try await c.openStore(at: url, Self.openApp())
        #expect(try NotesSchema.dump(store).isEmpty, "an existing store must not be replaced")
        #expect(
            try await store.database.read {
                try String.fetchOne($0, sql: "SELECT value FROM local_settings WHERE key = 'mine'")
            } == "kept")
        await #expect { try await c.openStore(at: url, Self.openApp()) } throws: {
            ($0 as? FolderSyncError)?.code == .invalidConfiguration
        }

        let app = ApplicationSyncManager(remote: remote, environment: Fixture.quietEnvironment())
        try await app.register(
            .init(applicationIdentifier: "com.example.notes", clientIdentifier: "client-D", clientDescription: "D"))
        let unregistered = try DocumentSyncManager(
            applicationSyncManager: app,
            configuration: .init(
                documentIdentifier: "DOC", documentDescription: "Notes", helperDirectory: directory.subdirectory("D")))
        let other = directory.subdirectory("D-store").appendingPathComponent("notes.sqlite")
        await #expect { try await unregistered.openStore(at: other, Self.openApp()) } throws: {
            ($0 as? FolderSyncError)?.code == .notRegistered
        }
        #expect(!FileManager.default.fileExists(atPath: other.path))
    }

    @Test("Without a whole store the file opens new, and a join killed before left nothing behind")
    func noWholeStore() async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let a = WholeStoreTests.manual(try await TestClient.make(remote, name: "A", in: directory))
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'from A')")
        try await a.sync()
        let (c, url) = try await Self.newDevice(remote, in: directory)
        let killed = url.deletingLastPathComponent().appendingPathComponent(".notes.sqlite.foldersync-join/download")
        try FileManager.default.createDirectory(at: killed, withIntermediateDirectories: true)
        try Data("half a snapshot".utf8).write(to: killed.appendingPathComponent("snapshot.sqlite"))

        let store = try await c.openStore(at: url, Self.openApp())
        #expect(try NotesSchema.dump(store).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: killed.deletingLastPathComponent().path))
        #expect(try await c.synchronize().changeSetsApplied == 1)
        #expect(try Self.dump(c) == NotesSchema.dump(a.store))
    }

    @Test(
        "When the app declares a synced table otherwise than the whole store, the store's rows are merged into the opened file instead"
    )
    func declaredOtherwise() async throws {
        let directory = TemporaryDirectory()
        let (remote, a) = try await WholeStoreInstallTests.publisher(in: directory)
        let (c, url) = try await Self.newDevice(remote, in: directory)
        let store = try await c.openStore(at: url, Self.openApp(declaredOtherwise: true))
        #expect(store.lastInstallCopiedPages.current == false, "the rows should have been merged")
        #expect(try NotesSchema.dump(store) == NotesSchema.dump(a.store))
        #expect(
            try await store.database.read {
                try String.fetchOne($0, sql: "SELECT value FROM local_settings WHERE key = 'theme'")
            } == "dark")
        try await store.database.write { db in
            try db.execute(sql: "INSERT INTO notes(id, title) VALUES ('c1', 'from C')")
        }
        try await c.synchronize()
        try await a.sync()
        #expect(try NotesSchema.dump(a.store) == Self.dump(c))
    }

    @Test("A damaged whole store is not installed: the file opens new and the first sync starts from the change sets")
    func damagedWholeStore() async throws {
        let directory = TemporaryDirectory()
        let (remote, a) = try await WholeStoreInstallTests.publisher(in: directory)
        let file = WholeStoreInstallTests().wholeStoreFile(a, in: directory)
        var bytes = try Data(contentsOf: file)
        bytes[bytes.count / 2] ^= 0x01
        try bytes.write(to: file)
        let (c, url) = try await Self.newDevice(remote, in: directory)
        let store = try await c.openStore(at: url, Self.openApp())
        #expect(try NotesSchema.dump(store).isEmpty)
        let first = try await c.synchronize()
        #expect(first.warnings.contains { $0.kind == .wholeStoreUnusable })
        #expect(try Self.dump(c) == NotesSchema.dump(a.store))
    }

    @Test("A reopened store's first write is stamped after every register it holds, even ones ahead of the wall clock")
    func clockSeededOnReopen() async throws {
        let directory = TemporaryDirectory()
        let url = directory.subdirectory("store").appendingPathComponent("notes.sqlite")
        let ahead = Date().addingTimeInterval(3600)
        let early = try NotesSchema.open(url, now: { ahead })
        try await early.database.write { db in
            try db.execute(sql: "INSERT INTO notes(id, title) VALUES ('n1', 'from the future')")
        }
        let key = ColumnKey(table: "notes", syncID: "n1", column: "title")
        let future = try #require(try early.stamp(of: key, localClient: "me")).timestamp
        try early.close()

        let reopened = try NotesSchema.open(url)
        try await reopened.database.write { db in try db.execute(sql: "UPDATE notes SET title = 'now' WHERE id = 'n1'")
        }
        #expect(try #require(try reopened.stamp(of: key, localClient: "me")).timestamp > future)
    }
}
