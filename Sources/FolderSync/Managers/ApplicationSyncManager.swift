import Crypto
import Foundation
import Logging

/// Callbacks of an ``ApplicationSyncManager``; every method has an empty default.
///
/// The manager awaits every callback: a `@MainActor` type adopts the protocol with plain main-actor methods, which
/// run on the main actor. The delegate is held weakly.
public protocol ApplicationSyncManagerDelegate: AnyObject, Sendable {
    /// Registration with the application began.
    func applicationSyncManagerDidBeginRegistering(_ manager: ApplicationSyncManager) async
    /// The client is registered; documents can now register and sync.
    func applicationSyncManagerDidFinishRegistering(_ manager: ApplicationSyncManager) async
    /// Registration failed with `error`; the manager may register again.
    func applicationSyncManager(_ manager: ApplicationSyncManager, didFailToRegisterWithError error: FolderSyncError)
        async
    /// Registration paused for encryption: whether to encrypt a new application, or the password of an encrypted one.
    /// The default gives ``EncryptionAnswer/unattended(_:)``. An ``ApplicationSyncManager/encryptionHandler`` takes
    /// precedence.
    func applicationSyncManager(_ manager: ApplicationSyncManager, didPauseRegistrationFor request: EncryptionRequest)
        async -> EncryptionAnswer
}

extension ApplicationSyncManagerDelegate {
    public func applicationSyncManagerDidBeginRegistering(_ manager: ApplicationSyncManager) async {}
    public func applicationSyncManagerDidFinishRegistering(_ manager: ApplicationSyncManager) async {}
    public func applicationSyncManager(
        _ manager: ApplicationSyncManager, didFailToRegisterWithError error: FolderSyncError
    ) async {}
    public func applicationSyncManager(
        _ manager: ApplicationSyncManager,
        didPauseRegistrationFor request: EncryptionRequest
    ) async -> EncryptionAnswer {
        await EncryptionAnswer.unattended(request)
    }
}

/// Registers this client with an application on a remote, and owns what all its documents share.
///
/// ```swift
/// let remote = FileManagerFileSystem(rootURL: sharedFolder)
/// let app = ApplicationSyncManager(remote: remote)
/// try await app.register(.init(applicationIdentifier: "com.example.notes",
///                              clientIdentifier: clientID, clientDescription: "Ann's laptop"))
/// ```
/// Configure first and register later with ``configure(_:)`` and
/// ``registerConfigured()``, or do both with ``register(_:)``.
///
/// `@unchecked Sendable`: an `open` class (backends subclass it) cannot be checked `Sendable`; its stored
/// properties are `let`s of `Sendable` types, and what changes after creation is behind one `Locked`.
open class ApplicationSyncManager: @unchecked Sendable {
    /// Who this client is, and which application it syncs.
    public struct Configuration: Sendable, Hashable {
        /// The global application identifier (`com.example.notes`); the name of the application's folder.
        public var applicationIdentifier: String
        /// This installation's identifier, a UUID string by convention. Keep it across launches.
        public var clientIdentifier: String
        /// A human description of the installation ("Ann's laptop").
        public var clientDescription: String
        /// The app's own information about the installation, stored in its device info; FolderSync never reads it.
        public var userInfo: [String: String]

        /// Who this client is and which application it syncs; see the properties for each argument.
        public init(
            applicationIdentifier: String, clientIdentifier: String, clientDescription: String,
            userInfo: [String: String] = [:]
        ) {
            self.applicationIdentifier = applicationIdentifier
            self.clientIdentifier = clientIdentifier
            self.clientDescription = clientDescription
            self.userInfo = userInfo
        }
    }

