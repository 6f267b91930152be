public import Foundation
import Logging

/// Callbacks of a ``DocumentSyncManager``; every method has a default.
///
/// The manager awaits every callback, so a `@MainActor` type (a SwiftUI or AppKit view model) adopts the protocol
/// as it is, with plain main-actor methods, and they run on the main actor; a nonisolated delegate's methods run on
/// the concurrency pool. The delegate is held weakly: keep it alive yourself (one made inline is gone at once).
public protocol DocumentSyncManagerDelegate: AnyObject, Sendable {
    /// Registration of the document began.
    func documentSyncManagerDidBeginRegistering(_ manager: DocumentSyncManager) async
    /// Registration paused: the remote document does not exist (or was deleted). Return `true` to create it.
    /// The default answers `false`. A ``DocumentSyncManager/remoteDocumentCreationHandler`` takes precedence.
    func documentSyncManager(
        _ manager: DocumentSyncManager,
        shouldCreateRemoteDocumentFor request: RemoteDocumentCreationRequest
    ) async -> Bool
    /// The document is registered; it can now sync.
    func documentSyncManagerDidFinishRegistering(_ manager: DocumentSyncManager) async
    /// Registration failed with `error`; the manager may register again.
    func documentSyncManager(_ manager: DocumentSyncManager, didFailToRegisterWithError error: FolderSyncError) async
    /// A synchronization began.
    func documentSyncManagerDidBeginSynchronizing(_ manager: DocumentSyncManager) async
    /// A remote change meets a local change not yet published. Return `nil` to let the last writer win.
    /// A ``DocumentSyncManager/conflictResolver`` takes precedence.
    func documentSyncManager(_ manager: DocumentSyncManager, resolve conflict: SyncConflict) async
        -> ConflictResolution?
    /// A sync paused before applying deletions that trip ``SyncPolicy/deletionFailSafe``. Return `true` to apply
    /// them; the default answers `false`, which stops the sync with ``FolderSyncError/Code/massDeletionDeclined``.
    /// A ``DocumentSyncManager/massDeletionHandler`` takes precedence.
    func documentSyncManager(_ manager: DocumentSyncManager, shouldApply deletion: MassDeletion) async -> Bool
    /// A successful sync noticed things that did not stop it; called just before the finish callback, only when there
    /// are some.
    func documentSyncManager(_ manager: DocumentSyncManager, didEncounterWarnings warnings: [SyncWarning]) async
    /// A synchronization succeeded; `report` says what it did.
    func documentSyncManager(_ manager: DocumentSyncManager, didFinishSynchronizingWith report: SyncReport) async
    /// A synchronization failed with `error`, whose code says why.
    func documentSyncManager(_ manager: DocumentSyncManager, didFailToSynchronizeWithError error: FolderSyncError) async
    /// A whole store is about to replace the local synced data (TICoreDataSync's will-replace).
    func documentSyncManager(_ manager: DocumentSyncManager, willReplaceLocalDataWith wholeStore: WholeStoreManifest)
        async
    /// A whole store replaced the local synced data; local unpublished changes were re-applied on top.
    func documentSyncManager(_ manager: DocumentSyncManager, didReplaceLocalDataWith wholeStore: WholeStoreManifest)
        async
}

extension DocumentSyncManagerDelegate {
    public func documentSyncManagerDidBeginRegistering(_ manager: DocumentSyncManager) async {}
    public func documentSyncManager(
        _ manager: DocumentSyncManager,
        shouldCreateRemoteDocumentFor request: RemoteDocumentCreationRequest
    ) async -> Bool { false }
    public func documentSyncManagerDidFinishRegistering(_ manager: DocumentSyncManager) async {}
    public func documentSyncManager(_ manager: DocumentSyncManager, didFailToRegisterWithError error: FolderSyncError)
        async
    {}
    public func documentSyncManagerDidBeginSynchronizing(_ manager: DocumentSyncManager) async {}
    public func documentSyncManager(_ manager: DocumentSyncManager, resolve conflict: SyncConflict) async
        -> ConflictResolution?
    { nil }
    public func documentSyncManager(_ manager: DocumentSyncManager, shouldApply deletion: MassDeletion) async -> Bool {
        false
    }
    public func documentSyncManager(_ manager: DocumentSyncManager, didEncounterWarnings warnings: [SyncWarning]) async
    {}
    public func documentSyncManager(_ manager: DocumentSyncManager, didFinishSynchronizingWith report: SyncReport) async
    {}
    public func documentSyncManager(
        _ manager: DocumentSyncManager, didFailToSynchronizeWithError error: FolderSyncError
    ) async {}
    public func documentSyncManager(
        _ manager: DocumentSyncManager, willReplaceLocalDataWith wholeStore: WholeStoreManifest
    ) async {}
    public func documentSyncManager(
        _ manager: DocumentSyncManager, didReplaceLocalDataWith wholeStore: WholeStoreManifest
    ) async {}
}

