import Crypto
public import Foundation
import Logging

/// Why registration asks whether the remote was really replaced (``ApplicationSyncManager/remoteReplacementHandler``).
public struct RemoteReplacementRequest: Sendable, Hashable {
    /// The application whose folder is gone from a remote this client registered with before.
    public let applicationIdentifier: String
}

/// Registers a client with an application on the remote, creating the application's tree the first time.
///
/// The algorithm (``run()``) is fixed; the backend steps it calls are
/// `open`, each with a default written against ``RemoteFileSystem``. A
/// backend that can do better overrides steps; a plain backend overrides nothing.
///
/// The first client creates the folders and `ReadMe.txt`, then publishes
/// `FormatVersion.plist` last, so a tree with a format version is complete.
/// Later clients only write their own `ClientDevices/<client>/` folder, and only when it does not say what this
/// client would write (``deviceInfoOnRemote``): a launch whose registration is on the folder writes nothing, so a
/// device syncs from a read-only or full share.
///
/// `@unchecked Sendable`: an `open` class cannot be checked `Sendable`; its context and options are `let`s, and
/// what a run finds (``fileSystem``, ``deviceInfoOnRemote``, ``encryptionKeyFile``) is changed only by the task
/// that runs ``run()``, and read once it returns.
open class ApplicationRegistrationOperation: ApplicationOperation, @unchecked Sendable {
    /// What a registration is asked to do, beside where: the device it registers, how it answers encryption, and what
    /// the manager remembers of earlier registrations. Set before the operation is made; a backend subclass built with
    /// ``ApplicationRegistrationOperation/init(copying:)`` receives the same value.
    public struct Options: Sendable {
        /// What this client writes to `ClientDevices/<client>/deviceInfo.plist`.
        public var deviceInfo: DeviceInfo
        /// Where the password key of an encrypted application is saved, so the password is asked once.
        public var encryptionKeyStore: (any EncryptionKeyStore)?
        /// Asks the app whether to encrypt a new application, or for the password of an encrypted one.
        public var askAboutEncryption: @Sendable (EncryptionRequest) async -> EncryptionAnswer
        /// Whether the app requires the application to be encrypted (``ApplicationSyncManager/requiresEncryption``):
        /// a folder that says it is clear is then refused, and a new application is encrypted or not created.
        public var requiresEncryption = false
        /// Whether this client registered with the application before: its tree missing then means an unreachable
        /// folder (an unmounted share is an empty folder), not a new application, unless ``askToReplaceRemote`` says
        /// the remote was really replaced.
        public var registeredBefore = false
        /// Whether this client joined the application when it was not encrypted (its documents remember no key
        /// file): a `FormatVersion.plist` that says so is then believed without a look for a key file. An
        /// application is encrypted when it is created or never, and a client that holds a key refuses a folder that
        /// says it is clear all the same.
        public var joinedClear = false
        /// The device info this client knows `ClientDevices/<client>/deviceInfo.plist` holds (its documents remember
        /// it), or `nil`: the file is then read. Nothing is written when it describes the device as ``deviceInfo``
        /// does (its registration date aside); otherwise it is written, keeping the date of the first registration.
        public var deviceInfoOnRemote: DeviceInfo?
        /// Asked, when this client registered before and the application's tree is gone, whether the remote was
        /// really replaced (``ApplicationSyncManager/remoteReplacementHandler``); `nil` or `false`: it was not.
        public var askToReplaceRemote: (@Sendable (RemoteReplacementRequest) async -> Bool)?
        /// Told as soon as the application's tree is found or made, before anything else is written: the manager
        /// remembers it, so that a first registration killed after this point never has the tree made again.
        var foundApplication: (@Sendable () throws -> Void)?

        /// Options for registering `deviceInfo`. `encryptionKeyStore` keeps the derived key of an encrypted
        /// application between launches, and `askAboutEncryption` answers whether to encrypt a new application or
        /// gives the password of an existing one.
        public init(
            deviceInfo: DeviceInfo, encryptionKeyStore: (any EncryptionKeyStore)? = nil,
            askAboutEncryption: @escaping @Sendable (EncryptionRequest) async -> EncryptionAnswer = EncryptionAnswer
                .unattended
        ) {
            self.deviceInfo = deviceInfo
            self.encryptionKeyStore = encryptionKeyStore
            self.askAboutEncryption = askAboutEncryption
        }
    }