    /// The remote this manager's documents read and write: the one given at creation, or, once registered with an
    /// encrypted application, the ``EncryptedFileSystem`` in front of it.
    public var remote: any RemoteFileSystem { mutable.current.remote }
    /// The remote given at creation, which holds the sealed files of an encrypted application.
    public let underlyingRemote: any RemoteFileSystem
    /// The clock, identifier source and logger every operation of this manager and its documents uses.
    public let environment: SyncEnvironment
    /// Everything of this manager that changes after creation, behind one lock: the remote and what registration
    /// found move together.
    private struct MutableState {
        var remote: any RemoteFileSystem
        var encryptionHandler: (@Sendable (EncryptionRequest) async -> EncryptionAnswer)?
        var encryptionKeyStore: (any EncryptionKeyStore)?
        var requiresEncryption = false
        var remoteReplacementHandler: (@Sendable (RemoteReplacementRequest) async -> Bool)?
        var clientIdentifierChangeHandler: (@Sendable (String) async throws -> Void)?
        /// Whether this launch came up from a remembered registration and has not registered with the remote yet.
        var checksRemote = false
        /// Whether a document of this client remembers registering: the application's tree is then never created again.
        var registeredBefore = false
        /// Whether that document joined the application clear (it remembers no key file).
        var joinedClear = false
        /// What this client's `deviceInfo.plist` on the remote holds, as a document remembers it or a registration
        /// found it; `nil`: the next registration reads it.
        var deviceInfoOnRemote: DeviceInfo?
        /// Told when a registration finds or makes the application's tree (a document's first registration remembers
        /// it).
        var foundApplication: (@Sendable () throws -> Void)?
        /// The registration with the remote a document asked for, shared by the documents that ask at once.
        var pendingRegistration: Task<Void, any Error>?
        var encryptionKeyFile: Data?
        var configuration: (Configuration, RemoteLayout)?
        var delegate = WeakDelegate()
    }
    private let mutable: Locked<MutableState>
    private let gate = RegistrationGate()

    private struct WeakDelegate { weak var value: (any ApplicationSyncManagerDelegate)? }

    /// An unconfigured manager for the application tree on `remote`; nothing is read or written yet.
    /// - Parameters:
    ///   - remote: The shared folder.
    ///   - environment: Time, identifiers and logging; ``SyncEnvironment/live`` by default.
    public init(remote: any RemoteFileSystem, environment: SyncEnvironment = .live) {
        self.mutable = Locked(MutableState(remote: remote))
        self.underlyingRemote = remote
        self.environment = environment
    }

    /// Told when registration begins, ends or fails. Held weakly.
    public var delegate: (any ApplicationSyncManagerDelegate)? {
        get { mutable.current.delegate.value }
        set { mutable.withLock { $0.delegate.value = newValue } }
    }

    /// Where the manager is in its registration.
    public var state: RegistrationState { gate.state }

    /// The configuration, once ``configure(_:)`` was called.
    public var currentConfiguration: Configuration? { mutable.current.configuration?.0 }
    /// The application's identifier, once configured.
    public var applicationIdentifier: String? { currentConfiguration?.applicationIdentifier }
    /// This installation's identifier, once configured.
    public var clientIdentifier: String? { currentConfiguration?.clientIdentifier }
    /// This installation's description for people, once configured.
    public var clientDescription: String? { currentConfiguration?.clientDescription }
    /// The app's information about this installation, once configured.
    public var userInfo: [String: String]? { currentConfiguration?.userInfo }

    /// Whether the application's remote data is encrypted; known once registered.
    public var shouldUseEncryption: Bool { remote is EncryptedFileSystem }

    /// Answers registration's encryption questions (see ``EncryptionRequest``); takes precedence over the delegate.
    /// Without either, a new application is not encrypted and an encrypted one cannot be joined.
    public var encryptionHandler: (@Sendable (EncryptionRequest) async -> EncryptionAnswer)? {
        get { mutable.current.encryptionHandler }
        set { mutable.withLock { $0.encryptionHandler = newValue } }
    }

    /// Where the key derived from the encryption password is kept between launches (never the password), for
    /// example `FileEncryptionKeyStore(directory: helperDirectory)`. Without one the password is asked at every
    /// registration.
    public var encryptionKeyStore: (any EncryptionKeyStore)? {
        get { mutable.current.encryptionKeyStore }
        set { mutable.withLock { $0.encryptionKeyStore = newValue } }
    }

    /// Whether the app requires the application's files to be encrypted (for example because the user gave a
    /// password). Then a folder that says it is not encrypted is refused with
    /// ``FolderSyncError/Code/encryptionMismatch`` instead of being joined in clear, and a new application is
    /// created encrypted or not at all. A client that holds an application's key refuses such a folder anyway.
    public var requiresEncryption: Bool {
        get { mutable.current.requiresEncryption }
        set { mutable.withLock { $0.requiresEncryption = newValue } }
    }