/// Registers one document of this client with the remote, and runs its sync tasks.
///
/// ```swift
/// let document = try DocumentSyncManager(applicationSyncManager: app, configuration: .init(
///     documentIdentifier: documentID, documentDescription: "Notes", helperDirectory: helperURL))
/// document.remoteDocumentCreationHandler = { _ in true }   // create the remote document if missing
/// try await document.registerConfigured()
/// ```
/// Creating the manager configures it (delayed registration); the
/// `registering:` initializer registers at once (one-shot). Registration
/// waits for the application sync manager to be registered.
///
/// `@unchecked Sendable`: an `open` class (backends subclass it) cannot be checked `Sendable`; its stored
/// properties are `let`s of `Sendable` types, and what changes after creation is behind one `Locked`.
open class DocumentSyncManager: @unchecked Sendable {
    /// Which document this manager syncs, and where it keeps its local bookkeeping.
    public struct Configuration: Sendable, Hashable {
        /// The document's identifier (a UUID string by convention); the name of its remote folder.
        public var documentIdentifier: String
        /// A description for people ("Notes"), stored in the document's info when this client creates it.
        public var documentDescription: String
        /// The app's own information about the document, stored with its description; FolderSync never reads it.
        public var userInfo: [String: String]
        /// This client's helper folder for the document. Must not be shared with another document or client.
        public var helperDirectory: URL

        /// A document configuration; see the properties for each argument.
        public init(
            documentIdentifier: String, documentDescription: String, userInfo: [String: String] = [:],
            helperDirectory: URL
        ) {
            self.documentIdentifier = documentIdentifier
            self.documentDescription = documentDescription
            self.userInfo = userInfo
            self.helperDirectory = helperDirectory
        }
    }

    /// The registered client and remote this document syncs through.
    public let applicationSyncManager: ApplicationSyncManager
    /// The document and helper folder this manager was created with.
    public let configuration: Configuration
    /// The remote layout of the application this document belongs to.
    public let layout: RemoteLayout
    /// Where this manager keeps its local bookkeeping.
    public let localLayout: LocalLayout
    /// This installation's identifier, from the application sync manager's configuration; a new one once
    /// ``rejoin()`` took a new identity after ``FolderSyncError/Code/clientIdentityShared``.
    public var clientIdentifier: String { mutable.current.clientIdentifier }
    /// The local data this manager synchronizes: given at creation, or opened by ``openStore(at:_:)``.
    public var store: (any ModelAdapter)? { mutable.current.store }

    let coalescer = SyncCoalescer()
    let gate = RegistrationGate()
    /// Everything of this manager that changes after creation, behind one lock.
    let mutable: Locked<MutableState>

