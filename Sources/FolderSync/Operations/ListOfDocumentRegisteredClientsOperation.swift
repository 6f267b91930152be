public import Foundation

/// Lists the clients registered with one document: identity, last sync, acknowledgement, and what each holds back.
///
/// What a client holds back comes from a dry-run vacuum (``makeVacuumOperation()``),
/// so the listing and the vacuum never disagree about the rule. Deleted
/// clients are listed too, flagged.
///
/// `@unchecked Sendable`: an `open` class cannot be checked `Sendable`; it holds only its context, a `let`.
open class ListOfDocumentRegisteredClientsOperation: DocumentOperation, @unchecked Sendable {
    /// The remote and the document.
    public let context: DocumentOperationContext

    /// An operation ready to ``run()`` where `context` says.
    public init(context: DocumentOperationContext) {
        self.context = context
    }

    /// The operation `standard` is, for a backend subclass to run with its own steps: the same context.
    public init(copying standard: ListOfDocumentRegisteredClientsOperation) {
        context = standard.context
    }

    /// Runs the listing; clients sorted by identifier.
    public func run() async throws -> [RegisteredClient] {
        let (inventory, plan) = try await makeVacuumOperation().survey()
        let clients = inventory.registeredClients.union(inventory.deletedClients)
        var result: [RegisteredClient] = []
        for client in clients.sorted() {
            var entry = RegisteredClient(identifier: client, isDeleted: inventory.deletedClients.contains(client))
            if let data = try await unlessDamaged({ try await fetchDeviceInfo(client: client) }),
                let device = try? PropertyListFile.decode(
                    DeviceInfo.self, from: data, path: layout.deviceInfoFile(client).description)
            {
                entry.clientDescription = device.clientDescription
                entry.userInfo = device.userInfo
            }
            if let recent = inventory.recentSyncs[client] {
                entry.lastSyncDate = recent.lastSyncDate
                entry.acknowledgement = recent.acknowledgement
                entry.publishedSequence = recent.publishedSequence
            }
            entry.lastSeenDate = inventory.lastWritten[client]
            entry.wholeStoreDate = inventory.wholeStores[client]?.creationDate
            entry.heldBack = plan.report.heldBack[client] ?? .init()
            result.append(entry)
        }
        return result
    }

    // MARK: Backend steps

    /// The dry-run vacuum whose plan tells what each client holds back. Override to return a backend subclass.
    open func makeVacuumOperation() -> VacuumOperation {
        VacuumOperation(context: context, options: VacuumOperation.Options(dryRun: true))
    }

    /// Reads `ClientDevices/<client>/deviceInfo.plist`, or `nil`.
    open func fetchDeviceInfo(client: String) async throws -> Data? {
        try await fileSystem.readIfPresent(
            layout.deviceInfoFile(client), maximumSize: PropertyListFile.maximumByteCount)
    }
}