    /// Asked when the application's folder is gone from a remote this client registered with before: `true` means
    /// the remote was really replaced (a new, empty share), and this client creates the application's tree anew;
    /// then its documents stop with ``FolderSyncError/Code/integrityKeyMismatch`` and re-join. Without a handler, or
    /// when it answers `false`, the folder is taken for unreachable (an unmounted share looks empty):
    /// ``FolderSyncError/Code/remoteUnavailable``, nothing written, and the next sync looks again.
    public var remoteReplacementHandler: (@Sendable (RemoteReplacementRequest) async -> Bool)? {
        get { mutable.current.remoteReplacementHandler }
        set { mutable.withLock { $0.remoteReplacementHandler = newValue } }
    }

    /// Keeps a new client identifier for this installation, so that every later launch configures with it: called by
    /// ``DocumentSyncManager/rejoin()`` after ``FolderSyncError/Code/clientIdentityShared`` (this device's data was
    /// copied to another computer, or from one, and both sync), before the document re-joins under the new identifier.
    /// Persist it where the app keeps the identifier (its database, or ``replacePersistentClientIdentifier(in:with:)``)
    /// and return; throwing leaves the manager as it was, and the re-join can be tried again. Without a handler such a
    /// re-join fails with ``FolderSyncError/Code/invalidConfiguration``.
    public var clientIdentifierChangeHandler: (@Sendable (String) async throws -> Void)? {
        get { mutable.current.clientIdentifierChangeHandler }
        set { mutable.withLock { $0.clientIdentifierChangeHandler = newValue } }
    }

    /// Takes `identifier` as this installation's client identifier (the app kept it), and registers it with the remote
    /// at the next registration check: the application's folder gets its device information.
    func adopt(clientIdentifier identifier: String) throws {
        try Identifier.validate(identifier, role: "client identifier")
        mutable.withLock { state in
            state.configuration?.0.clientIdentifier = identifier
            state.checksRemote = true
        }
    }

    /// `Encryption/EncryptionKey.plist` of the application this manager registered with, when it is encrypted: what a
    /// document remembers to unlock it at a later launch without the remote.
    var encryptionKeyFile: Data? { mutable.current.encryptionKeyFile }

    /// What this client's device info on the remote holds, when a registration wrote or read it, or a document
    /// remembers it: what a document remembers, so that a later launch writes it only when it changed.
    var deviceInfoOnRemote: DeviceInfo? { mutable.current.deviceInfoOnRemote }

    /// Calls `found` (or nothing, with `nil`) when a registration finds or makes the application's tree, before it
    /// writes anything else: a document registering for the first time remembers then that the tree exists.
    func whenApplicationFound(_ found: (@Sendable () throws -> Void)?) {
        mutable.withLock { $0.foundApplication = found }
    }

    /// Makes the next registration read this client's device info back, and write it if it is missing or differs:
    /// at the heartbeat's interval (a folder restored from an older copy, a file moved aside by `doctor --repair`).
    func checkDeviceInfoAgain() { mutable.withLock { $0.deviceInfoOnRemote = nil } }

    /// The layout of this application's tree, once configured.
    public var layout: RemoteLayout? { mutable.current.configuration?.1 }

    /// Validates and stores the configuration without touching the remote.
    ///
    /// - Throws: ``FolderSyncError/Code/invalidIdentifier`` for an identifier that is not a safe file name.
    public func configure(_ configuration: Configuration) throws {
        let layout = try RemoteLayout(applicationIdentifier: configuration.applicationIdentifier)
        try Identifier.validate(configuration.clientIdentifier, role: "client identifier")
        mutable.withLock { $0.configuration = (configuration, layout) }
    }

    /// Configures, then registers.
    public func register(_ configuration: Configuration) async throws {
        try configure(configuration)
        try await registerConfigured()
    }

    /// Registers with the configuration given to ``configure(_:)``.
    ///
    /// The first client of an application creates its tree; later ones only their own folder.
    /// - Throws: ``FolderSyncError/Code/unsupportedFormatVersion`` for a tree newer than this build,
    ///   ``FolderSyncError/Code/permissionDenied`` for a read-only remote, and other typed errors.
    public func registerConfigured() async throws {
        guard let (configuration, layout) = mutable.current.configuration else {
            throw FolderSyncError(.invalidConfiguration, "configure the application sync manager before registering it")
        }
        try gate.begin(what: "application \(configuration.applicationIdentifier)")
        await delegate?.applicationSyncManagerDidBeginRegistering(self)
        do {
            try await registerWithRemote(configuration, layout: layout)
            gate.finish(.success(()))
            environment.logger.info(
                "Registered client \(configuration.clientIdentifier) with \(configuration.applicationIdentifier)")
            await delegate?.applicationSyncManagerDidFinishRegistering(self)
        } catch {
            let error = FolderSyncError.wrapping(error, "application registration failed")
            gate.finish(.failure(error))
            await delegate?.applicationSyncManager(self, didFailToRegisterWithError: error)
            throw error
        }
    }

