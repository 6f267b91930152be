public import Foundation
import Logging

/// What deleting a client from a document did.
public struct ClientDeletionReport: Sendable, Hashable {
    /// What was removed (the marker's write is not listed), each moved into ``removalFolder``.
    public var removed: [RemotePath] = []
    /// Where in the document's removed area what was removed went (`nil` when nothing was): it stays there until a
    /// vacuum purges it after its grace period.
    public var removalFolder: RemotePath?
    /// `true` when the client's whole store was kept because no other store holds every change set it holds that
    /// was already vacuumed; vacuum removes it once another whole store dominates it.
    public var keptWholeStore = false
}

/// Deletes one client from a document, so that it stops syncing it and resets when it returns.
///
/// The algorithm (``run()``) is fixed and calls `open` backend steps:
///
/// 1. Write `DeletedClients/<client>.plist` first: from then on vacuum
///    ignores the client's acknowledgement, and its registration and its
///    next sync fail with ``FolderSyncError/Code/clientDeleted``.
/// 2. Move its recent sync into the document's removed area (a client checks
///    for the marker when its own recent sync has vanished).
/// 3. Move its whole store there too, unless change sets it contains were
///    already vacuumed and no other sound whole store contains them all (the
///    rule vacuum removes dominated stores by).
///
/// What it moves stays in the removed area until a vacuum purges it (after
/// its grace period, 14 days by default). Its change sets are **kept**: other
/// clients may not have applied them yet. Vacuum removes them once nobody
/// needs them.
///
/// `@unchecked Sendable`: an `open` class cannot be checked `Sendable`; its context and options are `let`s, and
/// the removal a run began is changed only by the task that runs ``run()``.
open class DocumentClientDeletionOperation: DocumentOperation, @unchecked Sendable {
    /// Which client to delete, and the safeguards in force.
    public struct Options: Sendable {
        /// The client to delete.
        public var deletedClient: String
        /// Safeguards switched off, for tests that replay the defects they guard against.
        package var disabledSafeguards: Set<RemovalSafeguard> = []

        /// Options that delete `deletedClient`.
        public init(deletedClient: String) {
            self.deletedClient = deletedClient
        }
    }

    /// The remote, the document, and who deletes the client (``DocumentOperationContext/clientIdentifier``: a client
    /// identifier or an operator's name, written in the marker).
    public let context: DocumentOperationContext
    /// The client to delete and the safeguards.
    public let options: Options
    /// The client to delete.
    public var deletedClientIdentifier: String { options.deletedClient }
    var disabledSafeguards: Set<RemovalSafeguard> { options.disabledSafeguards }
    /// Where what this deletion moves goes, once it began moving.
    private var removal: RemovedArea.Removal?

    /// An operation ready to ``run()``: it deletes the client `options` names, where `context` says.
    public init(context: DocumentOperationContext, options: Options) {
        self.context = context
        self.options = options
    }

    /// The operation `standard` is, for a backend subclass to run with its own steps: the same context and options.
    public init(copying standard: DocumentClientDeletionOperation) {
        context = standard.context
        options = standard.options
    }