    /// The remote, the application's layout, and the environment.
    public let context: ApplicationOperationContext
    /// The device, the encryption answers, and what the manager remembers.
    public let options: Options
    /// The remote the steps use: the context's, until this registration unlocks an encrypted application; then its
    /// ``EncryptedFileSystem`` view, so that later steps (and overrides that use it) read and write sealed files.
    /// What the run found, not a setting: the manager adopts it once ``run()`` returns.
    public private(set) var fileSystem: any RemoteFileSystem
    /// What this client writes to `ClientDevices/<client>/deviceInfo.plist`.
    public var deviceInfo: DeviceInfo { options.deviceInfo }
    /// Where the password key of an encrypted application is saved, so the password is asked once.
    public var encryptionKeyStore: (any EncryptionKeyStore)? { options.encryptionKeyStore }
    /// Asks the app whether to encrypt a new application, or for the password of an encrypted one.
    public var askAboutEncryption: @Sendable (EncryptionRequest) async -> EncryptionAnswer {
        options.askAboutEncryption
    }
    /// Whether the app requires the application to be encrypted (``Options/requiresEncryption``).
    public var requiresEncryption: Bool { options.requiresEncryption }
    /// Whether this client registered with the application before (``Options/registeredBefore``).
    public var registeredBefore: Bool { options.registeredBefore }
    /// Whether this client joined the application when it was not encrypted (``Options/joinedClear``).
    public var joinedClear: Bool { options.joinedClear }
    /// Asked whether the remote was really replaced (``Options/askToReplaceRemote``).
    public var askToReplaceRemote: (@Sendable (RemoteReplacementRequest) async -> Bool)? { options.askToReplaceRemote }
    var foundApplication: (@Sendable () throws -> Void)? { options.foundApplication }

    /// How many passwords one registration tries before it stops with ``FolderSyncError/Code/wrongPassword``.
    public static let maximumPasswordAttempts = 5

    /// An operation ready to ``run()``: it registers as `options` say, where `context` says.
    public init(context: ApplicationOperationContext, options: Options) {
        self.context = context
        self.options = options
        fileSystem = context.fileSystem
        deviceInfoOnRemote = options.deviceInfoOnRemote
    }

    /// The operation `standard` is, for a backend subclass to run with its own steps: the same context and options,
    /// so that nothing the manager set is lost.
    public init(copying standard: ApplicationRegistrationOperation) {
        context = standard.context
        options = standard.options
        fileSystem = standard.context.fileSystem
        deviceInfoOnRemote = standard.options.deviceInfoOnRemote
    }

    /// Whether the application is encrypted; known once ``run()`` returns.
    public var isEncrypted: Bool { fileSystem is EncryptedFileSystem }
    /// What `ClientDevices/<client>/deviceInfo.plist` holds once ``run()`` returns (before:
    /// ``Options/deviceInfoOnRemote``).
    public private(set) var deviceInfoOnRemote: DeviceInfo?
    /// `Encryption/EncryptionKey.plist` as read or written by this registration, when the application is encrypted.
    public private(set) var encryptionKeyFile: Data?

    /// Runs the registration algorithm.
    ///
    /// The first client asks whether to encrypt before it publishes anything but folders, and publishes
    /// `Encryption/EncryptionKey.plist` before `FormatVersion.plist`; later clients of an encrypted application
    /// unlock it with the saved key or the password before writing their device info.
    public func run() async throws {
        let versionPath = layout.formatVersionFile
        if let data = try await fetchFormatVersionFile() {
            let info = try FormatVersionInfo.decodeSupported(data, path: versionPath.description)
            try foundApplication?()
            if info.encrypted != true { try await checkClearFolder() }
            try await unlockIfEncrypted(info)
        } else {
            if registeredBefore {
                // Never populate an empty mount point: when the share is mounted again, its tree would be hidden.
                let request = RemoteReplacementRequest(applicationIdentifier: layout.applicationIdentifier)
                guard await askToReplaceRemote?(request) == true else {
                    throw FolderSyncError.applicationFolderAway(layout)
                }
                environment.logger.notice(
                    "The app says the remote of \(layout.applicationIdentifier) was replaced: creating its tree again")
            }
            try await createTree()
            try foundApplication?()
        }
        try await publishDeviceInfoUnlessThere()
    }