    /// Returns when this manager is registered; throws if its registration fails.
    public func waitUntilRegistered() async throws {
        try await gate.wait()
    }

    /// Runs the registration operation against the remote and adopts what it found. `rejoining`: the app said the
    /// remote was replaced (``DocumentSyncManager/rejoin()``), so a missing tree is created even by a client that
    /// registered before.
    private func registerWithRemote(_ configuration: Configuration, layout: RemoteLayout, rejoining: Bool = false)
        async throws
    {
        let device = DeviceInfo(
            clientIdentifier: configuration.clientIdentifier, clientDescription: configuration.clientDescription,
            userInfo: configuration.userInfo, registrationDate: environment.now().wholeSeconds)
        // Passed to the factory, so that a backend's subclass gets them too.
        let remembered = mutable.current
        var options = ApplicationRegistrationOperation.Options(
            deviceInfo: device, encryptionKeyStore: encryptionKeyStore,
            askAboutEncryption: { [unowned self] request in await self.askAboutEncryption(request) })
        options.requiresEncryption = requiresEncryption
        options.registeredBefore = remembered.registeredBefore && !rejoining
        options.joinedClear = options.registeredBefore && remembered.joinedClear
        options.deviceInfoOnRemote = rejoining ? nil : remembered.deviceInfoOnRemote
        options.foundApplication = remembered.foundApplication
        options.askToReplaceRemote = { [unowned self] request in await self.remoteReplacementHandler?(request) ?? false
        }
        let operation = applicationRegistrationOperation(layout: layout, options: options)
        try await operation.run()
        mutable.withLock { state in
            state.remote = operation.fileSystem
            state.encryptionKeyFile = operation.encryptionKeyFile
            state.deviceInfoOnRemote = operation.deviceInfoOnRemote
            state.checksRemote = false
        }
    }

    /// Asks for a registration with the remote at the next ``registerIfNeeded(registeredBefore:rejoining:)``: the
    /// application's folder was found gone (an unreachable share, or a replaced remote the app may confirm).
    /// The device info is read back too: the folder that comes back may be an older copy.
    func checkRemoteAgain() {
        mutable.withLock { state in
            state.checksRemote = true
            state.deviceInfoOnRemote = nil
        }
    }

    /// Comes up from what a document of this client remembers, without touching the remote: configured, able to sync,
    /// and with an encrypted application unlocked by the saved password key. The remote is checked by the first
    /// ``registerIfNeeded(registeredBefore:)``. `false` when it cannot (an encrypted application whose password key is
    /// not saved, or no longer opens the remembered key file): the launch then registers with the remote.
    /// `deviceInfo`: what the document remembers this client's device info on the remote to hold.
    func resume(encryptionKey: Data?, deviceInfo: DeviceInfo?) throws -> Bool {
        guard let (configuration, layout) = mutable.current.configuration else {
            throw FolderSyncError(.invalidConfiguration, "configure the application sync manager before its documents")
        }
        if state == .ableToSync || state == .registering {  // this launch registered, or is registering
            mutable.withLock { $0.registeredBefore = true }
            return true
        }
        mutable.withLock { state in
            state.registeredBefore = true
            state.joinedClear = encryptionKey == nil
            state.deviceInfoOnRemote = deviceInfo
        }
        var remote = underlyingRemote
        if let encryptionKey {
            let info = try PropertyListFile.decode(
                EncryptionKeyInfo.self, from: encryptionKey, path: layout.encryptionKeyFile.description)
            guard let saved = try encryptionKeyStore?.passwordKey(for: layout.applicationIdentifier) else {
                return false
            }
            let passwordKey = SymmetricKey(data: saved)
            guard info.accepts(passwordKey) else { return false }
            remote = EncryptedFileSystem(
                base: underlyingRemote, layout: layout,
                dataKey: try info.dataKey(with: passwordKey, path: layout.encryptionKeyFile))
        }
        try gate.begin(what: "application \(configuration.applicationIdentifier)")
        mutable.withLock { state in
            state.remote = remote
            state.encryptionKeyFile = encryptionKey
            state.checksRemote = true
        }
        gate.finish(.success(()))
        return true
    }

