import FolderSync
import FolderSyncWebDAV
import Foundation
import Logging

/// One device of the notes app: its database and its sync managers, registered on first use.
///
/// The launch sequence an offline-first app uses: configure the managers (no remote), then
/// `registerConfigured()`, which needs the shared folder only the first time; every later launch comes up from
/// what the helper folder remembers, and the remote is checked by the first sync that reaches it.
struct NotesSession {
    let database: NotesDatabase
    let document: DocumentSyncManager
    /// Whether FolderSync asked for the password because another device changed it (``explainingPasswordChange``).
    let askedForChangedPassword: Locked<Bool>

    /// Opens the database at `databasePath` and configures the managers, without touching the remote.
    static func configure(
        databasePath: String, remote location: String, applicationIdentifier: String,
        documentIdentifier: String, clientName: String?, password: String? = nil
    ) throws -> NotesSession {
        // Paths, file:// and http(s):// (WebDAV, credentials from FOLDERSYNC_WEBDAV_USER/PASSWORD), as in foldersync.
        try configure(
            databasePath: databasePath, remote: RemoteLocation.fileSystem(for: location),
            applicationIdentifier: applicationIdentifier, documentIdentifier: documentIdentifier,
            clientName: clientName, password: password)
    }

    /// Opens the database at `databasePath` and configures the managers on `remote`, which this does not touch.
    static func configure(
        databasePath: String, remote: any RemoteFileSystem, applicationIdentifier: String,
        documentIdentifier: String, clientName: String?, password: String? = nil
    ) throws -> NotesSession {
        let database = try NotesDatabase(path: databasePath)
        var environment = SyncEnvironment.live
        // Warnings reach the user once, in the sync report; FOLDERSYNC_LOG_LEVEL (debug, info, …) shows the log.
        environment.logger.logLevel =
            ProcessInfo.processInfo.environment["FOLDERSYNC_LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) }
            ?? .critical
        let app = ApplicationSyncManager(remote: remote, environment: environment)
        let helper = URL(fileURLWithPath: databasePath + ".foldersync", isDirectory: true)
        // The key derived from a password given once is kept here (mode 0600), never the password.
        app.encryptionKeyStore = FileEncryptionKeyStore(directory: helper)
        let askedForChangedPassword = Locked(false)
        if let password {
            // Opt-in encryption: a new application is encrypted with this password, an encrypted one opened with it,
            // and a folder that is not encrypted is refused (encryptionMismatch) rather than written in clear.
            app.requiresEncryption = true
            app.encryptionHandler = { request in
                if request.reason == .passwordChanged { askedForChangedPassword.withLock { $0 = true } }
                return request.reason == .wrongPassword ? .cancel : .password(password)
            }
        } else {
            app.encryptionHandler = { request in
                if request.reason == .passwordChanged { askedForChangedPassword.withLock { $0 = true } }
                return request.reason == .newApplication ? .noEncryption : .cancel
            }
        }
        // A copy of this database used on another computer makes both devices one client: the one that finds out
        // takes a new identity at 'notes rejoin', kept here.
        app.clientIdentifierChangeHandler = { [database] identifier in try database.setClientIdentifier(identifier) }
        let name = try database.clientName(given: clientName, fallback: ProcessInfo.processInfo.hostName)
        try app.configure(
            .init(
                applicationIdentifier: applicationIdentifier, clientIdentifier: try database.clientIdentifier(),
                clientDescription: name))
        let document = try DocumentSyncManager(
            applicationSyncManager: app,
            configuration: .init(
                documentIdentifier: documentIdentifier, documentDescription: "Notes", helperDirectory: helper),
            store: database.store)
        return NotesSession(database: database, document: document, askedForChangedPassword: askedForChangedPassword)
    }

    /// Registers: at once from what this device remembers, or with the remote the first time (creating the remote
    /// document if it is missing).
    func register(remote location: String, password: String?, narrate: (@Sendable (String) -> Void)? = nil) async throws
    {
        document.remoteDocumentCreationHandler = { _ in
            narrate?("the remote document does not exist yet, so this device creates it")
            return true
        }
        do {
            try await explainingPasswordChange(password: password) { try await document.registerConfigured() }
        } catch FolderSyncError.Code.registrationCancelled where password == nil {
            throw NotesError(
                "\(document.layout.applicationIdentifier) in \(RemoteLocation.redacted(location)) is encrypted: "
                    + "give its password with --password-file PATH")
        }
    }

    /// Runs `body` (a registration, a sync): once another device changed the encryption password, FolderSync asks for
    /// the new one, and what it reports when none or the old one is given is said as what it is.
    func explainingPasswordChange<T>(password: String?, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as FolderSyncError
            where askedForChangedPassword.current
            && (error.code == .registrationCancelled || error.code == .wrongPassword)
        {
            let remedy =
                password == nil
                ? ": give the new one with --password-file PATH"
                : ", and the one in --password-file does not open it: give the new one"
            throw FolderSyncError(
                .wrongPassword, "the encryption password was changed on another device" + remedy, path: error.path)
        }
    }

    /// The names the devices that made `changes` registered with, by client identifier: asked of the shared folder
    /// only when some change is there to name; a device whose name cannot be read is left out.
    func deviceNames(for changes: [RowChanges]) async -> [String: String] {
        guard !changes.isEmpty, let clients = try? await document.registeredClients() else { return [:] }
        return Dictionary(
            clients.compactMap { client in client.clientDescription.map { (client.identifier, $0) } },
            uniquingKeysWith: { first, _ in first })
    }

    /// Opens the database at `databasePath` and registers with the remote (creating the remote document if missing).
    static func open(
        databasePath: String, remote location: String, applicationIdentifier: String,
        documentIdentifier: String, clientName: String?, password: String? = nil,
        narrate: (@Sendable (String) -> Void)? = nil
    ) async throws -> NotesSession {
        let session = try configure(
            databasePath: databasePath, remote: location, applicationIdentifier: applicationIdentifier,
            documentIdentifier: documentIdentifier, clientName: clientName, password: password)
        try await session.register(remote: location, password: password, narrate: narrate)
        return session
    }
}