    /// For the operator's tool: creates the application's tree in a shared folder that holds none (emptied, replaced,
    /// restored from a copy older than the application), as its first client does, without registering a client:
    /// `FormatVersion.plist` names ``deviceInfo``'s client identifier as its creator, and encryption is what
    /// ``askAboutEncryption`` answers. Every device that registered before then finds its document gone, stops on
    /// ``FolderSyncError/Code/integrityKeyMismatch`` and re-joins with its data.
    /// - Returns: `false` when the folder holds the application already; nothing is written then.
    @_spi(Tooling) public func createApplicationTree() async throws -> Bool {
        guard try await fetchFormatVersionFile() == nil else { return false }
        try await createTree()
        return true
    }

    /// Creates the tree: folders, the encryption key when the app chooses encryption, `ReadMe.txt`, and
    /// `FormatVersion.plist` last; follows the choice of another client that created it at the same moment.
    private func createTree() async throws {
        let versionPath = layout.formatVersionFile
        environment.logger.info("Creating the remote tree of \(layout.applicationIdentifier)")
        try await createApplicationDirectories()
        try await chooseEncryption()
        try await writeReadMeFileIfAbsent(Data(Self.readMe(for: layout.applicationIdentifier).utf8))
        let info = FormatVersionInfo(
            layoutVersion: RemoteLayout.formatVersion,
            createdByClient: deviceInfo.clientIdentifier,
            creationDate: environment.now().wholeSeconds,
            encrypted: isEncrypted ? true : nil)
        let data = try PropertyListFile.encode(info)
        guard try await !publishFormatVersionFileIfAbsent(data) else { return }
        // Another client created the tree at the same moment: check its version and follow its choice instead.
        guard let existing = try await fetchFormatVersionFile() else {
            throw FolderSyncError(
                .remoteIOFailed, "the format version file vanished while being created",
                path: versionPath.description)
        }
        let winner = try FormatVersionInfo.decodeSupported(existing, path: versionPath.description)
        if winner.encrypted != true { try await checkClearFolder() }
        if winner.encrypted != true, let encrypted = fileSystem as? EncryptedFileSystem {
            fileSystem = encrypted.base  // the winner chose no encryption; its tree is clear
        } else if !isEncrypted {
            try await unlockIfEncrypted(winner)
        }
    }

    /// Writes this client's device info unless the remote holds it already (``deviceInfoOnRemote``, else the file).
    private func publishDeviceInfoUnlessThere() async throws {
        if let known = deviceInfoOnRemote, known.describesSameDevice(as: deviceInfo) { return }
        let path = layout.deviceInfoFile(deviceInfo.clientIdentifier).description
        // A damaged file is written again, like a missing one.
        let found = try await unlessDamaged { try await fetchDeviceInfoFile() }
            .flatMap { try? PropertyListFile.decode(DeviceInfo.self, from: $0, path: path) }
        if let found, found.describesSameDevice(as: deviceInfo) {
            deviceInfoOnRemote = found
            return
        }
        var written = deviceInfo
        if let found, found.clientIdentifier == deviceInfo.clientIdentifier {
            written.registrationDate = found.registrationDate
        }
        try await createClientDeviceDirectory()
        try await writeDeviceInfoFile(try PropertyListFile.encode(written))
        deviceInfoOnRemote = written
    }

    // MARK: Encryption

    /// Refuses a folder that says it is not encrypted when it cannot be trusted to say so: `FormatVersion.plist` is
    /// clear (it is read before any key is known), so a storage provider can replace it with one that says "clear",
    /// and a client that believed it would write everything in clear from then on. It is believed only when this
    /// client holds no key of the application, the app does not require encryption, and the folder holds no key
    /// file.
    /// - Throws: ``FolderSyncError/Code/encryptionMismatch`` naming `FormatVersion.plist` and why.
    private func checkClearFolder() async throws {
        let reason: String
        if try encryptionKeyStore?.passwordKey(for: layout.applicationIdentifier) != nil {
            reason = "this client holds its encryption key (it joined it encrypted)"
        } else if requiresEncryption {
            reason =
                "the app requires encryption (it was given a password); an existing folder cannot be encrypted in place"
        } else if !joinedClear, try await fetchEncryptionKeyFile() != nil {
            reason = "it holds an encryption key file (Encryption/EncryptionKey.plist)"
        } else {
            return
        }
        throw FolderSyncError(
            .encryptionMismatch, "the shared folder says it is not encrypted, but \(reason); nothing was written",
            path: layout.formatVersionFile.description)
    }

