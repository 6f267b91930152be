/// Computes every path of the remote tree (layout version 2), in one place.
///
/// Paths are relative to the root of the shared folder and start with the
/// application's folder. The names are TICoreDataSync's, so a tree is
/// recognisable; ``RemoteLayout/catalog`` describes each entry for tools.
public struct RemoteLayout: Hashable, Sendable {
    /// The layout version this build writes and the newest it reads. Version 2 adds the removed areas
    /// (``removedDirectory(_:)``, ``applicationRemovedDirectory``); a tree of version 1 is read and written as it is.
    public static let formatVersion = 2

    /// The application's global identifier (`com.example.notes`), validated as a safe file name; it names the tree's
    /// top folder.
    public let applicationIdentifier: String

    /// - Throws: ``FolderSyncError/Code/invalidIdentifier`` for an identifier that is not a safe file name.
    public init(applicationIdentifier: String) throws {
        self.applicationIdentifier = try Identifier.validate(applicationIdentifier, role: "application identifier")
    }

    // MARK: Application level

    /// `<appID>/`: the application's folder, holding everything else.
    public var applicationDirectory: RemotePath { RemotePath.root.appending(applicationIdentifier) }
    /// `<appID>/ReadMe.txt`: tells people what the folder is and not to edit it.
    public var readMeFile: RemotePath { applicationDirectory.appending("ReadMe.txt") }
    /// `<appID>/FormatVersion.plist`: the tree's layout version, written last when the tree is created.
    public var formatVersionFile: RemotePath { applicationDirectory.appending("FormatVersion.plist") }
    /// `<appID>/ClientDevices/`: one folder per registered client.
    public var clientDevicesDirectory: RemotePath { applicationDirectory.appending("ClientDevices") }
    /// `ClientDevices/<client>/`: the folder of one client.
    public func clientDeviceDirectory(_ client: String) -> RemotePath { clientDevicesDirectory.appending(client) }
    /// `ClientDevices/<client>/deviceInfo.plist`: the client's description, user info and registration date
    /// (``DeviceInfo``).
    public func deviceInfoFile(_ client: String) -> RemotePath {
        clientDeviceDirectory(client).appending("deviceInfo.plist")
    }
    /// `<appID>/Encryption/`: the key material of an encrypted application (present only when encrypted).
    public var encryptionDirectory: RemotePath { applicationDirectory.appending("Encryption") }
    /// The salt, key derivation parameters, wrapped data key and verifier of an encrypted application
    /// (``EncryptionKeyInfo``).
    public var encryptionKeyFile: RemotePath { encryptionDirectory.appending("EncryptionKey.plist") }
    /// `<appID>/Information/`: application-wide information.
    public var informationDirectory: RemotePath { applicationDirectory.appending("Information") }
    /// `Information/DeletedDocuments/`: markers of deleted documents.
    public var deletedDocumentsDirectory: RemotePath { informationDirectory.appending("DeletedDocuments") }
    /// `Information/DeletedDocuments/<document>.plist`: says a document was deleted, by whom and when
    /// (``DeletedDocumentInfo``).
    public func deletedDocumentFile(_ document: String) -> RemotePath {
        deletedDocumentsDirectory.appending(document + ".plist")
    }
    /// `<appID>/Documents/`: one folder per synchronized document.
    public var documentsDirectory: RemotePath { applicationDirectory.appending("Documents") }
    /// Where `foldersync doctor --repair` of layout version 1 moved corrupt files, one subfolder per repair (read only:
    /// repairs now move files into the removed areas).
    public var quarantineDirectory: RemotePath { applicationDirectory.appending("Quarantine") }
    /// `<appID>/Removed/`: what was removed outside any document (a deleted document's folder, an application file
    /// a repair moved aside), kept for a grace period like a document's ``removedDirectory(_:)``.
    public var applicationRemovedDirectory: RemotePath { applicationDirectory.appending(Self.removedFolderName) }

