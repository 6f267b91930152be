import FolderSync
import FolderSyncWebDAV
import Foundation
import Logging

/// One device of the notes app: its database and its sync managers, registered on first use.
struct NotesSession {
    let database: NotesDatabase
    let document: DocumentSyncManager

    /// Opens the database at `databasePath` and registers with the remote (creating the remote document if missing).
    static func open(databasePath: String, remote location: String, applicationIdentifier: String,
                     documentIdentifier: String, clientName: String?, password: String? = nil,
                     narrate: (@Sendable (String) -> Void)? = nil) async throws -> NotesSession {
        let database = try NotesDatabase(path: databasePath)
        // Paths, file:// and http(s):// (WebDAV, credentials from FOLDERSYNC_WEBDAV_USER/PASSWORD), as in foldersync.
        let remote = try RemoteLocation.fileSystem(for: location)
        var environment = SyncEnvironment.live
        // Warnings reach the user once, in the sync report; FOLDERSYNC_LOG_LEVEL (debug, info, …) shows the log.
        environment.logger.logLevel = ProcessInfo.processInfo.environment["FOLDERSYNC_LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) } ?? .critical
        let client = try database.clientIdentifier()
        let app = ApplicationSyncManager(remote: remote, environment: environment)
        let helper = URL(fileURLWithPath: databasePath + ".foldersync", isDirectory: true)
        // The key derived from a password given once is kept here (mode 0600), never the password.
        app.encryptionKeyStore = FileEncryptionKeyStore(directory: helper)
        if let password {
            // Opt-in encryption: a new application is encrypted with this password, an encrypted one opened with it.
            app.encryptionHandler = { request in request.reason == .wrongPassword ? .cancel : .password(password) }
        } else {
            app.encryptionHandler = { request in request.reason == .newApplication ? .noEncryption : .cancel }
        }
        let name = try database.clientName(given: clientName, fallback: ProcessInfo.processInfo.hostName)
        do {
            try await app.register(.init(applicationIdentifier: applicationIdentifier, clientIdentifier: client, clientDescription: name))
        } catch FolderSyncError.Code.registrationCancelled where password == nil {
            throw NotesError("\(applicationIdentifier) in \(RemoteLocation.redacted(location)) is encrypted: give its password with --password-file PATH")
        }
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
