import Foundation
import GRDB
import TestProcesses
import Testing

@_spi(Tooling) @_spi(ModelAdapter) @testable import FolderSync
@testable import TestSupport

/// The `sqlite3` shell, as a user without the app runs it on a document.
enum SQLiteShell {
    static func run(_ path: URL, _ sql: String) async throws -> Subprocess.Result {
        await (try Subprocess.start("sqlite3", ["-bail", path.path, sql])).finished()
    }
}

/// Leaving sync: a document becomes a plain SQLite file again, and can be attached again later.
@Suite("Detach")
struct DetachTests {
    /// The FolderSync objects left in a database file: triggers and tables named `foldersync_…`.
    static func bookkeeping(_ path: URL) throws -> [String] {
        try DatabaseQueue(path: path.path).read { db in
            try String.fetchAll(
                db, sql: "SELECT type || ' ' || name FROM sqlite_master WHERE name LIKE 'foldersync%' ORDER BY name")
        }
    }

    /// A and B on a local folder, having synced A's note n1.
    static func syncedPair(_ directory: TemporaryDirectory) async throws -> (
        FileManagerFileSystem, TestClient, TestClient
    ) {
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let (a, b) = try await TestClient.pair(remote, in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'from A')")
        try await converge(a, b)
        return (remote, a, b)
    }

