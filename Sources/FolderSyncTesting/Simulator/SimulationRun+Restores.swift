@_spi(ModelAdapter) import FolderSync
import Foundation

/// The restore steps of a lifecycle schedule (``ConvergenceSimulator/Configuration/restores``): a client's store put
/// back to an earlier copy of itself, as a restore from Time Machine, a phone backup or a VM snapshot does, with or
/// without its helper folder; and the shared folder put back to an earlier copy of itself.
///
/// Both are what users do to a working setup. A restore is only played when what it undoes is kept where a restore
/// heals from, and nothing since the copy changed who belongs to the document (for a store: no wipe, and its client
/// not stopped nor about to be; for the folder: no wipe, deletion, expiry, join or re-join): then no write is lost for
/// good, and the journal's usual check applies unchanged. Each restore must heal by itself: the restored store
/// continues after what its client published and applies its own sets back from the folder, and each author of
/// change sets the restored folder lost publishes a whole store that covers them. So a store is put back below what
/// its client published only while the folder holds those sets (no folder restore took them since, unless the client
/// uploaded a whole store after it), and the folder only while every author holds the sets it would take away (no
/// store of theirs put back below them and not caught up): with both undone, a write would be nowhere, or only in
/// another client's replica, which no restore heals from.
extension SimulationRun {
    /// What decides whether a copy may be put back: nothing that changes who belongs to the document happened since.
    var restoreEpoch: [Int] {
        [
            summary.wipes, summary.clientDeletions, summary.expiredClients, summary.rejoins, summary.resets,
            clients.count,
        ]
    }

    /// Copies `client`'s store (and, half the time, its helper folder) aside, or puts an earlier copy back.
    func backUpOrRestore(_ client: SimulatedClient) async throws {
        guard let store = client.store as? any SnapshottingSimulatorStore, client.reset == nil,
            client.expectedResets.isEmpty,
            !sharedIdentity.contains(client.index)
        else { return }
        let copy = configuration.directory.appendingPathComponent("backup-\(client.index)", isDirectory: true)
        let published = try client.store.adapter.loadSyncState().progress.publishedSequence
        if let backup = storeBackups[client.index], backup.wipes == summary.wipes, backup.published < published,
            try !client.store.adapter.hasUnpublishedChanges(), folderLostAbove[client.index] == nil
        {
            try await client.restore(from: copy, helperFolder: backup.withHelperFolder)
            storeBackups[client.index] = nil
            storeRestoredBelow[client.index] = max(storeRestoredBelow[client.index] ?? 0, published)
            summary.storeRestores += 1
            log(
                "\(client.name)'s store is restored from its backup\(backup.withHelperFolder ? " with" : " without") its helper folder"
            )
        } else {
            let withHelperFolder = random.chance(50)
            try? FileManager.default.removeItem(at: copy)
            try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
            try store.copy(to: copy.appendingPathComponent("store"))
            if withHelperFolder {
                try FileManager.default.copyItem(at: client.helperFolder, to: copy.appendingPathComponent("helper"))
            }
            storeBackups[client.index] = .init(
                wipes: summary.wipes, published: published, withHelperFolder: withHelperFolder)
            log("\(client.name)'s store is backed up\(withHelperFolder ? " with" : " without") its helper folder")
        }
    }

    /// Copies the shared folder aside, or puts an earlier copy back (a folder on disk only).
    func backUpOrRestoreFolder() throws {
        guard case .fileManager = configuration.remote else { return }
        let root = configuration.directory.appendingPathComponent("remote", isDirectory: true)
        let copy = configuration.directory.appendingPathComponent("remote-backup", isDirectory: true)
        let published = try clients.map { ($0.index, try $0.store.adapter.loadSyncState().progress.publishedSequence) }
        if let epoch = folderBackupEpoch, epoch == restoreEpoch,
            try !restoreHazards().contains(where: { index, reached in
                (folderBackupPublished[index] ?? 0) < reached
            })
        {
            try FileManager.default.removeItem(at: root)
            try FileManager.default.copyItem(at: copy, to: root)
            folderBackupEpoch = nil
            for (index, sequence) in published where sequence > folderBackupPublished[index] ?? 0 {
                folderLostAbove[index] = min(folderLostAbove[index] ?? sequence, folderBackupPublished[index] ?? 0)
            }
            summary.folderRestores += 1
            log("the shared folder is restored from its backup")
        } else {
            try? FileManager.default.removeItem(at: copy)
            try FileManager.default.copyItem(at: root, to: copy)
            folderBackupEpoch = restoreEpoch
            folderBackupPublished = Dictionary(uniqueKeysWithValues: published)
            log("the shared folder is backed up")
        }
    }

    /// Clients whose store was put back and does not hold its own published sets yet, with the sequence they had
    /// reached: a store that continued past it and applied its own sets back holds them again, and is forgotten here.
    func restoreHazards() throws -> [Int: Int64] {
        for (index, reached) in storeRestoredBelow {
            guard let client = clients.first(where: { $0.index == index }) else { continue }
            let progress = try client.store.adapter.loadSyncState().progress
            if progress.publishedSequence >= reached, progress.ownChangeSetsToReapplyAfter == nil {
                storeRestoredBelow[index] = nil
            }
        }
        return storeRestoredBelow
    }
}

/// A copy of a client's store taken by ``SimulationRun/backUpOrRestore(_:)``.
struct StoreBackup {
    /// The wipes before the copy: a copy of a wiped epoch is never put back.
    var wipes: Int
    /// What its client had published when copied: it is put back only once its client published more.
    var published: Int64
    var withHelperFolder: Bool
}
