public import Foundation
import Logging

/// Why document registration paused to ask whether to create the remote document.
public struct RemoteDocumentCreationRequest: Sendable, Hashable {
    /// Why the document is missing.
    public enum Reason: Sendable, Hashable {
        /// No client has created this document on the remote.
        case documentDoesNotExist
        /// The document was deleted from the remote; creating it starts a new epoch.
        case documentWasDeleted(DeletedDocumentInfo)
    }

    /// The document that is missing from the remote.
    public let documentIdentifier: String
    /// Whether it never existed or was deleted (with the deletion marker).
    public let reason: Reason
}

/// Registers a client with one document, creating the remote document when the app agrees.
///
/// The algorithm (``run()``) is fixed and calls `open` backend steps, each
/// with a default on ``RemoteFileSystem``:
///
/// 1. A client that was deleted from the document (`DeletedClients/<client>.plist`) stops.
/// 2. If the document exists, its integrity key is adopted, or compared with
///    the key this client remembers (a difference means the remote was reset).
/// 3. If it does not exist (or was deleted), registration pauses and asks.
///    "Yes" publishes `documentInfo.plist` **if absent** — of two clients
///    creating at the same moment, one wins and the other adopts its key —
///    then writes `IntegrityKey/<key>`. A document found with its info but no key file is one whose creation
///    stopped between the two: its key file is written (``DocumentInfo``'s `keyCompletingCreation`).
/// 4. This client's folders are created.
///
/// `@unchecked Sendable`: an `open` class cannot be checked `Sendable`; its context and options are `let`s.
open class DocumentRegistrationOperation: DocumentOperation, @unchecked Sendable {
    /// What a registration is asked to do, beside where: the document it would create, the key this client knew, and
    /// whether to create a missing document. Set before the operation is made; a backend subclass built with
    /// ``DocumentRegistrationOperation/init(copying:)`` receives the same value.
    public struct Options: Sendable {
        /// The document description and user info used if this client creates the document.
        public var proposedDocumentInfo: DocumentInfo
        /// The integrity key this client's local store belongs to, if it registered before.
        public var rememberedIntegrityKey: String?
        /// Asks the app whether to create the missing remote document (the manager's handler or delegate); `true`
        /// creates it. A re-join of a wiped remote answers `true` by itself.
        public var askToCreateRemoteDocument: @Sendable (RemoteDocumentCreationRequest) async -> Bool

        /// Options; see the properties for each argument.
        public init(
            proposedDocumentInfo: DocumentInfo, rememberedIntegrityKey: String?,
            askToCreateRemoteDocument: @escaping @Sendable (RemoteDocumentCreationRequest) async -> Bool
        ) {
            self.proposedDocumentInfo = proposedDocumentInfo
            self.rememberedIntegrityKey = rememberedIntegrityKey
            self.askToCreateRemoteDocument = askToCreateRemoteDocument
        }
    }

    /// The remote, the document and this client.
    public let context: DocumentOperationContext
    /// The proposed document, the remembered key, and the question to create a missing document.
    public let options: Options
    /// The document description and user info used if this client creates the document.
    public var proposedDocumentInfo: DocumentInfo { options.proposedDocumentInfo }
    /// The integrity key this client's local store belongs to, if it registered before.
    public var rememberedIntegrityKey: String? { options.rememberedIntegrityKey }
    /// Asks the app whether to create the missing remote document.
    public var askToCreateRemoteDocument: @Sendable (RemoteDocumentCreationRequest) async -> Bool {
        options.askToCreateRemoteDocument
    }

    /// An operation ready to ``run()``: it registers as `options` say, where `context` says.
    public init(context: DocumentOperationContext, options: Options) {
        self.context = context
        self.options = options
    }

    /// The operation `standard` is, for a backend subclass to run with its own steps: the same context and options,
    /// so that nothing the manager set is lost.
    public init(copying standard: DocumentRegistrationOperation) {
        context = standard.context
        options = standard.options
    }

