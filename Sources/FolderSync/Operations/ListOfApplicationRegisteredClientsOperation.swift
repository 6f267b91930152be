public import Foundation

/// Lists every client registered with an application and the documents each is registered with.
///
/// Clients come from `ClientDevices/` and from the documents' change-set
/// folders and recent syncs, so a client whose device folder is missing is
/// still listed. Reads only listings and `deviceInfo.plist` files.
///
/// `@unchecked Sendable`: an `open` class cannot be checked `Sendable`; it holds only its context, a `let`.
open class ListOfApplicationRegisteredClientsOperation: ApplicationOperation, @unchecked Sendable {
    /// The remote, the application's layout, and the environment.
    public let context: ApplicationOperationContext
    /// The remote the operation works on; the default backend steps call it.
    public var fileSystem: any RemoteFileSystem { context.fileSystem }

    /// An operation ready to ``run()`` where `context` says.
    public init(context: ApplicationOperationContext) {
        self.context = context
    }

    /// The operation `standard` is, for a backend subclass to run with its own steps: the same context.
    public init(copying standard: ListOfApplicationRegisteredClientsOperation) {
        context = standard.context
    }

    /// Runs the listing; clients sorted by identifier.
    public func run() async throws -> [ApplicationRegisteredClient] {
        var clients: [String: ApplicationRegisteredClient] = [:]
        for item in try await fetchClientDevicesListing()
        where item.kind == .directory && DocumentInventory.isIdentifierName(item.name) {
            clients[item.name] = ApplicationRegisteredClient(identifier: item.name)
        }
        for item in try await fetchDocumentsListing()
        where item.kind == .directory && DocumentInventory.isIdentifierName(item.name) {
            let document = item.name
            let inventory = DocumentInventory.classify(
                tree: try await fetchDocumentRegistrations(document: document),
                layout: layout, document: document)
            for client in inventory.registeredClients.union(inventory.deletedClients) {
                if inventory.deletedClients.contains(client) {
                    clients[client, default: .init(identifier: client)].deletedFromDocuments.append(document)
                } else {
                    clients[client, default: .init(identifier: client)].documents.append(document)
                }
            }
        }
        var result: [ApplicationRegisteredClient] = []
        for var client in clients.values.sorted(by: { $0.identifier < $1.identifier }) {
            client.documents.sort()
            client.deletedFromDocuments.sort()
            if let data = try await unlessDamaged({ try await fetchDeviceInfo(client: client.identifier) }),
                let device = try? PropertyListFile.decode(
                    DeviceInfo.self, from: data, path: layout.deviceInfoFile(client.identifier).description)
            {
                client.clientDescription = device.clientDescription
                client.userInfo = device.userInfo
                client.registrationDate = device.registrationDate
            }
            result.append(client)
        }
        return result
    }

    // MARK: Backend steps

    /// Lists `ClientDevices/`.
    open func fetchClientDevicesListing() async throws -> [RemoteItem] {
        try await fileSystem.contentsOfDirectoryIfPresent(at: layout.clientDevicesDirectory)
    }

    /// Lists `Documents/`.
    open func fetchDocumentsListing() async throws -> [RemoteItem] {
        try await fileSystem.contentsOfDirectoryIfPresent(at: layout.documentsDirectory)
    }

    /// Lists what tells which clients a document has: `SyncChanges/`, `RecentSyncs/` and `DeletedClients/`, by path.
    open func fetchDocumentRegistrations(document: String) async throws -> [RemotePath: [RemoteItem]] {
        var tree: [RemotePath: [RemoteItem]] = [:]
        for path in [
            layout.syncChangesDirectory(document), layout.recentSyncsDirectory(document),
            layout.deletedClientsDirectory(document),
        ] {
            tree[path] = try await fileSystem.contentsOfDirectoryIfPresent(at: path)
        }
        return tree
    }

    /// Reads `ClientDevices/<client>/deviceInfo.plist`, or `nil`.
    open func fetchDeviceInfo(client: String) async throws -> Data? {
        try await fileSystem.readIfPresent(
            layout.deviceInfoFile(client), maximumSize: PropertyListFile.maximumByteCount)
    }
}