    struct MutableState {
        var clientIdentifier: String
        var store: (any ModelAdapter)?
        /// What the app sets on the manager.
        var settings = Settings()
        /// The reset the document stopped on and has not re-joined from, as the helper folder remembers it;
        /// ``rejoin()`` recovers from it.
        var lastReset: LocalReset?
        /// The registration this launch came up from or made.
        var registration: LocalRegistration?
        /// Whether this launch came up from the remembered registration and has not checked the remote yet: the
        /// first sync (or whole-store transfer) registers with it, once.
        var checksRemote = false
        /// Whether that check registers the document too, as a first registration does: after the folder was found
        /// away or one of this client's folders missing. A launch checks the application only (a sync then finds a
        /// replaced or deleted document, or this client's deletion, by itself).
        var registersDocumentAgain = false
        /// Whether a sync of this launch looked at this client's whole store
        /// (``LocalSyncState/RemoteKnowledge/ownWholeStoreTag``).
        var checkedOwnWholeStore = false
        /// The store whose syncs of this launch know this client's own change-set numbers (one listed them, and no
        /// sync failed and no whole store was installed since), and its next sequence when the last of them ended
        /// (``SynchronizationOperation/ownNumbersKnownThrough``).
        weak var ownNumbersKnownStore: (any ModelAdapter)?
        var ownNumbersKnownThrough: Int64 = 0
        /// Whether this launch re-joined after this client was deleted and no sync has completed since: its marker
        /// went with the deletion (``SynchronizationOperation/ownMarkerRemovedByDeletion``).
        var rejoinedAfterDeletion = false
        /// Whether a sync is running.
        var isSynchronizing = false
        /// How the last syncs went (also kept in the helper folder).
        var lastStatus: LocalSyncStatus?
        /// The streams ``events()`` handed out, told every event.
        var eventContinuations: [UUID: AsyncStream<SyncEvent>.Continuation] = [:]
        /// The tasks of ``startWatchingRemote(debounce:pollInterval:)``.
        var watchers: [Task<Void, Never>] = []
        /// This installation (``LocalInstallation``), read from the helper folder at the first sync of a launch.
        var installation: LocalInstallation?
    }

    struct Settings {
        var policy = SyncPolicy()
        /// Safeguards switched off in this manager's vacuums and client deletions (``RemovalSafeguard``).
        var disabledSafeguards: Set<RemovalSafeguard> = []
        weak var delegate: (any DocumentSyncManagerDelegate)?
        var remoteDocumentCreationHandler: (@Sendable (RemoteDocumentCreationRequest) async -> Bool)?
        var conflictResolver: (@Sendable (SyncConflict) async -> ConflictResolution?)?
        var massDeletionHandler: (@Sendable (MassDeletion) async -> Bool)?
    }

    /// Configures a document sync manager (delayed registration: call ``registerConfigured()`` later).
    ///
    /// - Throws: ``FolderSyncError/Code/invalidConfiguration`` if the application sync manager is not configured,
    ///   ``FolderSyncError/Code/invalidIdentifier`` for an unsafe document identifier.
    public init(
        applicationSyncManager: ApplicationSyncManager, configuration: Configuration,
        store: (any ModelAdapter)? = nil
    ) throws {
        guard let app = applicationSyncManager.currentConfiguration, let layout = applicationSyncManager.layout else {
            throw FolderSyncError(.invalidConfiguration, "configure the application sync manager before its documents")
        }
        try Identifier.validate(configuration.documentIdentifier, role: "document identifier")
        self.applicationSyncManager = applicationSyncManager
        self.configuration = configuration
        self.layout = layout
        self.localLayout = LocalLayout(helperDirectory: configuration.helperDirectory)
        self.mutable = Locked(MutableState(clientIdentifier: app.clientIdentifier, store: store))
        loadRememberedState()  // the reset and sync status a launch shows before it registers: helper files only
    }

    /// Configures and registers at once (one-shot registration).
    public convenience init(
        applicationSyncManager: ApplicationSyncManager, registering configuration: Configuration,
        store: (any ModelAdapter)? = nil, delegate: (any DocumentSyncManagerDelegate)? = nil,
        remoteDocumentCreationHandler: (@Sendable (RemoteDocumentCreationRequest) async -> Bool)? = nil
    ) async throws {
        try self.init(applicationSyncManager: applicationSyncManager, configuration: configuration, store: store)
        self.delegate = delegate
        self.remoteDocumentCreationHandler = remoteDocumentCreationHandler
        try await registerConfigured()
    }

    // MARK: Properties of the seed API

    /// Told about registration, syncs, conflicts and whole-store replacements. Held weakly.
    public var delegate: (any DocumentSyncManagerDelegate)? {
        get { mutable.current.settings.delegate }
        set { mutable.withLock { $0.settings.delegate = newValue } }
    }

    /// Answers whether to create a missing remote document; takes precedence over the delegate.
    public var remoteDocumentCreationHandler: (@Sendable (RemoteDocumentCreationRequest) async -> Bool)? {
        get { mutable.current.settings.remoteDocumentCreationHandler }
        set { mutable.withLock { $0.settings.remoteDocumentCreationHandler = newValue } }
    }

