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

// DOCC-SNIPPET-BEGIN GettingStarted
// (Opening the document; the article's `import` lines are this file's.)
func doccOpenStore(documentURL: URL) throws -> GRDBStore {
let store = try GRDBStore(path: documentURL.path, tables: [SyncedTable("notes"), SyncedTable("folders")]) { db in
    try db.execute(sql: """
        CREATE TABLE IF NOT EXISTS folders(id TEXT PRIMARY KEY NOT NULL, name TEXT);
        CREATE TABLE IF NOT EXISTS notes(id TEXT PRIMARY KEY NOT NULL, body TEXT, folder_id TEXT REFERENCES folders(id));
        """)
}
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
func doccNewDevice(app: ApplicationSyncManager, configuration: DocumentSyncManager.Configuration, url: URL) async throws {
let document = try DocumentSyncManager(applicationSyncManager: app, configuration: configuration)
try await document.registerConfigured()
let store = try await document.openStore(at: url) { url in
    try GRDBStore(path: url.path, tables: [SyncedTable("notes")]) { db in
        try db.execute(sql: "CREATE TABLE IF NOT EXISTS notes(id TEXT PRIMARY KEY NOT NULL, title TEXT, body TEXT)")
    }
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

    override func synchronizationOperation(integrityKey: String, store: any ModelAdapter) -> SynchronizationOperation {
        MySynchronizationOperation(bucket: bucket, standard: super.synchronizationOperation(integrityKey: integrityKey, store: store))
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
