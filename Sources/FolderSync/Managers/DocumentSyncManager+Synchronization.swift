public import Foundation

extension DocumentSyncManager {
    /// Synchronizes the document: publishes local changes and applies other clients' changes.
    ///
    /// Calls made while a sync runs are coalesced into one follow-up sync.
    /// Cancelling the calling task stops between change sets and leaves
    /// everything consistent: staged sets stay durable and are published by
    /// the next sync.
    /// - Throws: ``FolderSyncError/Code/notRegistered`` before registration,
    ///   ``FolderSyncError/Code/integrityKeyMismatch`` when the remote was reset,
    ///   ``FolderSyncError/Code/corruptFile`` naming a damaged file (the local store is untouched), and others.
    @discardableResult
    public func synchronize() async throws -> SyncReport {
        try await coalescer.request { [self] in try await runSynchronization() }
    }

    /// A stream of progress events of every sync from now on. Finish iterating to unsubscribe.
    public func events() -> AsyncStream<SyncEvent> {
        let (stream, continuation) = AsyncStream<SyncEvent>.makeStream(bufferingPolicy: .bufferingNewest(256))
        let id = UUID()
        eventContinuations.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in self?.eventContinuations.withLock { $0[id] = nil } }
        return stream
    }

    func publish(_ event: SyncEvent) {
        for continuation in eventContinuations.current.values { continuation.yield(event) }
    }

    private func runSynchronization() async throws -> SyncReport {
        guard state == .ableToSync, let integrityKey else {
            throw FolderSyncError(.notRegistered, "register document \(documentIdentifier) before synchronizing it")
        }
        guard let store else {
            throw FolderSyncError(.invalidConfiguration, "document \(documentIdentifier) has no local store to synchronize")
        }
        delegate?.documentSyncManagerDidBeginSynchronizing(self)
        do {
            let report = try await synchronizationOperation(integrityKey: integrityKey, store: store).run()
            if !report.warnings.isEmpty { delegate?.documentSyncManager(self, didEncounterWarnings: report.warnings) }
            delegate?.documentSyncManager(self, didFinishSynchronizingWith: report)
            return report
        } catch {
            let error = FolderSyncError.wrapping(error, "synchronization failed")
            delegate?.documentSyncManager(self, didFailToSynchronizeWithError: error)
            throw error
        }
    }

    func resolve(_ conflict: SyncConflict) async -> ConflictResolution? {
        if let resolver = conflictResolver { return await resolver(conflict) }
        return await delegate?.documentSyncManager(self, resolve: conflict)
    }
}
