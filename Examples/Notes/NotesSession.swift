import FolderSync
import Foundation
import Logging

/// One device of the notes app: its database and its sync managers, registered on first use.
struct NotesSession {
    let database: NotesDatabase
    let document: DocumentSyncManager

    /// Opens the database at `databasePath` and registers with the remote (creating the remote document if missing).
    static func open(databasePath: String, remote location: String, applicationIdentifier: String,
                     documentIdentifier: String, clientName: String?,
                     narrate: (@Sendable (String) -> Void)? = nil) async throws -> NotesSession {
        let database = try NotesDatabase(path: databasePath)
        let remote = try RemoteLocation.fileSystem(for: location)
        var environment = SyncEnvironment.live
        environment.logger.logLevel = .warning
        let client = try database.clientIdentifier()
        let app = ApplicationSyncManager(remote: remote, environment: environment)
        let name = clientName ?? ProcessInfo.processInfo.hostName
        try await app.register(.init(applicationIdentifier: applicationIdentifier, clientIdentifier: client, clientDescription: name))
        let helper = URL(fileURLWithPath: databasePath + ".foldersync", isDirectory: true)
        let document = try await DocumentSyncManager(
            applicationSyncManager: app,
            registering: .init(documentIdentifier: documentIdentifier, documentDescription: "Notes", helperDirectory: helper),
            store: database.store,
            remoteDocumentCreationHandler: { _ in
                narrate?("the remote document does not exist yet, so this device creates it")
                return true
            })
        return NotesSession(database: database, document: document)
    }
}

/// Turns the `--remote` argument into a remote file system.
enum RemoteLocation {
    static func fileSystem(for location: String) throws -> any RemoteFileSystem {
        if location.hasPrefix("http://") || location.hasPrefix("https://") {
            throw NotesError("WebDAV locations are not supported yet: \(location)")
        }
        let url = URL(fileURLWithPath: location, isDirectory: true)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw NotesError("the remote folder does not exist: \(location)")
        }
        return FileManagerFileSystem(rootURL: url)
    }
}