    /// Settles conflicts between remote changes and local changes not yet published; takes precedence over the
    /// delegate. Return `nil` to let the last writer win. Runs without blocking a thread.
    public var conflictResolver: (@Sendable (SyncConflict) async -> ConflictResolution?)? {
        get { mutable.current.settings.conflictResolver }
        set { mutable.withLock { $0.settings.conflictResolver = newValue } }
    }

    /// Answers whether to apply deletions that trip ``SyncPolicy/deletionFailSafe``; takes precedence over the
    /// delegate. Without either, such a sync stops with ``FolderSyncError/Code/massDeletionDeclined`` and the
    /// local store untouched.
    public var massDeletionHandler: (@Sendable (MassDeletion) async -> Bool)? {
        get { mutable.current.settings.massDeletionHandler }
        set { mutable.withLock { $0.settings.massDeletionHandler = newValue } }
    }

    /// Where the manager is in its registration.
    public var state: RegistrationState { gate.state }
    /// The document's identifier, from ``configuration``.
    public var documentIdentifier: String { configuration.documentIdentifier }
    /// The document's description, from ``configuration``.
    public var documentDescription: String { configuration.documentDescription }
    /// The app's information about the document, from ``configuration``.
    public var userInfo: [String: String] { configuration.userInfo }
    /// This client's helper folder for the document (standardized).
    public var helperFileDirectory: URL { localLayout.helperDirectory }
    /// The integrity key of the remote document this client is registered with, once known.
    public var integrityKey: String? { mutable.current.registration?.integrityKey }
    /// Whether the document's remote data is encrypted: the application sync manager's setting.
    public var shouldUseEncryption: Bool { applicationSyncManager.shouldUseEncryption }
    /// Whether this client remembers registering the document (in its helper folder): then
    /// ``registerConfigured()`` needs no shared folder. Reads the helper folder only.
    public var remembersRegistration: Bool { (try? loadLocalRegistration()) != nil }

    // MARK: Registration

    /// Registers the document with the configuration given at creation, registering the application first when
    /// this launch has not.
    ///
    /// On every launch after the first, this needs no shared folder: the manager comes up at once from what the
    /// helper folder remembers (``remembersRegistration``), the store opens and works, and the remote is checked at
    /// the first ``synchronize()`` that reaches it. Only a client that never registered needs the remote here; it
    /// pauses to ask when the remote document is missing.
    /// - Throws: ``FolderSyncError/Code/remoteUnavailable`` when a first registration cannot reach the shared folder,
    ///   ``FolderSyncError/Code/registrationCancelled`` when the app declines to create the document,
    ///   ``FolderSyncError/Code/integrityKeyMismatch`` when the remote was reset, and other typed errors.
    public func registerConfigured() async throws {
        if try await resumeRemembered() { return }
        try await register(creatingMissingDocument: false)
    }

    /// Comes up from the remembered registration, without touching the remote; `false` when there is none it can
    /// use (a first launch, or an encrypted application whose password key is not saved).
    private func resumeRemembered() async throws -> Bool {
        guard let remembered = try loadLocalRegistration(),
            try applicationSyncManager.resume(
                encryptionKey: remembered.encryptionKey, deviceInfo: remembered.deviceInfo)
        else { return false }
        try gate.begin(what: "document \(documentIdentifier)")
        await delegate?.documentSyncManagerDidBeginRegistering(self)
        mutable.withLock { state in
            state.registration = remembered
            state.checksRemote = true
        }
        gate.finish(.success(()))
        await delegate?.documentSyncManagerDidFinishRegistering(self)
        return true
    }

