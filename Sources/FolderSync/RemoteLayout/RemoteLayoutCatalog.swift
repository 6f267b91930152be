public import Foundation

/// The machine-readable description of the layout (version 2): every folder and file of the tree.
///
/// `RemoteLayouts/v1/layout.json` in the repository is this catalog encoded
/// as JSON (a test keeps them equal); `foldersync layout` prints it and
/// `foldersync doctor` classifies real files with it.
public struct RemoteLayoutEntry: Codable, Hashable, Sendable {
    /// Whether an entry is a folder or a file.
    public enum Kind: String, Codable, Sendable {
        /// A folder.
        case directory
        /// A file.
        case file
    }

    /// The path pattern, with `<placeholder>` for identifiers; folders end with `/`.
    public let pattern: String
    /// Whether the entry is a folder or a file.
    public let kind: Kind
    /// Whether one exists per client, named by its client identifier (only that client writes it).
    public let perClient: Bool
    /// The file format (`plist`, `text`, `change-set`…), or `directory`.
    public let format: String
    /// Whether the contents are encrypted when the application uses encryption.
    public let encryptedWhenEnabled: Bool
    /// Whether it exists only in some trees (encryption on, after the first upload…).
    public let optional: Bool
    /// What the entry is for.
    public let summary: String
}

extension RemoteLayout {
    /// The description of version 2, folders before their contents. What a removed area holds below a removal's
    /// folder is the tree it was removed from, under the same paths; the catalog describes the area, not those.
    public static let catalog: [RemoteLayoutEntry] = {
        func dir(_ pattern: String, perClient: Bool = false, optional: Bool = false, _ summary: String)
            -> RemoteLayoutEntry
        {
            RemoteLayoutEntry(
                pattern: pattern, kind: .directory, perClient: perClient, format: "directory",
                encryptedWhenEnabled: false, optional: optional, summary: summary)
        }
        func file(
            _ pattern: String, _ format: String, perClient: Bool = false, encrypted: Bool = true,
            optional: Bool = false, _ summary: String
        ) -> RemoteLayoutEntry {
            RemoteLayoutEntry(
                pattern: pattern, kind: .file, perClient: perClient, format: format,
                encryptedWhenEnabled: encrypted, optional: optional, summary: summary)
        }
        let doc = "<appID>/Documents/<documentID>/"
        return [
            dir("<appID>/", "The application: one sync namespace, named by its global app identifier."),
            file("<appID>/ReadMe.txt", "text", encrypted: false, "What this folder is; do not edit by hand."),
            file(
                "<appID>/FormatVersion.plist", "plist", encrypted: false,
                "Layout and format version, so that newer formats are refused cleanly. Written last when the tree is created."
            ),
            dir("<appID>/ClientDevices/", "One folder per registered client installation."),
            dir("<appID>/ClientDevices/<clientID>/", perClient: true, "A client's folder."),
            file(
                "<appID>/ClientDevices/<clientID>/deviceInfo.plist", "plist", perClient: true,
                "The client's identifier, description, user info and registration date."),
            dir(
                "<appID>/Encryption/", optional: true,
                "Only when encrypted: salt, KDF parameters, wrapped data key, verifier."),
            file(
                "<appID>/Encryption/EncryptionKey.plist", "encryption-key", encrypted: false, optional: true,
                "The salt and PBKDF2 parameters, the data key wrapped by the password key, and the password verifier. "
                    + "Clear, since it is read before the key is known; a password change rewrites only this file."),
            dir("<appID>/Information/", "Application-wide information."),
            dir("<appID>/Information/DeletedDocuments/", "Markers of deleted documents."),
            file(
                "<appID>/Information/DeletedDocuments/<documentID>.plist", "plist", optional: true,
                "Says that a document was deleted, by whom and when."),
            dir(
                "<appID>/Quarantine/", optional: true,
                "Files `foldersync doctor --repair` of layout version 1 moved aside because they were corrupt. Nothing reads them; "
                    + "delete them by hand once inspected."),
            dir(
                "<appID>/Quarantine/<timestamp>/", optional: true,
                "One repair's quarantined files, each under its original path relative to the application folder."),
            dir(
                "<appID>/Removed/", optional: true,
                "Since layout version 2: what was removed outside any document (a deleted document's folder, an application file a "
                    + "repair moved aside), kept for a grace period (14 days by default), then purged by a vacuum."),
            dir(
                "<appID>/Removed/<day>/", optional: true,
                "The removals of one UTC day (yyyyMMdd, by the remover's clock)."),
            dir(
                "<appID>/Removed/<day>/<removal>/", optional: true,
                "One removal: its record and what it removed, each under its path relative to the application folder."),
            file(
                "<appID>/Removed/<day>/<removal>/Removal.plist", "plist", optional: true,
                "Who removed what and why (the operation), and when; written before anything is moved. Its date as the "
                    + "folder records it starts the grace period."),
            dir("<appID>/Documents/", "One folder per synchronized document."),
            dir(doc, "A document."),
            file(
                doc + "documentInfo.plist", "plist",
                "The document's identifier, description, user info and integrity key. Published once, if absent."),
            dir(doc + "IntegrityKey/", "Holds exactly one file, named by the document's integrity key (its epoch)."),
            file(
                doc + "IntegrityKey/<integrityKey>", "integrity-key", encrypted: false,
                "The integrity key; a different key means the remote document was reset."),
            dir(doc + "SyncChanges/", "Change sets, one folder per client."),
            dir(doc + "SyncChanges/<clientID>/", perClient: true, "The change sets one client pushed."),
            file(
                doc + "SyncChanges/<clientID>/<sequence>-<changeSetID>.syncchg", "change-set", perClient: true,
                optional: true,
                "An immutable change set, numbered by the client's sequence (12 digits)."),
            dir(doc + "SyncCommands/", "Commands for clients, one folder per client."),
            dir(doc + "SyncCommands/<clientID>/", perClient: true, "Commands addressed to one client."),
            dir(doc + "WholeStore/", "Whole-store snapshots, one folder per client that uploaded one."),
            dir(
                doc + "WholeStore/<clientID>/", perClient: true, optional: true,
                "A client's whole store; appears complete, by one rename of its staging folder."),
            file(
                doc + "WholeStore/<clientID>/WholeStore.ticdsync", "whole-store", perClient: true, optional: true,
                "A consistent snapshot of the document with its merge metadata."),
            file(
                doc + "WholeStore/<clientID>/AppliedSyncChangeSets.ticdsync", "applied-change-sets", perClient: true,
                optional: true,
                "Exactly which change sets the snapshot contains."),
            dir(
                doc + "Attachments/", optional: true,
                "Files and large column values stored once by content; created by the first upload of one."),
            file(
                doc + "Attachments/<sha256>", "attachment", optional: true,
                "An attachment, named by the SHA-256 of its contents; published before the first change set or whole store that references it."
            ),
            dir(doc + "RecentSyncs/", "One marker per client."),
            file(
                doc + "RecentSyncs/<clientID>.recentsync", "recent-sync", perClient: true, optional: true,
                "When the client last synced and which change sets it has durably applied (its acknowledgement)."),
            dir(doc + "DeletedClients/", "Markers of clients deleted from this document."),
            file(
                doc + "DeletedClients/<clientID>.plist", "plist", optional: true,
                "Says that a client was deleted; it resets safely at its next sync."),
            dir(
                doc + "Removed/", optional: true,
                "Since layout version 2: what vacuum, client deletion, expiry and repair removed from the document, kept for a "
                    + "grace period (14 days by default, at least a day), then purged by a vacuum; readers heal from it."
            ),
            dir(
                doc + "Removed/<day>/", optional: true,
                "The removals of one UTC day (yyyyMMdd, by the remover's clock)."),
            dir(
                doc + "Removed/<day>/<removal>/", optional: true,
                "One removal (a vacuum's run, a client deletion, a repair): its record and what it removed, each under its path "
                    + "relative to the document, with the same bytes."),
            file(
                doc + "Removed/<day>/<removal>/Removal.plist", "plist", optional: true,
                "Who removed what and why (the operation), and when; written before anything is moved. Its date as the "
                    + "folder records it starts the grace period."),
            dir(doc + "TemporaryFiles/", "Staging area."),
            dir(doc + "TemporaryFiles/WholeStore/", "Staging of whole stores."),
            dir(
                doc + "TemporaryFiles/WholeStore/<clientID>/", perClient: true,
                "Where one client stages its next whole store."),
            file(
                doc + "TemporaryFiles/WholeStore/<clientID>/WholeStore.ticdsync", "whole-store", perClient: true,
                optional: true,
                "A whole store being staged."),
            file(
                doc + "TemporaryFiles/WholeStore/<clientID>/AppliedSyncChangeSets.ticdsync", "applied-change-sets",
                perClient: true, optional: true, "The manifest of a whole store being staged."),
        ]
    }()

