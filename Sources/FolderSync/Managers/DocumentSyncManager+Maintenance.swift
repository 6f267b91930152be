public import Foundation

/// Document maintenance from an app: forwards to ``DocumentMaintenance`` (see ``DocumentSyncManager/documentMaintenance()``).
///
/// These need neither a local store nor a finished document registration:
/// only the configured application and the document identifier.
extension DocumentSyncManager {
    /// Removes the document's remote files that nobody needs any more; in a dry run, only reports them.
    ///
    /// - Parameters:
    ///   - dryRun: compute and report the same plan, deleting and writing nothing.
    ///   - expireClientsAfter: marks clients deleted whose last sync is older than this; `nil` expires nobody.
    public func vacuum(dryRun: Bool = false, expireClientsAfter: TimeInterval? = nil) async throws -> VacuumReport {
        try await (try documentMaintenance()).vacuum(dryRun: dryRun, expireClientsAfter: expireClientsAfter)
    }

    /// The clients registered with this document, with when each last synced and what each holds back.
    public func registeredClients() async throws -> [RegisteredClient] {
        try await (try documentMaintenance()).registeredClients()
    }

    /// Deletes a client from this document; it gets ``FolderSyncError/Code/clientDeleted`` at its next sync or registration.
    @discardableResult
    public func deleteClient(_ identifier: String) async throws -> ClientDeletionReport {
        try await (try documentMaintenance()).deleteClient(identifier)
    }
}
