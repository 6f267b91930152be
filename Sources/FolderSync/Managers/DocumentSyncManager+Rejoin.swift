import Foundation

extension DocumentSyncManager {
    /// Re-joins the document after a sync stopped on a reset, without losing local data.
    ///
    /// - After ``FolderSyncError/Code/clientDeleted``: removes the deletion marker, registers again, installs
    ///   the best whole store (this client may have missed vacuumed change sets) with the unpublished local
    ///   changes re-applied on top, and syncs.
    /// - After ``FolderSyncError/Code/integrityKeyMismatch`` or ``FolderSyncError/Code/documentDeleted`` (the
    ///   remote was wiped, replaced or deleted): forgets the old epoch, records **every** local row as a new
    ///   change, registers with the remote document (creating it if it is missing), and syncs; the first sync
    ///   starts from a whole store if another client re-joined first. Every client's data ends in one state.
    ///
    /// The error that reported the reset carries the path of a backup made before anything changed.
    @discardableResult
    public func rejoin() async throws -> SyncReport {
        guard let store = store as? any SnapshottingModelAdapter else {
            throw FolderSyncError(.invalidConfiguration, "the local store of document \(documentIdentifier) cannot re-join")
        }
        switch lastReset.current?.code {
        case .clientDeleted?:
            try await applicationSyncManager.remote.remove(layout.deletedClientFile(documentIdentifier, client: clientIdentifier))
            try await register(creatingMissingDocument: false)
            _ = try await wholeStoreDownloadOperation(store: store).run()
        case .integrityKeyMismatch?, .documentDeleted?:
            try? FileManager.default.removeItem(at: localLayout.registrationFile)
            try? FileManager.default.removeItem(at: localLayout.stagedSyncChangesDirectory)
            try store.resetForRejoin()
            try await register(creatingMissingDocument: true)
        default:
            throw FolderSyncError(.invalidConfiguration, "document \(documentIdentifier) has no reset to re-join from")
        }
        forgetReset()
        return try await synchronize()
    }
}