    /// Registers with the remote unless this launch did: a first registration, or the check after a launch that came up
    /// from a remembered registration (which leaves the manager able to sync if it fails: the next sync tries again).
    /// Documents that ask at once share one registration. `registeredBefore`: a document remembers registering, so
    /// the application's tree is never created again by itself (``remoteReplacementHandler``).
    /// `rejoining`: a re-join after a wipe registers again in any case, creating the tree if it is gone.
    /// - Returns: whether the application registered with the remote now (`false`: earlier in this launch).
    @discardableResult
    func registerIfNeeded(registeredBefore: Bool, rejoining: Bool = false) async throws -> Bool {
        let task = mutable.withLock { mutable -> Task<Void, any Error>? in
            if registeredBefore { mutable.registeredBefore = true }
            if let pending = mutable.pendingRegistration { return pending }
            switch self.state {
            case .ableToSync where !mutable.checksRemote && !rejoining: return nil
            case .registering: return nil
            default: break
            }
            let task = Task { [self] in
                if self.state == .ableToSync {
                    guard let (configuration, layout) = self.mutable.current.configuration else { return }
                    try await registerWithRemote(configuration, layout: layout, rejoining: rejoining)
                } else {
                    try await registerConfigured()
                }
            }
            mutable.pendingRegistration = task
            return task
        }
        guard let task else {
            try await waitUntilRegistered()
            return false
        }
        defer { mutable.withLock { $0.pendingRegistration = nil } }
        try await task.value
        return true
    }

    /// Builds the registration operation, on the remote as the app gave it, with `options` (the device, the
    /// encryption answers, what this client remembers). Override to return a backend subclass, built with
    /// ``ApplicationRegistrationOperation/init(copying:)`` from the operation this returns.
    open func applicationRegistrationOperation(
        layout: RemoteLayout,
        options: ApplicationRegistrationOperation.Options
    ) -> ApplicationRegistrationOperation {
        ApplicationRegistrationOperation(
            context: ApplicationOperationContext(
                fileSystem: underlyingRemote, layout: layout,
                environment: environment),
            options: options)
    }

    private func askAboutEncryption(_ request: EncryptionRequest) async -> EncryptionAnswer {
        if let handler = encryptionHandler { return await handler(request) }
        if let delegate { return await delegate.applicationSyncManager(self, didPauseRegistrationFor: request) }
        return await EncryptionAnswer.unattended(request)
    }

    /// Builds the operation that lists registered clients. Override to return a backend subclass.
    open func listOfApplicationRegisteredClientsOperation(layout: RemoteLayout)
        -> ListOfApplicationRegisteredClientsOperation
    {
        ListOfApplicationRegisteredClientsOperation(context: applicationContext(layout: layout))
    }

    /// Builds the operation that lists documents. Override to return a backend subclass.
    open func listOfPreviouslySynchronizedDocumentsOperation(layout: RemoteLayout)
        -> ListOfPreviouslySynchronizedDocumentsOperation
    {
        ListOfPreviouslySynchronizedDocumentsOperation(context: applicationContext(layout: layout))
    }

    /// Builds the document deletion operation. Override to return a backend subclass.
    open func documentDeletionOperation(layout: RemoteLayout, documentIdentifier: String) -> DocumentDeletionOperation {
        DocumentDeletionOperation(
            context: DocumentOperationContext(
                fileSystem: remote, layout: layout, documentIdentifier: documentIdentifier,
                clientIdentifier: clientIdentifier ?? "unknown", environment: environment))
    }

    /// Builds the operation that removes the application's remote folder. Override to return a backend subclass.
    open func removeAllRemoteSyncDataOperation(layout: RemoteLayout) -> RemoveAllRemoteSyncDataOperation {
        RemoveAllRemoteSyncDataOperation(context: applicationContext(layout: layout))
    }

    /// What this manager's application-level operations receive: its remote (unlocked, when the application is
    /// encrypted), the application's layout, and its environment.
    func applicationContext(layout: RemoteLayout) -> ApplicationOperationContext {
        ApplicationOperationContext(fileSystem: remote, layout: layout, environment: environment)
    }
}