    /// Runs the deletion.
    ///
    /// - Throws: ``FolderSyncError/Code/invalidIdentifier`` for an unsafe identifier,
    ///   ``FolderSyncError/Code/remoteItemNotFound`` when the client never registered with the document.
    @discardableResult
    public func run() async throws -> ClientDeletionReport {
        let client = try Identifier.validate(deletedClientIdentifier, role: "client identifier")
        guard try await clientIsKnown() else {
            throw FolderSyncError(
                .remoteItemNotFound, "client \(client) is not registered with document \(documentIdentifier)",
                path: layout.documentDirectory(documentIdentifier).description)
        }
        var report = ClientDeletionReport()
        let marker = DeletedClientInfo(
            clientIdentifier: client, deletedBy: clientIdentifier, deletionDate: environment.now().wholeSeconds)
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
            environment.logger.info(
                "Kept the whole store of deleted client \(client): no other store holds the vacuumed change sets it holds"
            )
        }
        report.removalFolder = removal?.folder
        environment.logger.info("Deleted client \(client) from document \(documentIdentifier)")
        return report
    }

    /// Removable when nothing is lost with it (``WholeStoreReplacement``, vacuum's rule): every change set it holds is
    /// still in the folder, or another whole store, read whole and matching its manifest, holds every one it holds that
    /// is not. A store whose manifest is gone or unreadable is removable: nobody can install it.
    private func wholeStoreIsRemovable() async throws -> Bool {
        let manifestPath = layout.appliedSyncChangeSetsFile(documentIdentifier, client: deletedClientIdentifier)
        guard let data = try await fetchWholeStoreManifest(client: deletedClientIdentifier),
            let own = try? PropertyListFile.decode(WholeStoreManifest.self, from: data, path: manifestPath.description)
        else {
            return true
        }
        var present: [String: Set<Int64>] = [:]
        for (author, highest) in own.covers where highest > 0 {
            present[author] = Set(
                try await fetchChangeSetListing(client: author).compactMap {
                    RemoteLayout.parseChangeSetFileName($0.name)?.sequence
                })
        }
        if WholeStoreReplacement.replaces([:], own, present: present) { return true }
        let anySoundStore = disabledSafeguards.contains(.keepsOnlyStoreOfDeletedClient)
        for item in try await fetchWholeStoreListing()
        where item.kind == .directory && item.name != deletedClientIdentifier
            && DocumentInventory.isIdentifierName(item.name)
        {
            let path = layout.appliedSyncChangeSetsFile(documentIdentifier, client: item.name)
            let file = layout.wholeStoreFile(documentIdentifier, client: item.name)
            guard let other = try await fetchWholeStoreManifest(client: item.name),
                let manifest = try? PropertyListFile.decode(
                    WholeStoreManifest.self, from: other, path: path.description),
                anySoundStore || WholeStoreReplacement.replaces(manifest.covers, own, present: present)
            else { continue }
            if let read = try? await WholeStoreReader.verify(
                path: file.description,
                { body in
                    try await fileSystem.readPieces(of: file, size: 1 << 20, body)
                }), (try? manifest.check(read, path: file.description)) != nil
            {
                return true
            }
        }
        return false
    }

    // MARK: Backend steps

    /// Whether the client has a change-set folder, a recent sync, a whole store or a deletion marker in the document.
    open func clientIsKnown() async throws -> Bool {
        let document = documentIdentifier
        let client = deletedClientIdentifier
        for path in [
            layout.syncChangesDirectory(document, client: client), layout.recentSyncFile(document, client: client),
            layout.wholeStoreDirectory(document, client: client), layout.deletedClientFile(document, client: client),
        ]
        where try await fileSystem.exists(path) {
            return true
        }
        return false
    }

    /// Writes `DeletedClients/<client>.plist`.
    open func writeDeletedClientMarker(_ data: Data) async throws {
        try await fileSystem.createDirectory(at: layout.deletedClientsDirectory(documentIdentifier))
        try await fileSystem.write(
            data, to: layout.deletedClientFile(documentIdentifier, client: deletedClientIdentifier))
    }

    /// Moves `RecentSyncs/<client>.recentsync` into the removed area.
    open func removeRecentSync() async throws {
        try await moveToRemovedArea(layout.recentSyncFile(documentIdentifier, client: deletedClientIdentifier))
    }

    /// Lists `WholeStore/`.
    open func fetchWholeStoreListing() async throws -> [RemoteItem] {
        try await fileSystem.contentsOfDirectoryIfPresent(at: layout.wholeStoreDirectory(documentIdentifier))
    }

    /// Reads a whole store's manifest, or `nil`.
    open func fetchWholeStoreManifest(client: String) async throws -> Data? {
        try await fileSystem.readIfPresent(
            layout.appliedSyncChangeSetsFile(documentIdentifier, client: client),
            maximumSize: PropertyListFile.maximumByteCount)
    }

    /// Lists one client's change sets.
    open func fetchChangeSetListing(client: String) async throws -> [RemoteItem] {
        try await fileSystem.contentsOfDirectoryIfPresent(
            at: layout.syncChangesDirectory(documentIdentifier, client: client))
    }

    /// Moves `WholeStore/<client>/` into the removed area.
    open func removeWholeStore() async throws {
        try await moveToRemovedArea(layout.wholeStoreDirectory(documentIdentifier, client: deletedClientIdentifier))
    }

    /// Moves a file or folder into this deletion's removal of the document's removed area (begun with the first).
    private func moveToRemovedArea(_ path: RemotePath) async throws {
        let area = RemovedArea(fileSystem: fileSystem, layout: layout, document: documentIdentifier)
        if removal == nil {
            removal = try await area.begin(.clientDeletion, by: clientIdentifier, at: environment.now())
        }
        guard let removal else { return }
        try await area.makeFolders(for: [path], in: removal)
        try await fileSystem.moveAside(path, to: removal.destination(of: path))
    }
}
