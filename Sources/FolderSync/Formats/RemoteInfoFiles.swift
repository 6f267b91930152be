public import Foundation

/// `FormatVersion.plist`: the layout version of the whole tree.
///
/// A client refuses a tree whose version is newer than ``RemoteLayout/formatVersion``.
@_spi(Tooling) public struct FormatVersionInfo: PropertyListPayload {
    public static let kind = "formatVersion"
    public static let formatVersion = RemoteLayout.formatVersion
    /// The layout version of the tree.
    public var layoutVersion: Int
    /// The client that created the tree.
    public var createdByClient: String
    /// When the tree was created; for display only.
    public var creationDate: Date
    /// `true` when the application's files are encrypted (see `Encryption/`); absent when they are not.
    public var encrypted: Bool?

    /// Decodes `FormatVersion.plist` and refuses a layout newer than this build's, the one rule
    /// registration and `foldersync doctor` share.
    ///
    /// - Throws: ``FolderSyncError/Code/unsupportedFormatVersion`` for a newer envelope or layout;
    ///   ``FolderSyncError/Code/corruptFile`` for a damaged file.
    public static func decodeSupported(_ data: Data, path: String) throws -> FormatVersionInfo {
        let info = try PropertyListFile.decode(FormatVersionInfo.self, from: data, path: path)
        guard info.layoutVersion <= RemoteLayout.formatVersion else {
            throw FolderSyncError(
                .unsupportedFormatVersion,
                "the remote uses layout version \(info.layoutVersion); this build understands up to \(RemoteLayout.formatVersion)",
                path: path)
        }
        return info
    }
}

/// `ClientDevices/<client>/deviceInfo.plist`.
public struct DeviceInfo: PropertyListPayload {
    public static let kind = "deviceInfo"
    public static let formatVersion = 1
    /// The client the file describes, as named by its folder.
    public var clientIdentifier: String
    /// A name for people, such as "Ann's laptop".
    public var clientDescription: String
    /// The app's own information about the client; FolderSync stores it and never reads it.
    public var userInfo: [String: String]
    /// When the client registered with the application; for display only.
    public var registrationDate: Date

    /// A device info; see the properties for each argument.
    public init(clientIdentifier: String, clientDescription: String, userInfo: [String: String], registrationDate: Date)
    {
        self.clientIdentifier = clientIdentifier
        self.clientDescription = clientDescription
        self.userInfo = userInfo
        self.registrationDate = registrationDate
    }

    /// Whether `other` says what this file says about the device, whatever the registration date: then a launch
    /// does not write it again.
    func describesSameDevice(as other: DeviceInfo) -> Bool {
        clientIdentifier == other.clientIdentifier && clientDescription == other.clientDescription
            && userInfo == other.userInfo
    }
}

/// `Documents/<document>/documentInfo.plist`: published once, if absent, by the client that creates the document.
public struct DocumentInfo: PropertyListPayload {
    public static let kind = "documentInfo"
    public static let formatVersion = 1
    /// The document the file describes, as named by its folder.
    public var documentIdentifier: String
    /// A name for people, such as "Notes".
    public var documentDescription: String
    /// The app's own information about the document; FolderSync stores it and never reads it.
    public var userInfo: [String: String]
    /// The document's epoch; also the name of the one file in `IntegrityKey/`.
    public var integrityKey: String
    /// The client that created the remote document.
    public var createdByClient: String
    /// When the remote document was created; for display only.
    public var creationDate: Date
}

/// `Information/DeletedDocuments/<document>.plist`.
public struct DeletedDocumentInfo: PropertyListPayload, Hashable {
    public static let kind = "deletedDocument"
    public static let formatVersion = 1
    /// The identifier of the deleted document; also the marker's file name.
    public var documentIdentifier: String
    /// The identifier of the client that deleted it.
    public var deletedByClient: String
    /// When it was deleted; for display only.
    public var deletionDate: Date
}