    /// Registers with the remote; when `creatingMissingDocument`, a missing remote document is created without asking
    /// (a re-join after a wipe). `rejoining`: a reset found here is left to ``rejoin()``, which remembers it as a new
    /// one.
    func register(creatingMissingDocument: Bool, rejoining: Bool = false) async throws {
        try gate.begin(what: "document \(documentIdentifier)")
        await delegate?.documentSyncManagerDidBeginRegistering(self)
        do {
            // 0700: registration, downloads, backups
            try LocalFiles.createPrivateDirectory(localLayout.helperDirectory)
            let remembered = try loadLocalRegistration()
            // A client that registered before (or began to, and found the tree) never creates the application's
            // tree again by itself; a re-join after a wipe is the app saying the remote was replaced, and registers
            // the application again.
            let seen = try remembered != nil || remembersApplication()
            if remembered == nil { applicationSyncManager.whenApplicationFound { [self] in try rememberApplication() } }
            defer { if remembered == nil { applicationSyncManager.whenApplicationFound(nil) } }
            let info = try await registerWithRemote(
                remembered: remembered, registeredBefore: seen,
                creatingMissingDocument: creatingMissingDocument)
            let local = LocalRegistration(
                applicationIdentifier: layout.applicationIdentifier,
                documentIdentifier: documentIdentifier, clientIdentifier: clientIdentifier,
                integrityKey: info.integrityKey,
                encryptionKey: applicationSyncManager.encryptionKeyFile,
                deviceInfo: applicationSyncManager.deviceInfoOnRemote)
            if local != remembered {
                try LocalFiles.writeDurably(try PropertyListFile.encode(local), to: localLayout.registrationFile)
            }
            mutable.withLock { state in
                state.registration = local
                state.checksRemote = false
                state.registersDocumentAgain = false
            }
            gate.finish(.success(()))
            await delegate?.documentSyncManagerDidFinishRegistering(self)
        } catch {
            // A reset found at a first registration is recoverable by rejoin() too.
            let wrapped = FolderSyncError.wrapping(error, "document registration failed").unavailableIfUnreachable
            let error = rejoining ? wrapped : stopForReset(wrapped)
            gate.finish(.failure(error))
            await delegate?.documentSyncManager(self, didFailToRegisterWithError: error)
            throw error
        }
    }

    /// Registers the application when this launch has not, then the document.
    ///
    /// An application folder found gone although the application registered earlier in this launch (the share
    /// unmounted, or replaced since) makes the application register again, which asks the app whether the remote was
    /// replaced: then the document registers with the new tree (and finds its reset), otherwise it is unavailable.
    private func registerWithRemote(
        remembered: LocalRegistration?, registeredBefore: Bool,
        creatingMissingDocument: Bool
    ) async throws -> DocumentInfo {
        let registeredNow = try await applicationSyncManager.registerIfNeeded(
            registeredBefore: registeredBefore,
            rejoining: creatingMissingDocument)
        do {
            return try await registerDocument(
                rememberedIntegrityKey: remembered?.integrityKey, creatingMissingDocument: creatingMissingDocument)
        } catch let error as FolderSyncError where error.code == .remoteUnavailable && !registeredNow {
            applicationSyncManager.checkRemoteAgain()
            try await applicationSyncManager.registerIfNeeded(registeredBefore: registeredBefore)
            return try await registerDocument(
                rememberedIntegrityKey: remembered?.integrityKey, creatingMissingDocument: creatingMissingDocument)
        }
    }

    /// Runs the document registration operation against the remote.
    /// A first registration (nothing remembered) that finds a departure this device made of itself lifts it and
    /// registers again; the marker is read only then, so that a registration stays one round of requests.
    private func registerDocument(rememberedIntegrityKey: String?, creatingMissingDocument: Bool) async throws
        -> DocumentInfo
    {
        let proposed = DocumentInfo(
            documentIdentifier: documentIdentifier, documentDescription: documentDescription,
            userInfo: userInfo, integrityKey: "", createdByClient: clientIdentifier,
            creationDate: .distantPast)
        func register() async throws -> DocumentInfo {
            var options = DocumentRegistrationOperation.Options(
                proposedDocumentInfo: proposed, rememberedIntegrityKey: rememberedIntegrityKey,
                askToCreateRemoteDocument: { [unowned self] request in await self.askToCreate(request) })
            // re-joining a wiped remote
            if creatingMissingDocument { options.askToCreateRemoteDocument = { _ in true } }
            return try await documentRegistrationOperation(options: options).run()
        }
        do {
            return try await register()
        } catch let error as FolderSyncError where error.code == .clientDeleted && rememberedIntegrityKey == nil {
            guard try await liftOwnDeparture() else { throw error }
            return try await register()
        }
    }