    /// The catalog entry a path matches, or `nil` for a file the layout does not know.
    ///
    /// Temporaries (``TemporaryName``) match no entry; callers check for them first.
    public static func entry(matching path: RemotePath, kind: RemoteLayoutEntry.Kind) -> RemoteLayoutEntry? {
        catalog.first { entry in
            entry.kind == kind && matches(pattern: entry.pattern, path: path)
        }
    }

    static func matches(pattern: String, path: RemotePath) -> Bool {
        let parts = pattern.split(separator: "/").map(String.init)
        guard parts.count == path.components.count else { return false }
        return zip(parts, path.components).allSatisfy { matches(component: $0, name: $1) }
    }

    /// Matches one component: literal text must match exactly, each `<placeholder>` stands for one or more characters
    /// (`<sequence>` for 12 digits).
    private static func matches(component pattern: String, name: String) -> Bool {
        if TemporaryName.isTemporary(name) || name.hasPrefix(".") { return false }
        if pattern.contains("<sequence>") {
            return parseChangeSetFileName(name) != nil
        }
        guard let open = pattern.firstIndex(of: "<") else { return pattern == name }
        let close = pattern.firstIndex(of: ">")!
        let prefix = pattern[..<open]
        let suffix = pattern[pattern.index(after: close)...]
        return name.count > prefix.count + suffix.count && name.hasPrefix(prefix) && name.hasSuffix(suffix)
    }
}

/// The JSON document `RemoteLayouts/v1/layout.json` and `foldersync layout --json` hold.
public struct RemoteLayoutDocument: Codable, Sendable {
    /// The layout version described (``RemoteLayout/formatVersion``).
    public var formatVersion: Int
    /// Files whose name starts with this prefix are being written (see ``TemporaryName``).
    public var temporaryFilePrefix: String
    /// Every entry of the tree, folders before their contents.
    public var entries: [RemoteLayoutEntry]
}

extension RemoteLayout {
    /// The catalog as pretty-printed, key-sorted JSON.
    public static func catalogJSON() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let document = RemoteLayoutDocument(
            formatVersion: formatVersion, temporaryFilePrefix: TemporaryName.prefix, entries: catalog)
        return try encoder.encode(document) + Data("\n".utf8)
    }
}
