import Foundation
@_spi(ModelAdapter) import FolderSync

/// The restore steps of a lifecycle schedule (``ConvergenceSimulator/Configuration/restores``): a client's store put
/// back to an earlier copy of itself, as a restore from Time Machine, a phone backup or a VM snapshot does, with or
/// without its helper folder; and the shared folder put back to an earlier copy of itself.
///
/// Both are what users do to a working setup. A restore is only played when what it undoes was published, and
/// nothing since the copy changed who belongs to the document (for a store: no wipe, and its client not stopped nor
/// about to be; for the folder: no wipe, deletion, expiry, join or re-join): then no write is lost for good, and the
/// journal's usual check applies unchanged. Each restore must heal by itself: the restored store
/// continues after what its client published, and each author of change sets the restored folder lost publishes a
/// whole store that covers them.
extension SimulationRun {
    /// What decides whether a copy may be put back: nothing that changes who belongs to the document happened since.
    var restoreEpoch: [Int] {
        [summary.wipes, summary.clientDeletions, summary.expiredClients, summary.rejoins, summary.resets, clients.count]
    }

    /// Copies `client`'s store (and, half the time, its helper folder) aside, or puts an earlier copy back.
    func backUpOrRestore(_ client: SimulatedClient) async throws {
        guard let store = client.store as? any SnapshottingSimulatorStore, client.reset == nil, client.expectedResets.isEmpty else { return }
        let copy = configuration.directory.appendingPathComponent("backup-\(client.index)", isDirectory: true)
        let published = try client.store.adapter.loadSyncState().progress.publishedSequence
        if let backup = storeBackups[client.index], backup.wipes == summary.wipes, backup.published < published,
           try !client.store.adapter.hasUnpublishedChanges() {
            try await client.restore(from: copy, helperFolder: backup.withHelperFolder)
            storeBackups[client.index] = nil
            summary.storeRestores += 1
            log("\(client.identifier)'s store is restored from its backup\(backup.withHelperFolder ? " with" : " without") its helper folder")
        } else {
            let withHelperFolder = random.chance(50)
            try? FileManager.default.removeItem(at: copy)
            try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
            try store.copy(to: copy.appendingPathComponent("store"))
            if withHelperFolder { try FileManager.default.copyItem(at: client.helperFolder, to: copy.appendingPathComponent("helper")) }
            storeBackups[client.index] = .init(wipes: summary.wipes, published: published, withHelperFolder: withHelperFolder)
            log("\(client.identifier)'s store is backed up\(withHelperFolder ? " with" : " without") its helper folder")
        }
    }

    /// Copies the shared folder aside, or puts an earlier copy back (a folder on disk only).
    func backUpOrRestoreFolder() throws {
        guard case .fileManager = configuration.remote else { return }
        let root = configuration.directory.appendingPathComponent("remote", isDirectory: true)
        let copy = configuration.directory.appendingPathComponent("remote-backup", isDirectory: true)
        if let epoch = folderBackupEpoch, epoch == restoreEpoch {
            try FileManager.default.removeItem(at: root)
            try FileManager.default.copyItem(at: copy, to: root)
            folderBackupEpoch = nil
            summary.folderRestores += 1
            log("the shared folder is restored from its backup")
        } else {
            try? FileManager.default.removeItem(at: copy)
            try FileManager.default.copyItem(at: root, to: copy)
            folderBackupEpoch = restoreEpoch
            log("the shared folder is backed up")
        }
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