    /// Runs the registration algorithm and returns the remote document's information (with its integrity key).
    public func run() async throws -> DocumentInfo {
        let document = documentIdentifier
        // The three reads go out together (this runs at every launch, and over a wide-area link each is a round trip);
        // they are looked at in this order, and the document's info only when it was not deleted.
        async let deletedClient = isDeleted()
        async let deletionMarker = fetchDeletedDocumentMarker()
        async let infoFile = fetchDocumentInfoFile()
        if try await deletedClient {
            throw FolderSyncError(
                .clientDeleted, "this client was deleted from document \(document)",
                path: layout.deletedClientFile(document, client: clientIdentifier).description)
        }
        let deletion = try await deletionMarker.map {
            try PropertyListFile.decode(
                DeletedDocumentInfo.self, from: $0, path: layout.deletedDocumentFile(document).description)
        }
        let existing = deletion == nil ? try decodeDocumentInfo(try await infoFile) : nil
        let info: DocumentInfo
        if let existing {
            info = existing
        } else {
            if let rememberedIntegrityKey {
                guard try await applicationTreeExists() else {
                    // Not a wipe: the application's folder is not there at all (an unmounted share is an empty folder).
                    throw FolderSyncError.applicationFolderAway(layout)
                }
                // This client's store belongs to a remote document that is now gone: never recreate silently.
                if let deletion {
                    throw FolderSyncError(
                        .documentDeleted,
                        "document \(document) was deleted by client \(deletion.deletedByClient)",
                        path: layout.deletedDocumentFile(document).description)
                }
                throw FolderSyncError(
                    .integrityKeyMismatch,
                    "the remote document is gone (wiped or replaced); the local store belongs to integrity key \(rememberedIntegrityKey)",
                    path: layout.documentDirectory(document).description)
            }
            let reason: RemoteDocumentCreationRequest.Reason =
                deletion.map { .documentWasDeleted($0) } ?? .documentDoesNotExist
            let request = RemoteDocumentCreationRequest(documentIdentifier: document, reason: reason)
            guard await askToCreateRemoteDocument(request) else {
                throw FolderSyncError(
                    .registrationCancelled, "the app declined to create remote document \(document)",
                    path: layout.documentDirectory(document).description)
            }
            try Task.checkCancellation()
            info = try await createDocument(replacingDeletion: deletion != nil)
        }
        if let rememberedIntegrityKey, rememberedIntegrityKey != info.integrityKey {
            throw FolderSyncError(
                .integrityKeyMismatch,
                "the remote document has integrity key \(info.integrityKey), the local store belongs to \(rememberedIntegrityKey)",
                path: layout.integrityKeyDirectory(document).description)
        }
        if let existing { try await completeIfHalfCreated(existing) }
        try await createClientDirectories()
        return info
    }

    /// Writes the key file of a document whose creation stopped before it (``DocumentInfo``'s
    /// `keyCompletingCreation`): every client that registers with it then finds it whole.
    private func completeIfHalfCreated(_ info: DocumentInfo) async throws {
        let keys = try await fetchIntegrityKeys()
        guard
            let key = DocumentInfo.keyCompletingCreation(
                of: documentIdentifier, info: info, keysPresent: keys,
                deleted: false)
        else { return }
        try await DocumentInfo.completeCreation(
            of: documentIdentifier, key: key, logger: environment.logger, write: writeIntegrityKeyFile)
    }

    private func fetchDocumentInfo() async throws -> DocumentInfo? {
        try decodeDocumentInfo(try await fetchDocumentInfoFile())
    }

    private func decodeDocumentInfo(_ data: Data?) throws -> DocumentInfo? {
        let path = layout.documentInfoFile(documentIdentifier)
        guard let data else { return nil }
        let info = try PropertyListFile.decode(DocumentInfo.self, from: data, path: path.description)
        guard info.documentIdentifier == documentIdentifier else {
            throw FolderSyncError(
                .corruptFile, "documentInfo.plist names document \(info.documentIdentifier)", path: path.description)
        }
        do {
            try Identifier.validate(info.integrityKey, role: "integrity key")
        } catch let error as FolderSyncError {
            throw FolderSyncError(
                .corruptFile, "documentInfo.plist names no usable integrity key: \(error.message)",
                path: path.description)
        }
        return info
    }

    private func createDocument(replacingDeletion: Bool) async throws -> DocumentInfo {
        let document = documentIdentifier
        if replacingDeletion {
            // The old tree may linger after a deletion that was interrupted; the new epoch starts clean.
            try await removeDocumentDirectory()
        }
        var info = proposedDocumentInfo
        info.integrityKey = environment.makeIdentifier()
        info.createdByClient = clientIdentifier
        info.creationDate = environment.now().wholeSeconds
        try await createDocumentDirectories()
        let adopted: DocumentInfo
        if try await publishDocumentInfoFileIfAbsent(try PropertyListFile.encode(info)) {
            environment.logger.info("Created remote document \(document) with integrity key \(info.integrityKey)")
            adopted = info
        } else {
            guard let winner = try await fetchDocumentInfo() else {
                throw FolderSyncError(
                    .remoteIOFailed, "documentInfo.plist vanished while being created",
                    path: layout.documentInfoFile(document).description)
            }
            adopted = winner
        }
        try await writeIntegrityKeyFile(adopted.integrityKey)
        if replacingDeletion { try await removeDeletedDocumentMarker() }
        return adopted
    }

    /// Whether a deletion marker that opens names this client (``DeletedClientInfo/verify(_:deleted:path:)``);
    /// one that does not open is logged and ignored.
    private func isDeleted() async throws -> Bool {
        guard try await deletedClientMarkerExists() else { return false }
        let path = layout.deletedClientFile(documentIdentifier, client: clientIdentifier).description
        do {
            guard let data = try await fetchDeletedClientMarker() else { return false }
            try DeletedClientInfo.verify(data, deleted: clientIdentifier, path: path)
            return true
        } catch let error as FolderSyncError where error.isDamagedFile {
            environment.logger.warning("Ignored a deletion marker that does not open: \(error)")
            return false
        }
    }

