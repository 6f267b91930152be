public import Foundation
import Logging

/// What deleting a client from a document did.
public struct ClientDeletionReport: Sendable, Hashable {
    /// What was removed (the marker's write is not listed).
    public var removed: [RemotePath] = []
    /// `true` when the client's whole store was kept because it is the only snapshot of change sets already vacuumed;
    /// vacuum removes it once another whole store dominates it.
    public var keptWholeStore = false
}

/// Deletes one client from a document, so that it stops syncing it and resets when it returns.
///
/// The algorithm (``run()``) is fixed and calls `open` backend steps:
///
/// 1. Write `DeletedClients/<client>.plist` first: from then on vacuum
///    ignores the client's acknowledgement, and its registration and its
///    next sync fail with ``FolderSyncError/Code/clientDeleted``.
/// 2. Remove its recent sync (a client checks for the marker when its own
///    recent sync has vanished).
/// 3. Remove its whole store, unless it is the only readable snapshot and
///    change sets it contains were already vacuumed.
///
/// Its change sets are **kept**: other clients may not have applied them
/// yet. Vacuum removes them once nobody needs them.
open class DocumentClientDeletionOperation: @unchecked Sendable {
    /// The remote the operation works on; the default backend steps call it.
    public let fileSystem: any RemoteFileSystem
    /// Where the application's files are in the remote tree.
    public let layout: RemoteLayout
    /// The document concerned: the name of its folder in `Documents/`.
    public let documentIdentifier: String
    /// The client to delete.
    public let clientIdentifier: String
    /// Who deletes it (a client identifier or an operator's name), written in the marker.
    public let actorIdentifier: String
    /// The clock, identifier source and logger the operation uses.
    public let environment: SyncEnvironment

    /// An operation ready to ``run()``; see the properties for each argument.
    public init(fileSystem: any RemoteFileSystem, layout: RemoteLayout, documentIdentifier: String, clientIdentifier: String,
                actorIdentifier: String, environment: SyncEnvironment) {
        self.fileSystem = fileSystem
        self.layout = layout
        self.documentIdentifier = documentIdentifier
        self.clientIdentifier = clientIdentifier
        self.actorIdentifier = actorIdentifier
        self.environment = environment
    }

    /// The operation `standard` is, for a backend subclass to run with its own steps: the same configuration.
    public init(copying standard: DocumentClientDeletionOperation) {
        fileSystem = standard.fileSystem
        layout = standard.layout
        documentIdentifier = standard.documentIdentifier
        clientIdentifier = standard.clientIdentifier
        actorIdentifier = standard.actorIdentifier
        environment = standard.environment
    }

    /// Runs the deletion.
    ///
    /// - Throws: ``FolderSyncError/Code/invalidIdentifier`` for an unsafe identifier,
    ///   ``FolderSyncError/Code/remoteItemNotFound`` when the client never registered with the document.
    @discardableResult
    public func run() async throws -> ClientDeletionReport {
        let client = try Identifier.validate(clientIdentifier, role: "client identifier")
        guard try await clientIsKnown() else {
            throw FolderSyncError(.remoteItemNotFound, "client \(client) is not registered with document \(documentIdentifier)",
                                  path: layout.documentDirectory(documentIdentifier).description)
        }
        var report = ClientDeletionReport()
        let marker = DeletedClientInfo(clientIdentifier: client, deletedBy: actorIdentifier, deletionDate: environment.now().wholeSeconds)
        try await writeDeletedClientMarker(try PropertyListFile.encode(marker))

        // Reported only when it was there (a client that never synced has none).
        if try await fileSystem.exists(layout.recentSyncFile(documentIdentifier, client: client)) {
            try await removeRecentSync()
            report.removed.append(layout.recentSyncFile(documentIdentifier, client: client))
        }

        let folder = layout.wholeStoreDirectory(documentIdentifier, client: client)
        if try await !fileSystem.exists(folder) {
            // No whole store: nothing to remove, nothing to report.
        } else if try await wholeStoreIsRemovable() {
            try await removeWholeStore()
            report.removed.append(folder)
        } else {
            report.keptWholeStore = true
            environment.logger.info("Kept the whole store of deleted client \(client): it is the only snapshot of vacuumed change sets")
        }
        environment.logger.info("Deleted client \(client) from document \(documentIdentifier)")
        return report
    }