    /// After a launch that came up from the remembered registration: registers with the remote now, once, so that an
    /// unreachable folder, a newer layout or another encryption is found before anything of the remote is read or
    /// written. Within the heartbeat's interval of its last marker, a launch checks the application only, and writes
    /// nothing when its registration is there (its device info only when it changed); the sync that follows finds a
    /// replaced or deleted document, or this client's deletion, as it would mid-launch. Once the heartbeat is due,
    /// after the folder was found away, or with one of this client's folders missing, it registers again in full (the
    /// device info read back, the document, its deletion markers and this client's folders), writing only what is
    /// missing. Nothing when this launch registered already.
    func checkRemoteIfNeeded() async throws {
        let current = mutable.current
        guard current.checksRemote, let remembered = current.registration else { return }
        if try current.registersDocumentAgain || isHeartbeatDue() {
            applicationSyncManager.checkDeviceInfoAgain()
            _ = try await registerWithRemote(
                remembered: remembered, registeredBefore: true, creatingMissingDocument: false)
        } else {
            try await applicationSyncManager.registerIfNeeded(registeredBefore: true)
        }
        mutable.withLock { state in
            state.checksRemote = false
            state.registersDocumentAgain = false
        }
        // The application's key file may have changed since (a password change), and the device info: remember them.
        var updated = remembered
        if let key = applicationSyncManager.encryptionKeyFile { updated.encryptionKey = key }
        if let device = applicationSyncManager.deviceInfoOnRemote { updated.deviceInfo = device }
        if updated != remembered {
            try LocalFiles.writeDurably(try PropertyListFile.encode(updated), to: localLayout.registrationFile)
            mutable.withLock { $0.registration = updated }
        }
    }

    /// Whether this client's recent-sync marker is due for its heartbeat (or was never written), as the store knows.
    private func isHeartbeatDue() throws -> Bool {
        let now = applicationSyncManager.environment.now()
        return try store?.loadSyncState().remote.isDue(after: RecentSync.heartbeatInterval, now: now) ?? true
    }

    /// Remembers in the helper folder that the application's tree is on the remote
    /// (``LocalLayout/applicationSeenFile``).
    private func rememberApplication() throws {
        guard !(try remembersApplication()) else { return }
        let seen = LocalApplicationSeen(
            applicationIdentifier: layout.applicationIdentifier,
            clientIdentifier: clientIdentifier)
        try LocalFiles.writeDurably(try PropertyListFile.encode(seen), to: localLayout.applicationSeenFile)
    }

    /// Whether a registration of this client found the application's tree on the remote before, finished or not.
    private func remembersApplication() throws -> Bool {
        let url = localLayout.applicationSeenFile
        guard FileManager.default.fileExists(atPath: url.path) else { return false }
        let seen = try PropertyListFile.decode(
            LocalApplicationSeen.self, from: try LocalFiles.read(url), path: url.path)
        return seen.applicationIdentifier == layout.applicationIdentifier && seen.clientIdentifier == clientIdentifier
    }

    private func loadLocalRegistration() throws -> LocalRegistration? {
        let url = localLayout.registrationFile
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        let saved = try PropertyListFile.decode(LocalRegistration.self, from: try LocalFiles.read(url), path: url.path)
        guard saved.documentIdentifier == documentIdentifier, saved.clientIdentifier == clientIdentifier,
            saved.applicationIdentifier == layout.applicationIdentifier
        else {
            throw FolderSyncError(
                .invalidConfiguration,
                "the helper folder belongs to document \(saved.documentIdentifier) of client \(saved.clientIdentifier)",
                path: url.path)
        }
        return saved
    }

    func confirm(_ deletion: MassDeletion) async -> Bool {
        if let handler = massDeletionHandler { return await handler(deletion) }
        if let delegate { return await delegate.documentSyncManager(self, shouldApply: deletion) }
        // Said once, by the sync's error (massDeletionDeclined); the log line is for diagnosis only.
        applicationSyncManager.environment.logger.info(
            "A sync would delete \(deletion) and no mass-deletion handler or delegate answers; not applying it")
        return false
    }

    private func askToCreate(_ request: RemoteDocumentCreationRequest) async -> Bool {
        if let handler = remoteDocumentCreationHandler { return await handler(request) }
        if let delegate { return await delegate.documentSyncManager(self, shouldCreateRemoteDocumentFor: request) }
        applicationSyncManager.environment.logger.warning(
            "Remote document \(request.documentIdentifier) is missing and no creation handler or delegate answers; not creating it"
        )
        return false
    }

