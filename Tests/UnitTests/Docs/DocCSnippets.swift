// swift-format-ignore-file
// (The snippets here are the documentation's code blocks, compared character for character.)
import Foundation
import FolderSync
import GRDB
import S3Backend
import Logging

// Every Swift block of the DocC articles, compiled with the tests (DocCSnippetTests checks the articles say exactly
// this). Each block sits between a BEGIN line naming its article and an END line, after one comment line and one
// header line (a function whose parameters are the names the block uses, or a namespace for declarations).

// DOCC-SNIPPET-BEGIN Attachments
// (The photo of a note, attached, synced, and fetched on another device.)
func doccAttachments(document: DocumentSyncManager, store: GRDBStore, photoURL: URL, noteID: String, show: (URL) -> Void) async throws {
let reference = try document.attachFile(at: photoURL, mode: .copy, metadata: ["name": "beach.jpg"])
try await store.database.write { db in
    try db.execute(sql: "UPDATE notes SET photo = ? WHERE id = ?", arguments: [reference.databaseValue, noteID])
}
try await document.synchronize()   // uploads the photo once, then the change set that references it

// On another device, after a sync:
let stored = try await store.database.read { db in
    try Data.fetchOne(db, sql: "SELECT photo FROM notes WHERE id = ?", arguments: [noteID])
}
if let stored, let photo = AttachmentReference(databaseValue: stored) {
    let url = try await document.requestDownload(for: photo)   // verified by its SHA-256
    show(url)
}
// DOCC-SNIPPET-END
}

// DOCC-SNIPPET-BEGIN ChangingASyncedSchema
// (Version 2 adds a column.)
func doccAddColumn(migrator: inout DatabaseMigrator, url: URL) throws -> GRDBStore {
migrator.registerMigration("pinned") { db in
    try db.alter(table: "notes") { t in t.add(column: "pinned", .boolean).notNull().defaults(to: false) }
}
let store = try GRDBStore(path: url.path, tables: [SyncedTable("notes")], schemaVersion: 2, connection: .pool,
                          migrator: migrator)
// DOCC-SNIPPET-END
return store
}

// DOCC-SNIPPET-BEGIN ChangingASyncedSchema
// (Version 3 adds a synced table.)
func doccAddTable(migrator: inout DatabaseMigrator, url: URL) throws -> GRDBStore {
migrator.registerMigration("tags") { db in
    try db.create(table: "tags") { t in
        t.primaryKey("id", .text)
        t.column("note_id", .text).notNull()
        t.column("name", .text).notNull()
    }
}
let store = try GRDBStore(path: url.path, tables: [SyncedTable("notes"), SyncedTable("tags")], schemaVersion: 3,
                          connection: .pool, migrator: migrator)
// DOCC-SNIPPET-END
return store
}

// DOCC-SNIPPET-BEGIN ChangingASyncedSchema
// (Version 4 renames a column.)
func doccRenameColumn(migrator: inout DatabaseMigrator, url: URL) throws -> GRDBStore {
migrator.registerMigration("text") { db in
    try db.alter(table: "notes") { t in t.rename(column: "body", to: "text") }
}
let tables = [SyncedTable("notes", renamedColumns: ["body": "text"]), SyncedTable("tags")]
let store = try GRDBStore(path: url.path, tables: tables, schemaVersion: 4, connection: .pool, migrator: migrator)
// DOCC-SNIPPET-END
return store
}

/// What the encryption article's app asks its user.
protocol PasswordPrompt: Sendable {
    func chooseNewPassword() async -> String?
    func askPassword(retry: Bool) async -> String?
}

// DOCC-SNIPPET-BEGIN EndToEndEncryption
// (Registration that asks for a password, the derived key kept in the helper folder.)
func doccEncryption(remote: any RemoteFileSystem, helperDirectory: URL, ui: some PasswordPrompt, configuration: ApplicationSyncManager.Configuration) async throws {
let app = ApplicationSyncManager(remote: remote)
app.encryptionKeyStore = FileEncryptionKeyStore(directory: helperDirectory)   // ask once, not at every launch
app.encryptionHandler = { request in
    switch request.reason {
    case .newApplication:
        guard let password = await ui.chooseNewPassword() else { return .noEncryption }
        return .password(password)
    case .passwordNeeded, .passwordChanged, .wrongPassword:
        guard let password = await ui.askPassword(retry: request.attempt > 1) else { return .cancel }
        return .password(password)
    }
}
try await app.register(configuration)
// DOCC-SNIPPET-END
}