    @Test("While attached, a write from the sqlite3 shell fails naming FolderSync and the way out, and changes nothing")
    func foreignWriteSaysWhy() async throws {
        let directory = TemporaryDirectory()
        let path = directory.url.appendingPathComponent("notes.sqlite")
        let store = try NotesSchema.open(path)
        try await store.database.write { try $0.execute(sql: "INSERT INTO notes(id, title) VALUES ('n1', 'kept')") }
        for (kind, sql) in [
            ("insert", "INSERT INTO notes(id, title) VALUES ('n2', 'x')"),
            ("update", "UPDATE notes SET title = 'x' WHERE id = 'n1'"),
            ("delete", "DELETE FROM notes WHERE id = 'n1'"),
        ] {
            let result = try await SQLiteShell.run(path, sql)
            #expect(result.status != 0, "\(kind): \(result.output)")
            #expect(result.errors.contains("FolderSync tracks this table (\(kind))"), "\(kind): \(result.errors)")
            #expect(
                result.errors.contains(
                    "write through the app that syncs it, or detach the file first: foldersync store detach"),
                "\(kind): \(result.errors)")
        }
        #expect(
            try await store.database.read { try String.fetchAll($0, sql: "SELECT id || ' ' || title FROM notes") } == [
                "n1 kept"
            ])
        // A table FolderSync does not track is the app's to write from anywhere.
        try await store.database.write { try $0.execute(sql: "CREATE TABLE IF NOT EXISTS local(v TEXT)") }
        #expect(try await SQLiteShell.run(path, "INSERT INTO local VALUES ('ok')").status == 0)
        try store.close()
    }

    @Test(
        "foldersync store detach leaves a plain SQLite file: the sqlite3 shell writes it, every row kept, the helper folder gone"
    )
    func detachThroughTheTool() async throws {
        let directory = TemporaryDirectory()
        let path = directory.url.appendingPathComponent("notes.sqlite")
        let helper = directory.subdirectory("helper")
        try Data("x".utf8).write(to: helper.appendingPathComponent("Status.plist"))
        let store = try NotesSchema.open(path)
        try await store.database.write { db in
            try db.execute(sql: "INSERT INTO folders(id, name) VALUES ('f1', 'Inbox')")
            try db.execute(sql: "INSERT INTO notes(id, title, folder_id) VALUES ('n1', 'kept', 'f1')")
        }
        // The two rows were never published: the detach stops, and says so, until told to keep them here.
        let refused = try await FoldersyncTool.run(["store", "detach", path.path, "--helper", helper.path])
        #expect(refused.status == 2)
        #expect(
            refused.errors.contains("2 rows (folders 1, notes 1) hold local changes no other device has"),
            "\(refused.errors)")
        #expect(try Self.bookkeeping(path).contains("trigger foldersync_notes_insert"))
        try store.close()

        let result = try await FoldersyncTool.run([
            "store", "detach", path.path, "--helper", helper.path, "--keep-unpublished", "--json",
        ])
        #expect(result.status == 0, "\(result.errors)")
        let output = try FoldersyncTool.json(StoreDetachJSON.self, result)
        #expect(output.untrackedTables == ["folders", "note_tags", "notes", "tags"])
        #expect(output.unpublishedChanges == ["folders": 1, "notes": 1])
        #expect(output.keptHelperItems.isEmpty && output.leftSharedFolder == nil)
        #expect(try Self.bookkeeping(path).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: helper.path))

        let write = try await SQLiteShell.run(
            path,
            "INSERT INTO notes(id, title) VALUES ('n2', 'by the shell'); UPDATE notes SET title = 'edited' WHERE id = 'n1'"
        )
        #expect(write.status == 0, "\(write.errors)")
        let rows = try await SQLiteShell.run(
            path, "SELECT id || ' ' || title || ' ' || ifnull(folder_id, '-') FROM notes ORDER BY id")
        #expect(rows.output == "n1 edited f1\nn2 by the shell -\n")
        // Detaching again finds nothing to do.
        let again = try await FoldersyncTool.run(["store", "detach", path.path])
        #expect(again.status == 0 && again.output.contains("had no change tracking"), "\(again.output)\(again.errors)")
    }

    struct StoreDetachJSON: Decodable {
        var document: String
        var untrackedTables: [String]
        var unpublishedChanges: [String: Int]
        var keptHelperItems: [String]
        var leftSharedFolder: String?
    }

    @Test(
        "A document with rows opened as a store for the first time records each row as a new local change, which a sync publishes"
    )
    func firstOpenKeepsTheRows() async throws {
        let directory = TemporaryDirectory()
        let path = directory.url.appendingPathComponent("A/notes.sqlite")
        try FileManager.default.createDirectory(at: path.deletingLastPathComponent(), withIntermediateDirectories: true)
        let plain = try DatabaseQueue(path: path.path)
        try await plain.write { db in
            try db.execute(sql: NotesSchema.createTables)
            try db.execute(sql: "INSERT INTO notes(id, title) VALUES ('n1', 'kept'), ('n2', 'kept too')")
        }
        try plain.close()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let b = try await TestClient.make(remote, name: "B", in: directory)
        try b.execute("INSERT INTO notes(id, title) VALUES ('b1', 'from B')")
        try await b.sync()
        _ = try await b.document.uploadWholeStore()  // A's first sync installs it: A's rows must survive that
        let a = try await TestClient.make(remote, name: "A", in: directory)
        #expect(try a.store.unpublishedChanges() == UnpublishedChanges(rowsByTable: ["notes": 2]))
        try await converge(a, b)
        #expect(try b.value("SELECT group_concat(id) FROM (SELECT id FROM notes ORDER BY id)") == "b1,n1,n2")
        #expect(try NotesSchema.dump(a.store) == (try NotesSchema.dump(b.store)))
    }

    @Test(
        "stopSyncing publishes first, leaves the folder's client list, and attaching again is a first registration keeping the rows"
    )
    func stopSyncingAndAttachAgain() async throws {
        let directory = TemporaryDirectory()
        let (remote, a, b) = try await Self.syncedPair(directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n2', 'unpublished at detach')")
        let report = try await a.document.stopSyncing()
        #expect(report.unpublishedChanges == UnpublishedChanges(rowsByTable: ["notes": 1]) && report.publishedFirst)
        #expect(report.leftSharedFolder && report.untrackedTables == ["folders", "note_tags", "notes", "tags"])
        #expect(a.document.state != .ableToSync && a.document.store == nil)
        await #expect(throws: FolderSyncError.self) { try await a.document.synchronize() }
        let path = directory.url.appendingPathComponent("A/notes.sqlite")
        let helper = directory.url.appendingPathComponent("A/helper")
        #expect(try Self.bookkeeping(path).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: helper.path))
        // B has what A published last, and sees A deleted: A holds no vacuum back.
        try await b.sync()
        #expect(try b.value("SELECT title FROM notes WHERE id = 'n2'") == "unpublished at detach")
        let clients = try await b.document.registeredClients()
        #expect(clients.first { $0.identifier == "client-A" }?.isDeleted == true)

        // Detached, the file is the user's: the shell writes it while B goes on.
        try a.store.close()
        let write = try await SQLiteShell.run(
            path, "INSERT INTO notes(id, title) VALUES ('n3', 'written while detached')")
        #expect(write.status == 0, "\(write.errors)")
        try b.execute("INSERT INTO notes(id, title) VALUES ('b1', 'from B meanwhile')")
        try await b.sync()

        // Attached again, as a new device would be: its rows travel, B's arrive, nothing is lost.
        let again = try await TestClient.make(remote, name: "A", in: directory)
        try await converge(again, b)
        let expected = ["b1 from B meanwhile", "n1 from A", "n2 unpublished at detach", "n3 written while detached"]
        #expect(
            try await again.store.database.read {
                try String.fetchAll($0, sql: "SELECT id || ' ' || title FROM notes ORDER BY id")
            } == expected)
        #expect(try NotesSchema.dump(again.store) == (try NotesSchema.dump(b.store)))
        #expect(try await b.document.registeredClients().first { $0.identifier == "client-A" }?.isDeleted == false)
    }

    @Test(
        "foldersync store detach --remote leaves the shared folder as the device itself would: attaching again needs no rejoin"
    )
    func detachThroughTheToolLeavingTheFolder() async throws {
        let directory = TemporaryDirectory()
        let (remote, a, b) = try await Self.syncedPair(directory)
        let root = remote.rootURL
        try a.store.close()
        let path = directory.url.appendingPathComponent("A/notes.sqlite")
        let helper = directory.url.appendingPathComponent("A/helper")
        let result = try await FoldersyncTool.run([
            "store", "detach", path.path, "--helper", helper.path, "--remote", root.path, "--json",
        ])
        #expect(result.status == 0, "\(result.errors)")
        #expect(try FoldersyncTool.json(StoreDetachJSON.self, result).leftSharedFolder == "client-A")
        #expect(try await b.document.registeredClients().first { $0.identifier == "client-A" }?.isDeleted == true)
        let again = try await TestClient.make(remote, name: "A", in: directory)
        try await converge(again, b)
        #expect(try NotesSchema.dump(again.store) == (try NotesSchema.dump(b.store)))
    }

    @Test(
        "stopSyncing without removing tracking: the store keeps capturing, and what it wrote meanwhile travels when attached again"
    )
    func stopSyncingKeepingTracking() async throws {
        let directory = TemporaryDirectory()
        let (remote, a, b) = try await Self.syncedPair(directory)
        let report = try await a.document.stopSyncing(removingTracking: false)
        #expect(report.leftSharedFolder && report.untrackedTables.isEmpty && !report.publishedFirst)
        #expect(
            try Self.bookkeeping(directory.url.appendingPathComponent("A/notes.sqlite")).contains(
                "trigger foldersync_notes_insert"))
        try a.execute("INSERT INTO notes(id, title) VALUES ('n2', 'while away')")
        try a.store.close()
        let again = try await TestClient.make(remote, name: "A", in: directory)
        try await converge(again, b)
        #expect(try b.value("SELECT title FROM notes WHERE id = 'n2'") == "while away")
        #expect(try NotesSchema.dump(again.store) == (try NotesSchema.dump(b.store)))
    }

    @Test(
        "A device deleted by an operator is not attached again by a first registration: only its own departure is lifted"
    )
    func operatorDeletionStays() async throws {
        let directory = TemporaryDirectory()
        let (remote, a, b) = try await Self.syncedPair(directory)
        try await b.document.deleteClient("client-A")  // B deletes A: a deletion A did not make
        try a.store.close()
        try FileManager.default.removeItem(at: directory.url.appendingPathComponent("A/helper"))
        await #expect { try await TestClient.make(remote, name: "A", in: directory) } throws: { error in
            (error as? FolderSyncError)?.code == .clientDeleted
        }
    }
}
