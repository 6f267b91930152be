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
    /// - After ``FolderSyncError/Code/documentDeleted`` when the document is back with the integrity key this client
    ///   registered with (an operator restored it from the removed area: `foldersync removed restore --document`):
    ///   nothing was lost or replaced, so it resumes where it stopped, with its unpublished changes, and syncs.
    /// - After ``FolderSyncError/Code/clientIdentityShared`` (another installation syncs as this client): takes a new
    ///   client identifier, which the app keeps (``ApplicationSyncManager/clientIdentifierChangeHandler``), then
    ///   re-joins under it as after a wipe: every local row is recorded as a new change of the new identity and
    ///   published, so that what this device wrote under the shared identity reaches every device even where a set of
    ///   it was missed. The change sets both installations published under the shared identity stay; every device
    ///   applies them.
    ///
    /// The error that reported the reset carries the path of a backup made before anything changed.
    @discardableResult
    public func rejoin() async throws -> SyncReport {
        guard let store = store as? any SnapshottingModelAdapter else {
            throw FolderSyncError(
                .invalidConfiguration, "the local store of document \(documentIdentifier) cannot re-join")
        }
        guard let reset = mutable.current.lastReset?.error else {
            throw FolderSyncError(.invalidConfiguration, "document \(documentIdentifier) has no reset to re-join from")
        }
        do {
            switch reset.code {
            case .documentDeleted where try await isRestoredDocument():
                try await register(creatingMissingDocument: false, rejoining: true)
            case .clientDeleted:
                try await applicationSyncManager.remote.remove(
                    layout.deletedClientFile(documentIdentifier, client: clientIdentifier))
                mutable.withLock { $0.rejoinedAfterDeletion = true }
                try await register(creatingMissingDocument: false, rejoining: true)
                do {
                    _ = try await wholeStoreDownloadOperation(store: store, options: wholeStoreDownloadOptions()).run()
                } catch let error as FolderSyncError where error.isUnusableWholeStore {
                    // No store is usable (damaged, of a newer format, or too large): the sync below brings the change
                    // sets, from the removed area where no store covers them, and this client owes a store.
                    try await oweWholeStore()
                }
            case .clientIdentityShared:
                // The registration names the shared identity: it goes before the app keeps the new one, so that a
                // launch in between does not find a helper folder of another client.
                try? FileManager.default.removeItem(at: localLayout.registrationFile)
                let shared = clientIdentifier
                try await takeNewClientIdentity()
                try startOver(store, afterWipe: false)
                try store.updateRemoteKnowledge { $0.formerIdentity = shared }
                try await register(creatingMissingDocument: false, rejoining: true)
            default:
                try? FileManager.default.removeItem(at: localLayout.registrationFile)
                try startOver(store, afterWipe: true)
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

    /// Whether the deleted document is back as this client knew it: no deletion marker, and the integrity key this
    /// client registered with (a document created again since has another).
    private func isRestoredDocument() async throws -> Bool {
        guard let key = mutable.current.registration?.integrityKey else { return false }
        let remote = applicationSyncManager.remote
        guard try await !remote.exists(layout.deletedDocumentFile(documentIdentifier)) else { return false }
        return try await remote.integrityKeys(of: documentIdentifier, layout: layout) == [key]
    }

    /// Forgets what this client knew of the remote (the state's rule: a cache is forgotten early, never late), then
    /// records every local row as a new change and starts the progress over
    /// (``SnapshottingModelAdapter/resetForRejoin()``).
    ///
    /// Only the clients it awaits are kept, and `afterWipe` (the folder or the document was wiped: a new epoch) adds
    /// every client it knew of the old one: their stores may hold rows this epoch deletes, which they bring back when
    /// they re-join, so no tombstone is collected until they registered again (``RecentSync/awaiting``).
    private func startOver(_ store: any SnapshottingModelAdapter, afterWipe: Bool) throws {
        try? FileManager.default.removeItem(at: localLayout.stagedSyncChangesDirectory)
        let old = try store.loadSyncState().remote
        var awaited = Set(old.awaitedClients)
        if afterWipe {
            awaited.formUnion(old.knownRecentSyncs.keys)
            awaited.formUnion(old.acknowledgedByOthers.keys)
        }
        awaited.remove(clientIdentifier)
        var fresh = LocalSyncState.RemoteKnowledge()
        fresh.awaitedClients = awaited.sorted()
        try store.saveRemoteKnowledge(fresh)
        try store.resetForRejoin()
    }

    /// Makes a new client identifier, has the app keep it, and takes it (with a new installation identifier).
    ///
    /// The new identifier extends the shared one (`<shared>-<random>`), so that it sorts after it: a write this device
    /// made under the shared identity, published again under the new one with the same time, wins the tie between the
    /// two stamps (the client identifier breaks it) on every device. So it reaches the device that keeps the shared
    /// identity too, which never applies change sets of its own identity. An identifier too long to extend is replaced
    /// by a random one.
    private func takeNewClientIdentity() async throws {
        guard let keep = applicationSyncManager.clientIdentifierChangeHandler else {
            throw FolderSyncError(
                .invalidConfiguration,
                "another device syncs as this client: set the application sync manager's "
                    + "clientIdentifierChangeHandler, which keeps the new client identifier, to re-join as a new client"
            )
        }
        let random = applicationSyncManager.environment.makeIdentifier()
        let extended = clientIdentifier + "-" + random
        let identifier = extended.utf8.count <= Identifier.maximumByteCount ? extended : random
        try await keep(identifier)
        try applicationSyncManager.adopt(clientIdentifier: identifier)
        try? FileManager.default.removeItem(at: localLayout.installationFile)
        mutable.withLock { state in
            state.clientIdentifier = identifier
            state.installation = nil
            state.ownNumbersKnownStore = nil
        }
    }
}