/// The GRDB app article's screen of one note.
protocol NoteScreen: Sendable {
    func reload() async throws
}

// DOCC-SNIPPET-BEGIN GRDBApps
// (The app's own configuration handed to the store.)
func doccConfiguration(url: URL, migrator: DatabaseMigrator) throws -> GRDBStore {
var configuration = Configuration()
configuration.maximumReaderCount = 4
configuration.foreignKeysEnabled = true
let store = try GRDBStore(path: url.path, tables: [SyncedTable("notes")], connection: .pool,
                          configuration: configuration, migrator: migrator)
// DOCC-SNIPPET-END
return store
}

// DOCC-SNIPPET-BEGIN GRDBApps
// (One screen refreshed when a sync touched its note.)
func doccRefreshOneScreen(document: DocumentSyncManager, openNoteID: String, noteScreen: some NoteScreen) async throws {
for await event in document.events() {
    guard case .rowsChanged(let changes) = event else { continue }
    if changes.contains(where: { $0.table == "notes" && ($0.touches(openNoteID) || !$0.listsEveryRow) }) {
        try await noteScreen.reload()
    }
}
// DOCC-SNIPPET-END
}

// DOCC-SNIPPET-BEGIN GRDBApps
// (What each device changed, named as it registered.)
func doccChangedByDevice(document: DocumentSyncManager) async throws {
let report = try await document.synchronize()
let names = try await document.registeredClients().reduce(into: [String: String]()) { names, client in
    names[client.identifier] = client.clientDescription
}
for changes in report.rowChanges where changes.table == "notes" {
    print("\(changes.count) notes changed on \(names[changes.client] ?? changes.client)")
}
// DOCC-SNIPPET-END
}

// DOCC-SNIPPET-BEGIN GettingStarted
// (Opening the document with the app's migrator, as a pool; the article's `import` lines are this file's.)
func doccOpenStore(documentURL: URL) throws -> GRDBStore {
var migrator = DatabaseMigrator()
migrator.registerMigration("notes") { db in
    try db.create(table: "folders") { t in
        t.primaryKey("id", .text)
        t.column("name", .text)
    }
    try db.create(table: "notes") { t in
        t.primaryKey("id", .text)
        t.column("body", .text)
        t.column("folder_id", .text).references("folders")
    }
}
let store = try GRDBStore(path: documentURL.path, tables: [SyncedTable("notes"), SyncedTable("folders")],
                          connection: .pool, migrator: migrator)
// DOCC-SNIPPET-END
return store
}

// DOCC-SNIPPET-BEGIN GettingStarted
// (The launch sequence.)
func doccLaunch(store: GRDBStore, sharedFolderURL: URL, savedClientID: String, helperURL: URL) async throws -> DocumentSyncManager {
let remote = FileManagerFileSystem(rootURL: sharedFolderURL)
let app = ApplicationSyncManager(remote: remote)
try app.configure(.init(applicationIdentifier: "com.example.notes",
                        clientIdentifier: savedClientID,       // a UUID you keep across launches
                        clientDescription: "Ann's laptop"))
let document = try DocumentSyncManager(
    applicationSyncManager: app,
    configuration: .init(documentIdentifier: "notes", documentDescription: "Notes", helperDirectory: helperURL),
    store: store)
document.remoteDocumentCreationHandler = { request in true }   // the first device creates the remote document
try await document.registerConfigured()
// DOCC-SNIPPET-END
return document
}

// DOCC-SNIPPET-BEGIN GettingStarted
// (A sync, and watching.)
func doccSync(document: DocumentSyncManager) async throws {
let report = try await document.synchronize()
print(report.changesSent, report.changesApplied, report.conflicts.count)
document.startWatchingRemote()   // sync when other devices publish
// DOCC-SNIPPET-END
}

// DOCC-SNIPPET-BEGIN GettingStarted
// (A screen drawn from an observation, which syncs wake like local writes.)
func doccObserve(store: GRDBStore, show: ([String]) -> Void) async throws {
let notes = ValueObservation.tracking { db in
    try String.fetchAll(db, sql: "SELECT body FROM notes ORDER BY id")
}
for try await bodies in notes.values(in: store.database) {
    show(bodies)   // your writes, and every change a sync applies
}
// DOCC-SNIPPET-END
}

