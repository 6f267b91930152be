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
        guard let reset = mutable.current.lastReset?.error else {
            throw FolderSyncError(.invalidConfiguration, "document \(documentIdentifier) has no reset to re-join from")
        }
        do {
            switch reset.code {
            case .clientDeleted:
                try await applicationSyncManager.remote.remove(layout.deletedClientFile(documentIdentifier, client: clientIdentifier))
                mutable.withLock { $0.rejoinedAfterDeletion = true }
                try await register(creatingMissingDocument: false, rejoining: true)
                do {
                    _ = try await wholeStoreDownloadOperation(store: store).run()
                } catch let error as FolderSyncError where error.isUnusableWholeStore {
                    // No store is usable (damaged, found by the vacuum hazards of the simulator): the sync below brings
                    // the change sets, from the removed area where no store covers them, and this client owes a store.
                    try await oweWholeStore()
                }
            default:
                try? FileManager.default.removeItem(at: localLayout.registrationFile)
                try? FileManager.default.removeItem(at: localLayout.stagedSyncChangesDirectory)
                // What this client knew of the replaced remote goes first (the state's rule: a cache is forgotten
                // early, never late), then the store starts over.
                try store.saveRemoteKnowledge(LocalSyncState.RemoteKnowledge())
                try store.resetForRejoin()
                try await register(creatingMissingDocument: true, rejoining: true)
            }
        } catch let error as FolderSyncError where error.isReset {
            // The remote was reset again meanwhile (the application's folder wiped after this client's deletion):
            // a new reset, with its own backup, to re-join from next.
            forgetReset()
            throw stopForReset(error)
        }
        forgetReset()
        return try await synchronize()
    }
}
