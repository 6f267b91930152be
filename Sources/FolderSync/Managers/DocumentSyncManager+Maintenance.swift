public import Foundation

/// Document maintenance from an app: forwards to ``DocumentMaintenance`` (see
/// ``DocumentSyncManager/documentMaintenance(options:)``).
///
/// These need neither a local store nor a finished document registration:
/// only the configured application and the document identifier.
extension DocumentSyncManager {
    /// Removes the document's remote files that nobody needs any more; in a dry run, only reports them.
    ///
    /// - Parameters:
    /// - dryRun: compute and report the same plan, deleting and writing nothing. - expireClientsAfter: marks clients
    ///     deleted that the shared folder saw write nothing for longer than this, by its
    ///     own clock; `nil` expires nobody.
    ///
    /// When the vacuum finds this client's own whole store damaged, or finds only damaged ones, this client owes a
    /// new one, uploaded at its next sync that can: the tree does not stay without a usable store.
    public func vacuum(dryRun: Bool = false, expireClientsAfter: TimeInterval? = nil) async throws -> VacuumReport {
        let report = try await (try maintenance()).vacuum(
            dryRun: dryRun, expireClientsAfter: expireClientsAfter,
            keepRemovedFor: policy.keepsRemovedFilesFor)
        let check = report.wholeStoreCheck
        let own = layout.wholeStoreFile(documentIdentifier, client: clientIdentifier)
        if !dryRun,
            check.damaged.contains(where: { $0.path == own })
                || (!check.damaged.isEmpty && check.verified + check.verifiedEarlier == 0)
        {
            try await oweWholeStore()
        }
        return report
    }

    /// The clients registered with this document, with when each last synced and what each holds back.
    public func registeredClients() async throws -> [RegisteredClient] {
        try await (try documentMaintenance()).registeredClients()
    }

    /// Deletes a client from this document; it gets ``FolderSyncError/Code/clientDeleted`` at its next sync or
    /// registration.
    @discardableResult
    public func deleteClient(_ identifier: String) async throws -> ClientDeletionReport {
        try await (try documentMaintenance()).deleteClient(identifier)
    }
}