    // MARK: Backend steps

    /// Whether the application's tree is there (its `FormatVersion.plist`), asked only when the document looks gone.
    open func applicationTreeExists() async throws -> Bool {
        try await fileSystem.exists(layout.formatVersionFile)
    }

    /// Whether `DeletedClients/<client>.plist` exists for this client.
    open func deletedClientMarkerExists() async throws -> Bool {
        try await fileSystem.exists(layout.deletedClientFile(documentIdentifier, client: clientIdentifier))
    }

    /// Reads `DeletedClients/<this client>.plist`, or `nil`; asked only when ``deletedClientMarkerExists()`` found one.
    open func fetchDeletedClientMarker() async throws -> Data? {
        try await fileSystem.readIfPresent(
            layout.deletedClientFile(documentIdentifier, client: clientIdentifier),
            maximumSize: PropertyListFile.maximumByteCount)
    }

    /// Reads `Information/DeletedDocuments/<document>.plist`, or `nil`.
    open func fetchDeletedDocumentMarker() async throws -> Data? {
        try await fileSystem.readIfPresent(
            layout.deletedDocumentFile(documentIdentifier), maximumSize: PropertyListFile.maximumByteCount)
    }

    /// Reads `documentInfo.plist`, or `nil` when the document does not exist.
    open func fetchDocumentInfoFile() async throws -> Data? {
        try await fileSystem.readIfPresent(
            layout.documentInfoFile(documentIdentifier), maximumSize: PropertyListFile.maximumByteCount)
    }

    /// Moves what is left of a deleted document's tree (a deletion that stopped, a restore that has not removed the
    /// marker yet) into the application's removed area, as a document deletion by this client.
    open func removeDocumentDirectory() async throws {
        let folder = layout.documentDirectory(documentIdentifier)
        guard try await fileSystem.exists(folder) else { return }
        try await RemovedArea(fileSystem: fileSystem, layout: layout).remove(
            folder, as: .documentDeletion, by: clientIdentifier,
            at: environment.now())
    }

    /// Creates the document's shared folders (idempotent).
    open func createDocumentDirectories() async throws {
        let document = documentIdentifier
        for directory in [
            layout.documentDirectory(document), layout.integrityKeyDirectory(document),
            layout.syncChangesDirectory(document), layout.syncCommandsDirectory(document),
            layout.wholeStoreDirectory(document), layout.recentSyncsDirectory(document),
            layout.deletedClientsDirectory(document), layout.temporaryWholeStoreDirectory(document),
        ] {
            try await fileSystem.createDirectory(at: directory)
        }
    }

    /// Publishes `documentInfo.plist` if absent; `false` when another client created the document first.
    open func publishDocumentInfoFileIfAbsent(_ data: Data) async throws -> Bool {
        try await fileSystem.publishIfAbsent(data, to: layout.documentInfoFile(documentIdentifier))
    }

    /// The names in `IntegrityKey/` (normally exactly one), or `nil` when there is no such folder; asked when the
    /// document exists.
    open func fetchIntegrityKeys() async throws -> [String]? {
        try await fileSystem.integrityKeys(of: documentIdentifier, layout: layout)
    }

    /// Writes `IntegrityKey/<key>` (idempotent: every writer writes the same name and bytes).
    open func writeIntegrityKeyFile(_ key: String) async throws {
        try await fileSystem.writeIntegrityKey(key, of: documentIdentifier, layout: layout)
    }

    /// Removes `Information/DeletedDocuments/<document>.plist` once the new document exists.
    open func removeDeletedDocumentMarker() async throws {
        try await fileSystem.remove(layout.deletedDocumentFile(documentIdentifier))
    }

    /// Creates this client's folders in the document, which must be there: creating a folder creates its missing
    /// parents, and a tree that went away meanwhile (a share unmounted, a server emptied) is never made again from
    /// below (``FolderSyncError/Code/remoteItemNotFound`` naming the document's folder).
    open func createClientDirectories() async throws {
        let document = documentIdentifier
        guard try await fileSystem.exists(layout.documentDirectory(document)) else {
            throw FolderSyncError(
                .remoteItemNotFound, "the document's folder is gone",
                path: layout.documentDirectory(document).description)
        }
        // All at once: a folder that exists already costs two requests on WebDAV (MKCOL refused, then a PROPFIND).
        try await withThrowingTaskGroup(of: Void.self) { group in
            for directory in [
                layout.syncChangesDirectory(document, client: clientIdentifier),
                layout.syncCommandsDirectory(document, client: clientIdentifier),
                layout.temporaryWholeStoreDirectory(document, client: clientIdentifier),
            ] {
                group.addTask { try await self.fileSystem.createDirectory(at: directory) }
            }
            try await group.waitForAll()
        }
    }
}
