import Foundation
import Logging

/// Leaving sync: the device stops syncing the document, and the document can become a plain SQLite file again
/// (see <doc:StoppingSyncAndCheckingADevice>).
extension DocumentSyncManager {
    /// Stops syncing this document on this device.
    ///
    /// In order: local changes no other device has received are published by a last sync (unless `publishingFirst` is
    /// false: they then stay in the rows, on this device only); the device is deleted from the document's clients in
    /// the shared folder, so that it holds back no vacuum (its published change sets stay until every device has them);
    /// then, with `removingTracking`, the store's change capture and bookkeeping go in one transaction and the document
    /// is a plain SQLite file (``GRDBStore/stopTracking(helperDirectory:keepingUnpublishedChanges:)``); last the helper
    /// folder goes, but for reset backups and attachment files rows reference. The manager is then not registered, and
    /// ``store`` is `nil`; the app keeps its ``GRDBStore``'s connection to the file.
    ///
    /// Attaching the document again later (a new manager, the same helper folder path or another) is a first
    /// registration: it lifts the deletion this device made of itself, and every row the file holds then is a new
    /// local change of the first sync. With `removingTracking` false the store keeps its bookkeeping, and what the
    /// app writes meanwhile is published when the document is attached again.
    ///
    /// - Throws: ``FolderSyncError/Code/notRegistered`` (or the reset the manager stopped on) before registration;
    ///   the last sync's errors, having changed nothing else; ``FolderSyncError/Code/unpublishedChanges`` when the
    ///   app keeps writing changes the last sync could not publish; ``FolderSyncError/Code/invalidConfiguration``
    ///   to remove the tracking of a store that is not a ``GRDBStore``.
    @discardableResult
    public func stopSyncing(removingTracking: Bool = true, publishingFirst: Bool = true) async throws -> DetachReport {
        guard state == .ableToSync else { throw notRegistered(before: "stopping sync") }
        if removingTracking, let store, !store.canStopTracking {
            throw FolderSyncError(.invalidConfiguration, "only a GRDBStore's change tracking can be removed")
        }
        stopWatchingRemote()
        var report = DetachReport()
        report.unpublishedChanges = try store?.unpublishedChanges() ?? UnpublishedChanges()
        if publishingFirst, hasUnpublishedChanges {
            // A sync whose resolutions keep local values publishes them in the same sync; an app still writing may
            // leave more, which a second sync publishes.
            for _ in 1...2 where hasUnpublishedChanges { try await synchronize() }
            if hasUnpublishedChanges {
                throw FolderSyncError(
                    .unpublishedChanges,
                    "local changes are still being written; stop writing, then stop syncing",
                    path: localLayout.helperDirectory.path)
            }
            report.publishedFirst = true
        }
        let lock = try await FileLock.acquire(localLayout.syncLockFile)
        defer { lock.release() }
        try await leaveSharedFolder()
        report.leftSharedFolder = true
        if removingTracking, let store {
            let local = try store.stopTracking(
                helperDirectory: localLayout.helperDirectory, keepingUnpublishedChanges: true)
            report.untrackedTables = local.untrackedTables
            report.keptHelperItems = local.keptHelperItems
        } else {
            // What this device knew of the folder is stale once it left; a cache is forgotten early, never late.
            try store?.saveRemoteKnowledge(LocalSyncState.RemoteKnowledge())
            // The store's bookkeeping stays, and with it what the helper folder holds for it (staged change sets,
            // attachments, backups); only the registration and what describes it go.
            let layout = localLayout
            let registration = Set(
                [
                    layout.registrationFile, layout.resetFile, layout.statusFile, layout.verifiedWholeStoresFile,
                    layout.downloadsDirectory,
                ].map(\.lastPathComponent))
            let names = (try? FileManager.default.contentsOfDirectory(atPath: layout.helperDirectory.path)) ?? []
            let kept = names.filter { !registration.contains($0) }.map {
                layout.helperDirectory.appendingPathComponent($0)
            }
            report.keptHelperItems = try GRDBStore.removeHelperFolder(layout, keeping: kept)
        }
        mutable.withLock { state in
            state.store = nil
            state.registration = nil
            state.checksRemote = false
        }
        gate.finish(
            .failure(FolderSyncError(.notRegistered, "document \(documentIdentifier) stopped syncing on this device")))
        return report
    }

    /// Deletes this device from the document's clients, as an operator's deletion would (its marker names this
    /// device as the one that deleted it); nothing when it never made a folder there.
    private func leaveSharedFolder() async throws {
        try await withRemote("leaving the shared folder failed") {
            do {
                try await (try documentMaintenance()).deleteClient(clientIdentifier)
            } catch FolderSyncError.Code.remoteItemNotFound {
                // Registered with the application but never with this document's folders: nothing to leave.
            }
        }
    }

    /// When a first registration (no registration remembered in the helper folder) found this client deleted: a
    /// deletion marker this device wrote of itself (``stopSyncing(removingTracking:publishingFirst:)``) is lifted, so
    /// that attaching the document again registers it as any new device; returns whether it was. A deletion by anyone
    /// else (an operator, an expiry) stays, and the registration stops with ``FolderSyncError/Code/clientDeleted``.
    func liftOwnDeparture() async throws -> Bool {
        let remote = applicationSyncManager.remote
        let marker = layout.deletedClientFile(documentIdentifier, client: clientIdentifier)
        guard let data = try? await remote.readIfPresent(marker, maximumSize: PropertyListFile.maximumByteCount),
            let info = try? PropertyListFile.decode(DeletedClientInfo.self, from: data, path: marker.description),
            info.clientIdentifier == clientIdentifier, info.deletedBy == clientIdentifier
        else { return false }
        try await remote.remove(marker)
        applicationSyncManager.environment.logger.info(
            "Attaching document \(documentIdentifier) again: lifted this device's own departure")
        return true
    }
}