    // MARK: Document level

    /// `Documents/<document>/`: the folder of one document.
    public func documentDirectory(_ document: String) -> RemotePath { documentsDirectory.appending(document) }
    /// `<document>/documentInfo.plist`: the document's description, user info and integrity key (``DocumentInfo``).
    public func documentInfoFile(_ document: String) -> RemotePath {
        documentDirectory(document).appending("documentInfo.plist")
    }
    /// `<document>/IntegrityKey/`: holds one file, named by the document's integrity key.
    public func integrityKeyDirectory(_ document: String) -> RemotePath {
        documentDirectory(document).appending("IntegrityKey")
    }
    /// `<document>/IntegrityKey/<key>`: the file whose name is the integrity key `key`.
    public func integrityKeyFile(_ document: String, key: String) -> RemotePath {
        integrityKeyDirectory(document).appending(key)
    }
    /// `<document>/SyncChanges/`: change sets, one folder per client.
    public func syncChangesDirectory(_ document: String) -> RemotePath {
        documentDirectory(document).appending("SyncChanges")
    }
    /// `<document>/SyncChanges/<client>/`: the change sets `client` published.
    public func syncChangesDirectory(_ document: String, client: String) -> RemotePath {
        syncChangesDirectory(document).appending(client)
    }
    /// `<document>/SyncCommands/`: commands for clients, one folder per client (kept for TICoreDataSync's layout).
    public func syncCommandsDirectory(_ document: String) -> RemotePath {
        documentDirectory(document).appending("SyncCommands")
    }
    /// `<document>/SyncCommands/<client>/`: commands addressed to `client`.
    public func syncCommandsDirectory(_ document: String, client: String) -> RemotePath {
        syncCommandsDirectory(document).appending(client)
    }
    /// `<document>/WholeStore/`: whole stores, one folder per client that uploaded one.
    public func wholeStoreDirectory(_ document: String) -> RemotePath {
        documentDirectory(document).appending("WholeStore")
    }
    /// `<document>/WholeStore/<client>/`: the whole store `client` uploaded.
    public func wholeStoreDirectory(_ document: String, client: String) -> RemotePath {
        wholeStoreDirectory(document).appending(client)
    }
    /// `<document>/WholeStore/<client>/WholeStore.ticdsync`: the snapshot itself.
    public func wholeStoreFile(_ document: String, client: String) -> RemotePath {
        wholeStoreDirectory(document, client: client).appending(Self.wholeStoreFileName)
    }
    /// `<document>/WholeStore/<client>/AppliedSyncChangeSets.ticdsync`: its manifest (``WholeStoreManifest``).
    public func appliedSyncChangeSetsFile(_ document: String, client: String) -> RemotePath {
        wholeStoreDirectory(document, client: client).appending(Self.appliedSyncChangeSetsFileName)
    }
    /// Files and large values stored once by content, named by their SHA-256 (see ``AttachmentReference``).
    public func attachmentsDirectory(_ document: String) -> RemotePath {
        documentDirectory(document).appending("Attachments")
    }
    /// `Attachments/<sha256>`: one attachment, stored once however many rows, change sets and whole stores reference
    /// it.
    public func attachmentFile(_ document: String, sha256: String) -> RemotePath {
        attachmentsDirectory(document).appending(sha256)
    }
    /// `<document>/RecentSyncs/`: one recent-sync marker per client.
    public func recentSyncsDirectory(_ document: String) -> RemotePath {
        documentDirectory(document).appending("RecentSyncs")
    }
    /// `<document>/RecentSyncs/<client>.recentsync`: `client`'s recent-sync marker (`RecentSync`).
    public func recentSyncFile(_ document: String, client: String) -> RemotePath {
        recentSyncsDirectory(document).appending(Self.recentSyncFileName(client: client))
    }
    /// `<document>/DeletedClients/`: markers of clients deleted from the document.
    public func deletedClientsDirectory(_ document: String) -> RemotePath {
        documentDirectory(document).appending("DeletedClients")
    }
    /// `<document>/DeletedClients/<client>.plist`: says `client` was deleted (`DeletedClientInfo`).
    public func deletedClientFile(_ document: String, client: String) -> RemotePath {
        deletedClientsDirectory(document).appending(client + ".plist")
    }
    /// `<document>/TemporaryFiles/`: the document's staging area.
    public func temporaryFilesDirectory(_ document: String) -> RemotePath {
        documentDirectory(document).appending("TemporaryFiles")
    }
    /// `<document>/TemporaryFiles/WholeStore/`: where whole stores are staged before they appear by one rename.
    public func temporaryWholeStoreDirectory(_ document: String) -> RemotePath {
        temporaryFilesDirectory(document).appending("WholeStore")
    }
    /// `TemporaryFiles/WholeStore/<client>/`: where `client` stages its next whole store.
    public func temporaryWholeStoreDirectory(_ document: String, client: String) -> RemotePath {
        temporaryWholeStoreDirectory(document).appending(client)
    }
    /// `TemporaryFiles/WholeStore/<client>/WholeStore.ticdsync`: a snapshot being staged.
    public func temporaryWholeStoreFile(_ document: String, client: String) -> RemotePath {
        temporaryWholeStoreDirectory(document, client: client).appending(Self.wholeStoreFileName)
    }
    /// `TemporaryFiles/WholeStore/<client>/AppliedSyncChangeSets.ticdsync`: the manifest of a snapshot being staged.
    public func temporaryAppliedSyncChangeSetsFile(_ document: String, client: String) -> RemotePath {
        temporaryWholeStoreDirectory(document, client: client).appending(Self.appliedSyncChangeSetsFileName)
    }

