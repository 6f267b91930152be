public import Foundation

/// Lists the documents of an application on the remote, with their information, clients, last activity and size.
///
/// TICoreDataSync offered this list so that a new device could pick a
/// document to download. Documents with a deletion marker are left out.
///
/// `@unchecked Sendable`: an `open` class cannot be checked `Sendable`; it holds only its context, a `let`.
open class ListOfPreviouslySynchronizedDocumentsOperation: ApplicationOperation, @unchecked Sendable {
    /// The remote, the application's layout, and the environment.
    public let context: ApplicationOperationContext
    /// The remote the operation works on; the default backend steps call it.
    public var fileSystem: any RemoteFileSystem { context.fileSystem }

    /// An operation ready to ``run()`` where `context` says.
    public init(context: ApplicationOperationContext) {
        self.context = context
    }

    /// The operation `standard` is, for a backend subclass to run with its own steps: the same context.
    public init(copying standard: ListOfPreviouslySynchronizedDocumentsOperation) {
        context = standard.context
    }

    /// Runs the listing; documents sorted by identifier.
    public func run() async throws -> [SynchronizedDocument] {
        let deleted = Set(
            try await fetchDeletedDocumentsListing().filter { $0.name.hasSuffix(".plist") }.map {
                String($0.name.dropLast(6))
            })
        var result: [SynchronizedDocument] = []
        for item in try await fetchDocumentsListing().sorted(by: { $0.name < $1.name })
        where item.kind == .directory && DocumentInventory.isIdentifierName(item.name) && !deleted.contains(item.name) {
            let document = item.name
            var entry = SynchronizedDocument(identifier: document)
            if let data = try await fetchDocumentInfo(document: document),
                let info = try? PropertyListFile.decode(
                    DocumentInfo.self, from: data, path: layout.documentInfoFile(document).description)
            {
                entry.documentDescription = info.documentDescription
                entry.userInfo = info.userInfo
                entry.integrityKey = info.integrityKey
            }
            let tree: [RemotePath: [RemoteItem]]
            do {
                tree = try await fetchDocumentTree(document: document)
            } catch FolderSyncError.Code.remoteItemNotFound {
                continue  // deleted while listing
            }
            let inventory = DocumentInventory.classify(tree: tree, layout: layout, document: document)
            entry.byteCount = tree.values.joined().reduce(0) { $0 + ($1.kind == .file ? ($1.size ?? 0) : 0) }
            let clients = inventory.registeredClients.subtracting(inventory.deletedClients).sorted()
            entry.clients = clients
            for client in clients where inventory.recentSyncMarkers[client] != nil {
                let path = layout.recentSyncFile(document, client: client)
                guard
                    let data = try await unlessDamaged({ try await fetchRecentSync(document: document, client: client) }
                    ),
                    let recent = try? PropertyListFile.decode(RecentSync.self, from: data, path: path.description)
                else { continue }
                entry.lastActivityDate = max(entry.lastActivityDate ?? recent.lastSyncDate, recent.lastSyncDate)
            }
            result.append(entry)
        }
        return result
    }

    // MARK: Backend steps

    /// Lists `Documents/`.
    open func fetchDocumentsListing() async throws -> [RemoteItem] {
        try await fileSystem.contentsOfDirectoryIfPresent(at: layout.documentsDirectory)
    }

    /// Lists `Information/DeletedDocuments/`.
    open func fetchDeletedDocumentsListing() async throws -> [RemoteItem] {
        try await fileSystem.contentsOfDirectoryIfPresent(at: layout.deletedDocumentsDirectory)
    }

    /// Reads `documentInfo.plist`, or `nil`.
    open func fetchDocumentInfo(document: String) async throws -> Data? {
        try await fileSystem.readIfPresent(
            layout.documentInfoFile(document), maximumSize: PropertyListFile.maximumByteCount)
    }

    /// Lists every folder of the document, by path (for its size and its clients).
    open func fetchDocumentTree(document: String) async throws -> [RemotePath: [RemoteItem]] {
        try await fileSystem.listTree(at: layout.documentDirectory(document))
    }

    /// Reads a client's recent sync in a document, or `nil`.
    open func fetchRecentSync(document: String, client: String) async throws -> Data? {
        try await fileSystem.readIfPresent(
            layout.recentSyncFile(document, client: client), maximumSize: PropertyListFile.maximumByteCount)
    }
}
