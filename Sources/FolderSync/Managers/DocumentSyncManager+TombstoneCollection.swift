import Foundation
import Logging

/// Tombstone collection from an app: the folder's survey, then the store (see <doc:TombstoneCollection>).
extension DocumentSyncManager {
    /// Removes the tombstones of deletes that no device can meet again: every live device applied them, every whole
    /// store covers them, and this device has everything published before. Returns how many went.
    ///
    /// Runs after every automatic vacuum (``SyncPolicy/vacuumsAfterWholeStoreUpload``); call it yourself after your
    /// own vacuums. It reads the folder as a vacuum does (a listing and the small markers and manifests) and changes
    /// nothing there. A device that lags behind the folder, or a live device whose marker cannot be read, keeps
    /// every tombstone until that changes.
    /// - Throws: ``FolderSyncError/Code/notRegistered`` before registration; the folder's errors.
    @discardableResult
    public func collectTombstones() async throws -> Int {
        guard state == .ableToSync else { throw notRegistered(before: "collecting tombstones") }
        guard let store else {
            throw FolderSyncError(.invalidConfiguration, "document \(documentIdentifier) has no local store")
        }
        return try await withRemote("collecting tombstones failed") { try await collectTombstonesNow(store) }
    }

    /// ``collectTombstones()`` for a store the manager syncs, from inside a task that holds the remote already.
    func collectTombstonesNow(_ store: any ModelAdapter) async throws -> Int {
        let survey = try maintenance().vacuumOperation(options: VacuumOperation.Options(dryRun: true))
        let (inventory, _) = try await survey.survey()
        // Under the sync lock, like every writer of the store's bookkeeping: the ledger read is the one collected
        // against.
        let lock = try await FileLock.acquire(localLayout.syncLockFile)
        defer { lock.release() }
        let horizon = TombstoneCollection.horizon(
            inventory, ledger: try store.appliedChangeSets(), localClient: clientIdentifier,
            publishedSequence: try store.loadSyncState().progress.publishedSequence)
        let collected = try store.collectTombstones(horizon, localClient: clientIdentifier)
        if collected > 0 {
            applicationSyncManager.environment.logger.info(
                "Collected \(collected) tombstones of document \(documentIdentifier)")
        }
        return collected
    }
}
