@_spi(ModelAdapter) @_spi(Tooling) import FolderSync
import Foundation

/// The steps of ``ConvergenceSimulator/Configuration/identityHazards``: a device copied to a second computer and used
/// beside the first, one client's change-set folder put back from an older copy, and a marker forged to acknowledge
/// another client's sets up to a hostile number.
///
/// Each must heal by itself with the invariants unchanged: the two installations of a copied client find each other
/// and one re-joins as a new client (publishing everything it holds); the author of the sets a folder lost covers them
/// with a whole store, found when it lists its folder or when a reader says it waits for them; and a forged number is
/// a hint its target checks against the folder. A client is copied at most once per run, and neither installation of
/// it is restored from a backup or has its folder put back (each hazard is tested on its own, not their products).
extension SimulationRun {
    /// One hazard, drawn among those that apply now.
    func identityHazardStep(_ client: SimulatedClient) async throws {
        switch random.int(0...2) {
        case 0: try await cloneClient(client)
        // The client whose folder was copied aside, when there is one: put back once it published more.
        case 1: try backUpOrRestoreClientFolder(clients.first { clientFolderBackups[$0.index] != nil } ?? client)
        default: try await forgeAcknowledgement()
        }
    }

    /// Copies `client`'s store (and, half the time, its helper folder) to a new installation of the same client, which
    /// starts and syncs beside it from then on.
    func cloneClient(_ client: SimulatedClient) async throws {
        guard sharedIdentity.isEmpty, client.reset == nil, client.expectedResets.isEmpty,
            let store = client.store as? any SnapshottingSimulatorStore
        else { return }
        let index = (clients + waiting).map(\.index).max()! + 1
        let copy = configuration.directory.appendingPathComponent("copy-\(index)", isDirectory: true)
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
        try store.copy(to: copy.appendingPathComponent("store"))
        let withHelperFolder = random.chance(50)
        if withHelperFolder {
            try FileManager.default.copyItem(at: client.helperFolder, to: copy.appendingPathComponent("helper"))
        }
        let skew: TimeInterval = random.pick(configuration.clockSkews)!
        let clone = try SimulatedClient(
            index: index, folder: configuration.directory.appendingPathComponent("client-\(index)", isDirectory: true),
            now: time.clock(skew: skew), remote: client.sharedRemote, resolvesConflicts: client.resolvesConflicts,
            configuration: configuration, identifier: client.identifier)
        clone.usesWholeStores = client.usesWholeStores
        clone.wholeStoreUploadThreshold = client.wholeStoreUploadThreshold
        clone.usesAttachments = client.usesAttachments
        clone.confirmsReplacedRemote = client.confirmsReplacedRemote
        clients.append(clone)
        sharedIdentity = [client.index, clone.index]
        summary.clones += 1
        log(
            "\(client.name)'s store is copied\(withHelperFolder ? " with" : " without") its helper folder to a second computer "
                + "(installation \(index), clock skewed by \(Int(skew)) s)")
        do {
            try await clone.startAsCopy(
                store: copy.appendingPathComponent("store"),
                helperFolder: withHelperFolder ? copy.appendingPathComponent("helper") : nil)
        } catch {
            throw SimulationFailure.Detail("the copy of \(client.name) failed to start: \(error)")
        }
    }

    /// Copies `client`'s change-set folder aside, or puts an earlier copy back (a file-manager remote only), when what
    /// it takes away is still in its author's store and the author can cover it: alive, not restored below it, and in
    /// the epoch of the copy (no wipe since). Until the author covers it with a whole store, it is neither deleted nor
    /// expired (``SimulationRun/awaitsCover``): a deleted client re-joins without publishing what it had published.
    func backUpOrRestoreClientFolder(_ client: SimulatedClient) throws {
        guard case .fileManager = configuration.remote, client.reset == nil, client.expectedResets.isEmpty,
            !sharedIdentity.contains(client.index)
        else { return }
        let layout = try RemoteLayout(applicationIdentifier: SimulatedClient.application)
        let folder = configuration.directory.appendingPathComponent("remote", isDirectory: true)
            .appendingPathComponent(
                layout.syncChangesDirectory(SimulatedClient.document, client: client.identifier).description)
        let copy = configuration.directory.appendingPathComponent(
            "client-folder-backup-\(client.index)", isDirectory: true)
        let published = try client.store.adapter.loadSyncState().progress.publishedSequence
        if let backup = clientFolderBackups[client.index], backup.wipes == summary.wipes,
            backup.client == client.identifier,
            backup.published < published, try restoreHazards()[client.index] == nil,
            folderLostAbove[client.index] == nil
        {
            try? FileManager.default.removeItem(at: folder)
            try FileManager.default.copyItem(at: copy, to: folder)
            clientFolderBackups[client.index] = nil
            folderLostAbove[client.index] = backup.published
            summary.clientFolderRestores += 1
            // The user's doing, not a removal: the sets it took away are not the removal check's to find.
            let clientFolder = layout.syncChangesDirectory(SimulatedClient.document, client: client.identifier)
            keptChangeSets = keptChangeSets.filter { $0.value.removal != nil || $0.value.path.parent != clientFolder }
            log(
                "\(client.name)'s change-set folder is put back from its copy: sets \(backup.published + 1)–\(published) are gone"
            )
        } else if FileManager.default.fileExists(atPath: folder.path) {
            try? FileManager.default.removeItem(at: copy)
            try FileManager.default.copyItem(at: folder, to: copy)
            clientFolderBackups[client.index] = .init(
                wipes: summary.wipes, client: client.identifier, published: published)
            log("\(client.name)'s change-set folder is copied aside")
        }
    }

    /// Rewrites one client's marker (checksum and all) to acknowledge another client's sets up to a hostile number: one
    /// no file name holds, the highest one does, or merely one far ahead.
    func forgeAcknowledgement() async throws {
        guard let remote, let writer = random.pick(clients), let target = random.pick(clients.filter { $0 !== writer })
        else { return }
        let layout = try RemoteLayout(applicationIdentifier: SimulatedClient.application)
        let path = layout.recentSyncFile(SimulatedClient.document, client: writer.identifier)
        guard let data = try await remote.readIfPresent(path, maximumSize: PropertyListFile.maximumByteCount),
            var recent = try? PropertyListFile.decode(RecentSync.self, from: data, path: path.description)
        else { return }
        let claimed = random.pick([Int64.max, RemoteLayout.maximumSequence, 1_000_000])!
        recent.acknowledgement[target.identifier] = claimed
        try await remote.write(try PropertyListFile.encode(recent), to: path)
        summary.forgedMarkers += 1
        log("\(writer.name)'s marker is forged to acknowledge \(target.name)'s sets up to \(claimed)")
    }
}

extension SimulationRun {
    /// Whether `client`'s sets are gone from the folder until it covers them with a whole store (its change-set folder,
    /// or the whole folder, put back): it is then not deleted nor expired by the identity hazards' runs.
    func awaitsCover(_ client: SimulatedClient) -> Bool {
        configuration.identityHazards && folderLostAbove[client.index] != nil
    }
}

/// A copy of a client's change-set folder taken by ``SimulationRun/backUpOrRestoreClientFolder(_:)``.
struct ClientFolderBackup {
    /// The wipes before the copy: a copy of a wiped epoch is never put back.
    var wipes: Int
    /// The identifier whose folder was copied (a re-join as a new client makes the copy another client's).
    var client: String
    /// What the client had published when its folder was copied.
    var published: Int64
}