    /// `<document>/Removed/`: what vacuum, client deletion, expiry and repair removed from the document, kept for a
    /// grace period: `Removed/<day>/<removal>/` holds one removal's files under their paths relative to the document,
    /// and its record (``RemovalRecord``).
    public func removedDirectory(_ document: String) -> RemotePath {
        documentDirectory(document).appending(Self.removedFolderName)
    }

    /// The name of the removed areas' folders.
    public static let removedFolderName = "Removed"
    /// The file name of a removal's record, in its folder of a removed area.
    public static let removalRecordFileName = "Removal.plist"

    /// The file name of a whole-store snapshot (TICoreDataSync's name).
    public static let wholeStoreFileName = "WholeStore.ticdsync"
    /// The file name of a whole store's manifest (TICoreDataSync's name).
    public static let appliedSyncChangeSetsFileName = "AppliedSyncChangeSets.ticdsync"
    /// The extension of change-set files, without the dot.
    public static let changeSetExtension = "syncchg"

    /// The name of `client`'s recent-sync marker in `RecentSyncs/`: `<client>.recentsync`.
    public static func recentSyncFileName(client: String) -> String { client + recentSyncSuffix }

    /// The client a name in `RecentSyncs/` is the marker of, or `nil` for any other name (a temporary, a stray
    /// file, a name that is no safe client identifier).
    public static func parseRecentSyncFileName(_ name: String) -> String? {
        guard name.hasSuffix(recentSyncSuffix), !TemporaryName.isTemporary(name) else { return nil }
        let client = String(name.dropLast(recentSyncSuffix.count))
        return (try? Identifier.validate(client, role: "client")) != nil ? client : nil
    }

    private static let recentSyncSuffix = ".recentsync"

    /// The highest sequence a change-set file name holds (twelve digits). Every sequence read from the folder (a
    /// marker's, a manifest's, a change set's header) is checked against it when the file is decoded, so that
    /// arithmetic on one cannot overflow, and a client never numbers a set past it (it could not be published).
    public static let maximumSequence: Int64 = 999_999_999_999

