/// Computes every path of the remote tree (layout version 1), in one place.
///
/// Paths are relative to the root of the shared folder and start with the
/// application's folder. The names are TICoreDataSync's, so a tree is
/// recognisable; ``RemoteLayout/catalog`` describes each entry for tools.
public struct RemoteLayout: Hashable, Sendable {
    /// The layout version this build writes and the newest it reads.
    public static let formatVersion = 1

    public let applicationIdentifier: String

    /// - Throws: ``FolderSyncError/Code/invalidIdentifier`` for an identifier that is not a safe file name.
    public init(applicationIdentifier: String) throws {
        self.applicationIdentifier = try Identifier.validate(applicationIdentifier, role: "application identifier")
    }

    // MARK: Application level

    public var applicationDirectory: RemotePath { RemotePath.root.appending(applicationIdentifier) }
    public var readMeFile: RemotePath { applicationDirectory.appending("ReadMe.txt") }
    public var formatVersionFile: RemotePath { applicationDirectory.appending("FormatVersion.plist") }
    public var clientDevicesDirectory: RemotePath { applicationDirectory.appending("ClientDevices") }
    public func clientDeviceDirectory(_ client: String) -> RemotePath { clientDevicesDirectory.appending(client) }
    public func deviceInfoFile(_ client: String) -> RemotePath { clientDeviceDirectory(client).appending("deviceInfo.plist") }
    public var encryptionDirectory: RemotePath { applicationDirectory.appending("Encryption") }
    public var informationDirectory: RemotePath { applicationDirectory.appending("Information") }
    public var deletedDocumentsDirectory: RemotePath { informationDirectory.appending("DeletedDocuments") }
    public func deletedDocumentFile(_ document: String) -> RemotePath { deletedDocumentsDirectory.appending(document + ".plist") }
    public var documentsDirectory: RemotePath { applicationDirectory.appending("Documents") }
    /// Where `foldersync doctor --repair` moves corrupt files, one subfolder per repair.
    public var quarantineDirectory: RemotePath { applicationDirectory.appending("Quarantine") }

    // MARK: Document level

    public func documentDirectory(_ document: String) -> RemotePath { documentsDirectory.appending(document) }
    public func documentInfoFile(_ document: String) -> RemotePath { documentDirectory(document).appending("documentInfo.plist") }
    public func integrityKeyDirectory(_ document: String) -> RemotePath { documentDirectory(document).appending("IntegrityKey") }
    public func integrityKeyFile(_ document: String, key: String) -> RemotePath { integrityKeyDirectory(document).appending(key) }
    public func syncChangesDirectory(_ document: String) -> RemotePath { documentDirectory(document).appending("SyncChanges") }
    public func syncChangesDirectory(_ document: String, client: String) -> RemotePath { syncChangesDirectory(document).appending(client) }
    public func syncCommandsDirectory(_ document: String) -> RemotePath { documentDirectory(document).appending("SyncCommands") }
    public func syncCommandsDirectory(_ document: String, client: String) -> RemotePath { syncCommandsDirectory(document).appending(client) }
    public func wholeStoreDirectory(_ document: String) -> RemotePath { documentDirectory(document).appending("WholeStore") }
    public func wholeStoreDirectory(_ document: String, client: String) -> RemotePath { wholeStoreDirectory(document).appending(client) }
    public func wholeStoreFile(_ document: String, client: String) -> RemotePath {
        wholeStoreDirectory(document, client: client).appending(Self.wholeStoreFileName)
    }
    public func appliedSyncChangeSetsFile(_ document: String, client: String) -> RemotePath {
        wholeStoreDirectory(document, client: client).appending(Self.appliedSyncChangeSetsFileName)
    }
    /// Files and large values stored once by content, named by their SHA-256 (see ``AttachmentReference``).
    public func attachmentsDirectory(_ document: String) -> RemotePath { documentDirectory(document).appending("Attachments") }
    public func attachmentFile(_ document: String, sha256: String) -> RemotePath { attachmentsDirectory(document).appending(sha256) }
    public func recentSyncsDirectory(_ document: String) -> RemotePath { documentDirectory(document).appending("RecentSyncs") }
    public func recentSyncFile(_ document: String, client: String) -> RemotePath {
        recentSyncsDirectory(document).appending(client + ".recentsync")
    }
    public func deletedClientsDirectory(_ document: String) -> RemotePath { documentDirectory(document).appending("DeletedClients") }
    public func deletedClientFile(_ document: String, client: String) -> RemotePath {
        deletedClientsDirectory(document).appending(client + ".plist")
    }
    public func temporaryFilesDirectory(_ document: String) -> RemotePath { documentDirectory(document).appending("TemporaryFiles") }
    public func temporaryWholeStoreDirectory(_ document: String) -> RemotePath {
        temporaryFilesDirectory(document).appending("WholeStore")
    }
    public func temporaryWholeStoreDirectory(_ document: String, client: String) -> RemotePath {
        temporaryWholeStoreDirectory(document).appending(client)
    }
    public func temporaryWholeStoreFile(_ document: String, client: String) -> RemotePath {
        temporaryWholeStoreDirectory(document, client: client).appending(Self.wholeStoreFileName)
    }
    public func temporaryAppliedSyncChangeSetsFile(_ document: String, client: String) -> RemotePath {
        temporaryWholeStoreDirectory(document, client: client).appending(Self.appliedSyncChangeSetsFileName)
    }

    public static let wholeStoreFileName = "WholeStore.ticdsync"
    public static let appliedSyncChangeSetsFileName = "AppliedSyncChangeSets.ticdsync"
    public static let changeSetExtension = "syncchg"

    /// The file name of a change set: `<sequence>-<changeSetID>.syncchg`, the sequence zero-padded so names sort.
    public static func changeSetFileName(sequence: Int64, changeSetIdentifier: String) -> String {
        let digits = String(sequence)
        return String(repeating: "0", count: max(0, 12 - digits.count)) + digits + "-" + changeSetIdentifier + "." + changeSetExtension
    }

    /// Parses a change-set file name; `nil` for anything else (a desktop agent's "name (1)" copy, a temporary…).
    public static func parseChangeSetFileName(_ name: String) -> (sequence: Int64, changeSetIdentifier: String)? {
        guard name.hasSuffix("." + changeSetExtension), !TemporaryName.isTemporary(name) else { return nil }
        let stem = name.dropLast(changeSetExtension.count + 1)
        guard let dash = stem.firstIndex(of: "-") else { return nil }
        let digits = stem[..<dash]
        let identifier = String(stem[stem.index(after: dash)...])
        guard digits.count == 12, digits.allSatisfy(\.isASCII), let sequence = Int64(digits), sequence > 0,
              (try? Identifier.validate(identifier, role: "change set")) != nil,
              identifier.allSatisfy({ $0.isHexDigit || $0 == "-" })
        else { return nil }
        return (sequence, identifier)
    }
}