/// `Documents/<document>/DeletedClients/<client>.plist`.
@_spi(Tooling) public struct DeletedClientInfo: PropertyListPayload {
    public static let kind = "deletedClient"
    public static let formatVersion = 1
    /// The identifier of the deleted client; also the marker's file name.
    public var clientIdentifier: String
    /// Who deleted it: a client identifier or an operator's name (of the vacuum that expired it, or of the deletion).
    public var deletedBy: String
    /// When it was deleted; for display only.
    public var deletionDate: Date

    /// Checks that `data`, read from `DeletedClients/<client>.plist`, really says that `client` was deleted.
    ///
    /// A marker deletes a client by existing, so existing is not enough: an empty, damaged or foreign file (in an
    /// encrypted folder: one that does not open with the key) could otherwise reset a client. Only a marker that
    /// decodes, of this kind, naming this client, counts; the caller reports any other and ignores it.
    /// - Throws: the error that makes the marker not count (``FolderSyncError/Code/corruptFile``, `tamperedFile`…).
    static func verify(_ data: Data, deleted client: String, path: String) throws {
        let info = try PropertyListFile.decode(DeletedClientInfo.self, from: data, path: path)
        guard info.clientIdentifier == client else {
            throw FolderSyncError(.corruptFile, "the deletion marker names client \(info.clientIdentifier)", path: path)
        }
    }
}

/// What a client remembers locally about its registration of a document (in its helper folder): enough to come
/// up on a later launch without the shared folder (``DocumentSyncManager/registerConfigured()``).
struct LocalRegistration: PropertyListPayload {
    static let kind = "localRegistration"
    /// Version 2 adds ``encryptionKey``, so that an encrypted application is unlocked at launch without the remote;
    /// version 3 ``deviceInfo``, so that a launch writes the device info only when it changed.
    static let formatVersion = 3
    var applicationIdentifier: String
    var documentIdentifier: String
    var clientIdentifier: String
    /// The integrity key the local store belongs to.
    var integrityKey: String
    /// The application's `Encryption/EncryptionKey.plist` when it is encrypted: the data key wrapped by the password
    /// key, as on the remote (where it is clear too). With the password key of the key store, it opens the data key.
    var encryptionKey: Data? = nil
    /// The device info the remote held when this client last registered (written or read back), when known.
    var deviceInfo: DeviceInfo? = nil

    /// Version 2 when there is no device info: version 2 readers read all the file holds.
    var writtenFormatVersion: Int { deviceInfo == nil ? 2 : Self.formatVersion }
}

/// What a client remembers locally once its first registration found (or made) the application's tree, before that
/// registration is done (``LocalLayout/applicationSeenFile``): a registration that was interrupted then, followed
/// by a launch facing an empty mount point, must take the folder for away, not fill it with a new tree.
struct LocalApplicationSeen: PropertyListPayload {
    static let kind = "localApplication"
    static let formatVersion = 1
    var applicationIdentifier: String
    var clientIdentifier: String
}

/// The reset a client's document stopped on (remote wiped or replaced, document or client deleted), remembered in the
/// helper folder until ``DocumentSyncManager/rejoin()``: the store stays usable, every later sync stops on the same
/// reset without touching the remote, and the one backup made when it was found is the only one.
struct LocalReset: PropertyListPayload {
    static let kind = "localReset"
    static let formatVersion = 1
    /// ``FolderSyncError/Code``'s raw value.
    var code: Int
    var message: String
    var path: String?
    var backupPath: String?
    var date: Date

    /// The error a sync stops on while the reset is remembered: the one found, with its backup.
    var error: FolderSyncError {
        var error = FolderSyncError(FolderSyncError.Code(rawValue: code), message, path: path)
        error.backupPath = backupPath
        return error
    }
}

/// How the last syncs of a document went, for an app's status display (``DocumentSyncManager/lastSynchronization``).
struct LocalSyncStatus: PropertyListPayload {
    static let kind = "localSyncStatus"
    static let formatVersion = 1
    /// When a sync last completed.
    var lastSuccess: Date?
    /// When a sync last failed, with its error's code (raw value) and message; `nil` once a later one succeeded.
    var lastFailure: Date?
    var lastErrorCode: Int?
    var lastErrorMessage: String?
}