    /// Unlocks the application when its format version says it is encrypted.
    private func unlockIfEncrypted(_ info: FormatVersionInfo) async throws {
        guard info.encrypted == true else { return }
        guard let data = try await fetchEncryptionKeyFile() else {
            throw FolderSyncError(
                .corruptFile, "the application is encrypted but its key file is missing",
                path: layout.encryptionKeyFile.description)
        }
        try await unlock(data)
    }

    /// Asks the first client whether to encrypt, and publishes the key file if it does.
    private func chooseEncryption() async throws {
        if let existing = try await fetchEncryptionKeyFile() {
            return try await unlock(existing)  // an earlier creator chose encryption, then stopped before finishing
        }
        let request = EncryptionRequest(
            applicationIdentifier: layout.applicationIdentifier, reason: .newApplication, attempt: 1)
        switch await askAboutEncryption(request) {
        case .noEncryption:
            guard !requiresEncryption else {
                throw FolderSyncError(
                    .encryptionMismatch, "the app requires encryption, but gave no password for the new application")
            }
            return
        case .cancel:
            throw FolderSyncError(
                .registrationCancelled, "the app cancelled registration when asked whether to encrypt")
        case .password(let password):
            guard !password.isEmpty else {
                throw FolderSyncError(.invalidConfiguration, "the encryption password is empty")
            }
            let dataKey = SymmetricKey(size: .bits256)
            let (info, passwordKey) = try EncryptionKeyInfo.make(
                wrapping: dataKey, password: password,
                client: deviceInfo.clientIdentifier, date: environment.now().wholeSeconds)
            try await createEncryptionDirectory()
            guard try await publishEncryptionKeyFileIfAbsent(try PropertyListFile.encode(info)) else {
                // Another creator encrypted first: join its key, trying this password first.
                guard let existing = try await fetchEncryptionKeyFile() else {
                    throw FolderSyncError(
                        .remoteIOFailed, "the key file vanished while being created",
                        path: layout.encryptionKeyFile.description)
                }
                return try await unlock(existing, trying: password)
            }
            try encryptionKeyStore?.savePasswordKey(passwordKey.bytes, for: layout.applicationIdentifier)
            encryptionKeyFile = try PropertyListFile.encode(info)
            environment.logger.info("Encrypting the remote tree of \(layout.applicationIdentifier)")
            fileSystem = EncryptedFileSystem(base: fileSystem, layout: layout, dataKey: dataKey)
        }
    }

    /// Opens the data key with the saved password key, or with passwords the app gives, re-asking after wrong ones.
    private func unlock(_ data: Data, trying firstPassword: String? = nil) async throws {
        let path = layout.encryptionKeyFile
        let info = try PropertyListFile.decode(EncryptionKeyInfo.self, from: data, path: path.description)
        encryptionKeyFile = data
        let application = layout.applicationIdentifier
        var reason = EncryptionRequest.Reason.passwordNeeded
        if firstPassword == nil, let saved = try encryptionKeyStore?.passwordKey(for: application) {
            let key = SymmetricKey(data: saved)
            if info.accepts(key) {
                fileSystem = EncryptedFileSystem(
                    base: fileSystem, layout: layout, dataKey: try info.dataKey(with: key, path: path))
                return
            }
            reason = .passwordChanged
        }
        var pending = firstPassword
        for attempt in 1...Self.maximumPasswordAttempts {
            let password: String
            if let given = pending {
                password = given
                pending = nil
            } else {
                switch await askAboutEncryption(
                    EncryptionRequest(applicationIdentifier: application, reason: reason, attempt: attempt))
                {
                case .password(let given): password = given
                case .noEncryption, .cancel:
                    if reason == .wrongPassword {
                        throw FolderSyncError(
                            .wrongPassword, "the password does not match the application's encryption key",
                            path: path.description)
                    }
                    throw FolderSyncError(
                        .registrationCancelled, "the application is encrypted and the app gave no password",
                        path: path.description)
                }
            }
            let key = try info.passwordKey(for: password, path: path)
            guard info.accepts(key) else {
                environment.logger.notice(
                    "Wrong password for the encrypted application \(application) (attempt \(attempt))")
                reason = .wrongPassword
                continue
            }
            let dataKey = try info.dataKey(with: key, path: path)
            try encryptionKeyStore?.savePasswordKey(key.bytes, for: application)
            fileSystem = EncryptedFileSystem(base: fileSystem, layout: layout, dataKey: dataKey)
            return
        }
        throw FolderSyncError(
            .wrongPassword,
            "\(Self.maximumPasswordAttempts) passwords in a row do not match the application's encryption key",
            path: path.description)
    }