    /// Removable when another whole store exists that is verified (read whole, matching its manifest: every kept
    /// store covers what vacuum removed), or when every change set this store contains is still present.
    private func wholeStoreIsRemovable() async throws -> Bool {
        let manifestPath = layout.appliedSyncChangeSetsFile(documentIdentifier, client: clientIdentifier)
        guard let data = try await fetchWholeStoreManifest(client: clientIdentifier),
              let own = try? PropertyListFile.decode(WholeStoreManifest.self, from: data, path: manifestPath.description) else {
            return true // absent, or unreadable: nobody can install it
        }
        for item in try await fetchWholeStoreListing() where item.kind == .directory && item.name != clientIdentifier
            && DocumentInventory.isIdentifierName(item.name) {
            let path = layout.appliedSyncChangeSetsFile(documentIdentifier, client: item.name)
            let file = layout.wholeStoreFile(documentIdentifier, client: item.name)
            if let other = try await fetchWholeStoreManifest(client: item.name),
               let manifest = try? PropertyListFile.decode(WholeStoreManifest.self, from: other, path: path.description),
               let read = try? await WholeStoreReader.verify(path: file.description, { body in
                   try await fileSystem.readPieces(of: file, size: 1 << 20, body)
               }), (try? manifest.check(read, path: file.description)) != nil {
                return true
            }
        }
        for (author, highest) in own.covers where highest > 0 {
            let present = Set(try await fetchChangeSetListing(client: author).compactMap { RemoteLayout.parseChangeSetFileName($0.name)?.sequence })
            guard (1...highest).allSatisfy(present.contains) else { return false }
        }
        return true
    }

    // MARK: Backend steps

    /// Whether the client has a change-set folder, a recent sync, a whole store or a deletion marker in the document.
    open func clientIsKnown() async throws -> Bool {
        let document = documentIdentifier, client = clientIdentifier
        for path in [layout.syncChangesDirectory(document, client: client), layout.recentSyncFile(document, client: client),
                     layout.wholeStoreDirectory(document, client: client), layout.deletedClientFile(document, client: client)]
        where try await fileSystem.exists(path) {
            return true
        }
        return false
    }

    /// Writes `DeletedClients/<client>.plist`.
    open func writeDeletedClientMarker(_ data: Data) async throws {
        try await fileSystem.createDirectory(at: layout.deletedClientsDirectory(documentIdentifier))
        try await fileSystem.write(data, to: layout.deletedClientFile(documentIdentifier, client: clientIdentifier))
    }

    /// Removes `RecentSyncs/<client>.recentsync`.
    open func removeRecentSync() async throws {
        try await fileSystem.remove(layout.recentSyncFile(documentIdentifier, client: clientIdentifier))
    }

    /// Lists `WholeStore/`.
    open func fetchWholeStoreListing() async throws -> [RemoteItem] {
        try await fileSystem.contentsOfDirectoryIfPresent(at: layout.wholeStoreDirectory(documentIdentifier))
    }

    /// Reads a whole store's manifest, or `nil`.
    open func fetchWholeStoreManifest(client: String) async throws -> Data? {
        try await fileSystem.readIfPresent(layout.appliedSyncChangeSetsFile(documentIdentifier, client: client), maximumSize: PropertyListFile.maximumByteCount)
    }

    /// Lists one client's change sets.
    open func fetchChangeSetListing(client: String) async throws -> [RemoteItem] {
        try await fileSystem.contentsOfDirectoryIfPresent(at: layout.syncChangesDirectory(documentIdentifier, client: client))
    }

    /// Removes `WholeStore/<client>/`.
    open func removeWholeStore() async throws {
        try await fileSystem.remove(layout.wholeStoreDirectory(documentIdentifier, client: clientIdentifier))
    }
}