    // MARK: Operation factories

    /// Builds the registration operation with `options` (the proposed document, the remembered key, the question to
    /// create a missing document). Override to return a backend subclass, built with
    /// ``DocumentRegistrationOperation/init(copying:)`` from the operation this returns.
    open func documentRegistrationOperation(options: DocumentRegistrationOperation.Options)
        -> DocumentRegistrationOperation
    {
        DocumentRegistrationOperation(context: operationContext, options: options)
    }

    /// Builds the maintenance object that vacuums, lists and deletes clients, with `options` (this client's cache of
    /// verified whole stores). Override to return a backend subclass.
    open func documentMaintenance(options: DocumentMaintenance.Options = DocumentMaintenance.Options()) throws
        -> DocumentMaintenance
    {
        try DocumentMaintenance(context: operationContext, options: options)
    }

    /// The maintenance object of ``documentMaintenance(options:)``, with this client's cache of verified whole stores.
    func maintenance() throws -> DocumentMaintenance {
        var options = DocumentMaintenance.Options(verificationCacheFile: localLayout.verifiedWholeStoresFile)
        options.disabledSafeguards = disabledSafeguards
        return try documentMaintenance(options: options)
    }

    /// What this manager's document operations receive: its remote, identifiers, helper folder, environment,
    /// policy and event streams. Every factory passes it, so a backend subclass built from the standard operation
    /// (`init(copying:)`) has all of it.
    var operationContext: DocumentOperationContext {
        DocumentOperationContext(
            fileSystem: applicationSyncManager.remote, layout: layout, documentIdentifier: documentIdentifier,
            clientIdentifier: clientIdentifier, localLayout: localLayout,
            environment: applicationSyncManager.environment, policy: policy,
            emit: { [weak self] event in self?.publish(event) })
    }

    /// Builds the synchronization operation with `options` (the integrity key, the resolver and the settings the
    /// manager chose for this sync). Override to return a backend subclass, built with
    /// ``SynchronizationOperation/init(copying:)`` from the operation this returns.
    open func synchronizationOperation(
        store: any ModelAdapter,
        options: SynchronizationOperation.Options
    ) -> SynchronizationOperation {
        SynchronizationOperation(context: operationContext, store: store, options: options)
    }

    /// The options of a sync with `integrityKey`: this manager's resolver, and the defaults for the rest.
    func synchronizationOptions(integrityKey: String) -> SynchronizationOperation.Options {
        var resolver: (@Sendable (SyncConflict) async -> ConflictResolution?)?
        if conflictResolver != nil || delegate != nil {
            resolver = { [unowned self] conflict in await self.resolve(conflict) }
        }
        return SynchronizationOperation.Options(integrityKey: integrityKey, resolver: resolver)
    }

    /// Builds the whole-store upload operation. Override to return a backend subclass, built with
    /// ``WholeStoreUploadOperation/init(copying:)`` from the operation this returns.
    open func wholeStoreUploadOperation(store: any SnapshottingModelAdapter) -> WholeStoreUploadOperation {
        WholeStoreUploadOperation(context: operationContext, store: store)
    }

    /// Builds the whole-store download operation with `options` (the delegate's calls around the replacement, and how
    /// the store is installed). Override to return a backend subclass, built with
    /// ``WholeStoreDownloadOperation/init(copying:)`` from the operation this returns.
    open func wholeStoreDownloadOperation(
        store: any SnapshottingModelAdapter,
        options: WholeStoreDownloadOperation.Options
    ) -> WholeStoreDownloadOperation {
        WholeStoreDownloadOperation(context: operationContext, store: store, options: options)
    }

    /// The options of a whole-store download: the delegate told before and after the local data is replaced.
    func wholeStoreDownloadOptions() -> WholeStoreDownloadOperation.Options {
        WholeStoreDownloadOperation.Options(
            willReplace: { [weak self] manifest in
                guard let self else { return }
                await self.delegate?.documentSyncManager(self, willReplaceLocalDataWith: manifest)
            },
            didReplace: { [weak self] manifest in
                guard let self else { return }
                await self.delegate?.documentSyncManager(self, didReplaceLocalDataWith: manifest)
            })
    }
}