    /// Whether `sequence` is one a change-set file name holds, or 0 (none): the check of every sequence a file claims.
    static func isSequence(_ sequence: Int64, allowingZero: Bool = true) -> Bool {
        sequence <= maximumSequence && (allowingZero ? sequence >= 0 : sequence >= 1)
    }

    /// The file name of a change set: `<sequence>-<changeSetID>.syncchg`, the sequence zero-padded so names sort.
    public static func changeSetFileName(sequence: Int64, changeSetIdentifier: String) -> String {
        let digits = String(sequence)
        return String(repeating: "0", count: max(0, 12 - digits.count)) + digits + "-" + changeSetIdentifier + "."
            + changeSetExtension
    }

    /// Parses a change-set file name; `nil` for anything else (a desktop agent's "name (1)" copy, a temporary…).
    public static func parseChangeSetFileName(_ name: String) -> (sequence: Int64, changeSetIdentifier: String)? {
        // On UTF-8 bytes: a sync parses every name in a client's folder (thousands), and Character-level string work
        // was most of a sync's time there. A temporary's name starts with a dot, so it fails the digits.
        if let parsed = name.utf8.withContiguousStorageIfAvailable(parseChangeSetFileName(bytes:)) { return parsed }
        return Array(name.utf8).withUnsafeBufferPointer(parseChangeSetFileName(bytes:))
    }

    /// The sequence of a change-set file name, `nil` where ``parseChangeSetFileName(_:)`` is, and for a name numbered
    /// at or below `after` (the rest of such a name is not looked at): a publishing sync looks at every name in its own
    /// folder, hundreds, for the few past its published sequence.
    static func changeSetSequence(ofFileName name: String, after: Int64 = 0) -> Int64? {
        if let parsed = name.utf8.withContiguousStorageIfAvailable({
            validChangeSetFileName(bytes: $0, after: after)?.sequence
        }) {
            return parsed
        }
        return Array(name.utf8).withUnsafeBufferPointer { validChangeSetFileName(bytes: $0, after: after)?.sequence }
    }

    private static let changeSetSuffix = Array(("." + changeSetExtension).utf8)

    /// `<12 ASCII digits, not all zero>-<hexadecimal digits and dashes>.syncchg`.
    private static func parseChangeSetFileName(bytes: UnsafeBufferPointer<UInt8>) -> (
        sequence: Int64, changeSetIdentifier: String
    )? {
        guard let (sequence, identifier) = validChangeSetFileName(bytes: bytes) else { return nil }
        return (sequence, String(decoding: bytes[identifier], as: UTF8.self))
    }

    /// The sequence and the identifier's bytes of a change-set file name numbered past `after`, `nil` for anything
    /// else. Index loops, not slices and `allSatisfy`: these took a thousand instructions a name, and a publishing sync
    /// looks at every name in its own folder.
    private static func validChangeSetFileName(bytes: UnsafeBufferPointer<UInt8>, after: Int64 = 0) -> (
        sequence: Int64, identifier: Range<Int>
    )? {
        let suffix = changeSetSuffix
        let identifierStart = 13
        let identifierEnd = bytes.count - suffix.count
        guard identifierEnd > identifierStart, identifierEnd - identifierStart <= Identifier.maximumByteCount,
            bytes[12] == UInt8(ascii: "-")
        else { return nil }
        var sequence: Int64 = 0
        for index in 0..<12 {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            sequence = sequence &* 10 &+ Int64(digit)
        }
        guard sequence > max(after, 0) else { return nil }
        for index in 0..<suffix.count where bytes[identifierEnd + index] != suffix[index] { return nil }
        for index in identifierStart..<identifierEnd {
            switch bytes[index] {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
                UInt8(ascii: "A")...UInt8(ascii: "F"), UInt8(ascii: "-"):
                continue
            default: return nil
            }
        }
        return (sequence, identifierStart..<identifierEnd)
    }
}