    // MARK: Backend steps

    /// Reads `FormatVersion.plist`, or returns `nil` when the application has no tree yet.
    open func fetchFormatVersionFile() async throws -> Data? {
        try await fileSystem.readIfPresent(layout.formatVersionFile, maximumSize: PropertyListFile.maximumByteCount)
    }

    /// Creates the application's folders (idempotent).
    open func createApplicationDirectories() async throws {
        for directory in [
            layout.applicationDirectory, layout.clientDevicesDirectory,
            layout.deletedDocumentsDirectory, layout.documentsDirectory,
        ] {
            try await fileSystem.createDirectory(at: directory)
        }
    }

    /// Writes `ReadMe.txt` unless some client already did.
    open func writeReadMeFileIfAbsent(_ data: Data) async throws {
        _ = try await fileSystem.publishIfAbsent(data, to: layout.readMeFile)
    }

    /// Publishes `FormatVersion.plist` if absent; returns `false` when another client published it first.
    open func publishFormatVersionFileIfAbsent(_ data: Data) async throws -> Bool {
        try await fileSystem.publishIfAbsent(data, to: layout.formatVersionFile)
    }

    /// Reads `Encryption/EncryptionKey.plist`, or returns `nil` when there is none.
    open func fetchEncryptionKeyFile() async throws -> Data? {
        try await fileSystem.readIfPresent(layout.encryptionKeyFile, maximumSize: PropertyListFile.maximumByteCount)
    }

    /// Creates `Encryption/`.
    open func createEncryptionDirectory() async throws {
        try await fileSystem.createDirectory(at: layout.encryptionDirectory)
    }

    /// Publishes `Encryption/EncryptionKey.plist` if absent; returns `false` when another client published it first.
    open func publishEncryptionKeyFileIfAbsent(_ data: Data) async throws -> Bool {
        try await fileSystem.publishIfAbsent(data, to: layout.encryptionKeyFile)
    }

    /// Reads `ClientDevices/<client>/deviceInfo.plist`, or `nil` when there is none.
    open func fetchDeviceInfoFile() async throws -> Data? {
        try await fileSystem.readIfPresent(
            layout.deviceInfoFile(deviceInfo.clientIdentifier),
            maximumSize: PropertyListFile.maximumByteCount)
    }

    /// Creates `ClientDevices/<client>/` in `ClientDevices/`, which must be there: a tree that went away meanwhile (a
    /// share unmounted, a server emptied) is never made again from below (``FolderSyncError/Code/remoteItemNotFound``).
    open func createClientDeviceDirectory() async throws {
        guard try await fileSystem.exists(layout.clientDevicesDirectory) else {
            throw FolderSyncError(
                .remoteItemNotFound, "the application's folder is gone",
                path: layout.clientDevicesDirectory.description)
        }
        try await fileSystem.createDirectory(at: layout.clientDeviceDirectory(deviceInfo.clientIdentifier))
    }

    /// Writes `ClientDevices/<client>/deviceInfo.plist`, replacing an earlier one.
    open func writeDeviceInfoFile(_ data: Data) async throws {
        try await fileSystem.write(data, to: layout.deviceInfoFile(deviceInfo.clientIdentifier))
    }

    static func readMe(for applicationIdentifier: String) -> String {
        """
        This folder holds the data that FolderSync synchronizes for the application
        "\(applicationIdentifier)" between devices.

        Do not edit, add, move or delete anything in it by hand: every device reads
        these files, and a change made here can stop them syncing. To inspect,
        vacuum, delete a client or repair this folder, use the `foldersync` tool.

        Layout version \(RemoteLayout.formatVersion). See FormatVersion.plist.

        """
    }
}