// DOCC-SNIPPET-BEGIN GettingStarted
// (A main-actor view model as the delegate.)
enum DocCMainActorModel {
@MainActor final class NotesModel: DocumentSyncManagerDelegate {
    var lastSync: SyncReport?

    func documentSyncManager(_ manager: DocumentSyncManager, didFinishSynchronizingWith report: SyncReport) {
        lastSync = report   // on the main actor
    }
}
// DOCC-SNIPPET-END
}

// DOCC-SNIPPET-BEGIN GettingStarted
// (A quieter log.)
func doccLogging(sharedFolderURL: URL) -> ApplicationSyncManager {
var environment = SyncEnvironment.live
environment.logger.logLevel = .warning
let app = ApplicationSyncManager(remote: FileManagerFileSystem(rootURL: sharedFolderURL), environment: environment)
// DOCC-SNIPPET-END
return app
}

// DOCC-SNIPPET-BEGIN GettingStarted
// (A new device's store made from the whole store.)
func doccNewDevice(app: ApplicationSyncManager, configuration: DocumentSyncManager.Configuration, url: URL, migrator: DatabaseMigrator) async throws {
let document = try DocumentSyncManager(applicationSyncManager: app, configuration: configuration)
try await document.registerConfigured()
let store = try await document.openStore(at: url) { url in
    try GRDBStore(path: url.path, tables: [SyncedTable("notes")], connection: .pool, migrator: migrator)
}
try await document.synchronize()
// DOCC-SNIPPET-END
_ = store
}

// DOCC-SNIPPET-BEGIN StoppingSyncAndCheckingADevice
// (Leaving sync from an app.)
func doccStopSyncing(store: GRDBStore, document: DocumentSyncManager) async throws {
let waiting = try store.unpublishedChanges()          // "2 rows (notes 2)", or none
let report = try await document.stopSyncing()          // publishes them, leaves the folder, detaches
// report.untrackedTables == ["notes", "tags"]; the app keeps using store.database on a plain file
// DOCC-SNIPPET-END
_ = (waiting, report)
}

/// The backend article's store: what its subclass calls.
final class MyBucket: Sendable {
    func putIfAbsent(_ url: URL, at path: RemotePath) async throws {}
}

// DOCC-SNIPPET-BEGIN WritingABackend
// (A backend's operation subclass and the factory that builds it.)
enum DocCBackendSubclass {
final class MySynchronizationOperation: SynchronizationOperation, @unchecked Sendable {
    let bucket: MyBucket

    init(bucket: MyBucket, standard: SynchronizationOperation) {
        self.bucket = bucket
        super.init(copying: standard)
    }

    override func publishChangeSet(from url: URL, name: String) async throws {
        try await bucket.putIfAbsent(url, at: layout.syncChangesDirectory(documentIdentifier, client: clientIdentifier).appending(name))
    }
}

final class MyDocumentSyncManager: DocumentSyncManager, @unchecked Sendable {
    var bucket: MyBucket!

    override func synchronizationOperation(store: any ModelAdapter, options: SynchronizationOperation.Options) -> SynchronizationOperation {
        MySynchronizationOperation(bucket: bucket, standard: super.synchronizationOperation(store: store, options: options))
    }
}
// DOCC-SNIPPET-END
}

// S3-TUTORIAL-BEGIN
// (The S3 example's README, the backend tutorial: its first block, compiled; S3TutorialSnippetTests checks it.)
func s3TutorialUsage(id: String, store: GRDBStore, helperURL: URL) async throws {
let s3 = try S3FileSystem(configuration: S3Configuration(
    endpoint: URL(string: "https://s3.eu-west-1.amazonaws.com")!, bucket: "my-app-sync", region: "eu-west-1",
    credentials: S3Credentials.fromEnvironment()!, usesPathStyle: false))   // AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY
let app = S3ApplicationSyncManager(s3: s3)
try await app.register(.init(applicationIdentifier: "com.example.notes", clientIdentifier: id, clientDescription: "laptop"))
let document = try S3DocumentSyncManager(applicationSyncManager: app,
    configuration: .init(documentIdentifier: "notes", documentDescription: "Notes", helperDirectory: helperURL), store: store)
document.remoteDocumentCreationHandler = { _ in true }
try await document.registerConfigured()
try await document.synchronize()
// S3-TUTORIAL-END
}
