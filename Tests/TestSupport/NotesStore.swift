@_spi(Tooling) import FolderSync
import Foundation
import GRDB
import S3Backend
import Testing

/// A small notes schema on a real SQLite file: folders, notes (to-one folder), tags, note_tags (to-many).
enum NotesSchema {
    static let tables = tables(deletePolicy: .deleteWins)

    /// Folders and tags may be created again under a sync ID another client deleted (the simulator's shared IDs):
    /// their tombstones stay under delete wins.
    static func tables(deletePolicy: DeletePolicy) -> [SyncedTable] {
        ["folders", "notes", "tags", "note_tags"].map {
            SyncedTable($0, deletePolicy: deletePolicy, reusesSyncIDs: $0 == "folders" || $0 == "tags")
        }
    }

    /// Opens the store at `url`, creating its tables with `createTables` (another version of the app's schema, say).
    static func open(
        _ url: URL, schemaVersion: Int = 1, deletePolicy: DeletePolicy = .deleteWins,
        createTables: String = createTables,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws -> GRDBStore {
        try GRDBStore(
            path: url.path, tables: tables(deletePolicy: deletePolicy), schemaVersion: schemaVersion, now: now
        ) { db in
            try db.execute(sql: createTables)
        }
    }

    static let createTables = """
        CREATE TABLE IF NOT EXISTS folders(id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS notes(id TEXT PRIMARY KEY NOT NULL, title TEXT, body TEXT,
            folder_id TEXT REFERENCES folders(id));
        CREATE TABLE IF NOT EXISTS tags(id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS note_tags(id TEXT PRIMARY KEY NOT NULL,
            note_id TEXT REFERENCES notes(id), tag_id TEXT REFERENCES tags(id));
        """

    /// Every synced row of every table, as text, sorted: two replicas are equal when these are.
    static func dump(_ store: GRDBStore) throws -> [String] {
        try store.database.read { db in
            var lines: [String] = []
            for table in tables {
                for row in try Row.fetchAll(db, sql: "SELECT * FROM \(table.name) ORDER BY id") {
                    lines.append("\(table.name) \(row)")
                }
            }
            return lines
        }
    }
}

/// One client of a test: its managers and its store, in its own folder.
struct TestClient {
    let app: ApplicationSyncManager
    let document: DocumentSyncManager
    let store: GRDBStore

    static func make(
        _ remote: any RemoteFileSystem, name: String, in directory: TemporaryDirectory,
        document: String = "DOC", schemaVersion: Int = 1, deletePolicy: DeletePolicy = .deleteWins,
        createTables: String = NotesSchema.createTables,
        environment: SyncEnvironment = Fixture.quietEnvironment(), clientIdentifier: String? = nil,
        configure: (ApplicationSyncManager) -> Void = { _ in }
    ) async throws -> TestClient {
        let folder = directory.subdirectory(name)
        let store = try NotesSchema.open(
            folder.appendingPathComponent("notes.sqlite"), schemaVersion: schemaVersion,
            deletePolicy: deletePolicy, createTables: createTables, now: environment.now)
        // On S3, the example backend's managers, which run its operation subclasses.
        let s3 = remote as? S3FileSystem
        let app =
            s3.map { S3ApplicationSyncManager(s3: $0, environment: environment) }
            ?? ApplicationSyncManager(remote: remote, environment: environment)
        configure(app)
        try await app.register(
            .init(
                applicationIdentifier: "com.example.notes", clientIdentifier: clientIdentifier ?? "client-\(name)",
                clientDescription: name))
        let configuration = DocumentSyncManager.Configuration(
            documentIdentifier: document, documentDescription: "Notes",
            helperDirectory: folder.appendingPathComponent("helper"))
        let manager =
            s3 == nil
            ? try DocumentSyncManager(applicationSyncManager: app, configuration: configuration, store: store)
            : try S3DocumentSyncManager(applicationSyncManager: app, configuration: configuration, store: store)
        manager.remoteDocumentCreationHandler = { _ in true }
        try await manager.registerConfigured()
        return TestClient(app: app, document: manager, store: store)
    }

    /// Clients A and B of one document on `remote`.
    static func pair(_ remote: any RemoteFileSystem, in directory: TemporaryDirectory) async throws -> (
        TestClient, TestClient
    ) {
        (try await make(remote, name: "A", in: directory), try await make(remote, name: "B", in: directory))
    }

    func execute(_ sql: String, _ arguments: StatementArguments = []) throws {
        try store.database.write { db in try db.execute(sql: sql, arguments: arguments) }
    }

    func value(_ sql: String, _ arguments: StatementArguments = []) throws -> String? {
        try store.database.read { db in try String.fetchOne(db, sql: sql, arguments: arguments) }
    }

    @discardableResult
    func sync() async throws -> SyncReport { try await document.synchronize() }
}

/// Three clients on one backend: inserts from each (a Unicode folder name among them), concurrent edits of two
/// columns of one note, and a delete; after each round they converge to equal replicas with both edits kept.
/// Returns the converged rows.
@discardableResult
func convergeThroughEditsAndDelete(_ a: TestClient, _ b: TestClient, _ c: TestClient) async throws -> [String] {
    try a.execute("INSERT INTO folders(id, name) VALUES ('f1', 'Inbox é 🎉')")
    try a.execute("INSERT INTO notes(id, title, body, folder_id) VALUES ('n1', 'from A', 'body', 'f1')")
    try b.execute("INSERT INTO notes(id, title, body) VALUES ('n2', 'from B', 'body')")
    try c.execute("INSERT INTO tags(id, name) VALUES ('t1', 'from C')")
    try await converge(a, b, c)
    try b.execute("UPDATE notes SET title = 'edited by B' WHERE id = 'n1'")
    try c.execute("UPDATE notes SET body = 'edited by C' WHERE id = 'n1'")
    try a.execute("DELETE FROM notes WHERE id = 'n2'")
    try await converge(a, b, c)

    let rows = try NotesSchema.dump(a.store)
    #expect(rows == (try NotesSchema.dump(b.store)))
    #expect(rows == (try NotesSchema.dump(c.store)))
    #expect(try a.value("SELECT title || '/' || body FROM notes WHERE id = 'n1'") == "edited by B/edited by C")
    #expect(try c.value("SELECT count(*) FROM notes") == "1")
    return rows
}

/// Every client syncs twice in turn: after that, replicas must be equal (invariant 1).
func converge(_ clients: TestClient...) async throws {
    for _ in 0..<2 {
        for client in clients { try await client.sync() }
    }
}
