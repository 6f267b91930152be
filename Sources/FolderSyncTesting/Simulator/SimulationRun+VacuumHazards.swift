@_spi(ModelAdapter) import FolderSync
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The vacuum hazards of ``ConvergenceSimulator/Configuration/vacuumHazards``: whole stores damaged in place (same
/// file, size and times) right after a vacuum verified them, and a client deleted right after another client's join
/// met its damaged store and uploaded a store of its own covering little.
///
/// A vacuum must never remove a change set on the word of a store it did not read in that run; a deletion must
/// never remove the only store holding vacuumed sets. The damage lasts until the store's uploader replaces it or
/// the run's settling puts the bytes back (a disk repaired), so the final checks keep their guarantees.
extension SimulationRun {
    /// One hazard: damage in place after a vacuum, then a vacuum; or damage, a join, the bytes back, a deletion.
    func vacuumHazard(_ client: SimulatedClient) async throws {
        guard let document = client.document, client.reset == nil, case .fileManager = configuration.remote,
            try await someWholeStore() != nil
        else { return try await vacuum(client) }
        do {
            _ = try await document.vacuum()  // verifies and remembers the stores it keeps
        } catch {
            throw SimulationFailure.Detail("\(client.identifier) failed to vacuum before the damage: \(error)")
        }
        guard let (owner, store) = try await someWholeStore(), try damageInPlace(store) else { return }
        if !waiting.isEmpty, random.chance(50) {
            log("the whole store of \(owner) is damaged in place; the next client joins meanwhile")
            try await join()
            if let joiner = clients.last { try await sync(joiner) }
            try restoreDamagedStores()
            if let target = clients.first(where: { $0.identifier == owner }) {
                try await deleteClient(target)
                summary.deletionsAfterFailedJoin += 1
            }
            return
        }
        log("the whole store of \(owner) is damaged in place after \(client.identifier)'s vacuum verified it")
        for other in clients where other !== client && random.chance(50) { try await sync(other) }
        let report: VacuumReport
        do {
            report = try await document.vacuum()
        } catch {
            throw SimulationFailure.Detail("\(client.identifier) failed to vacuum after the damage: \(error)")
        }
        let reported = report.wholeStoreCheck.damaged.contains { $0.path == store }
        if !report.removedChangeSets.isEmpty, !reported, let damage = damagedStores[store],
            try await remote?.readIfPresent(store) == damage.damaged
        {
            // With the safeguards off (a replay of the defect), the removed area alone must keep the writes.
            guard configuration.disabledSafeguards.isEmpty else {
                summary.removalsOnDamagedStores += 1
                return log(
                    "\(client.identifier)'s vacuum removed \(report.removedChangeSets.count) change sets on the word of "
                        + "\(owner)'s damaged store (safeguards off): into the removed area")
            }
            throw SimulationFailure.Detail(
                "\(client.identifier)'s vacuum removed \(report.removedChangeSets.count) change sets "
                    + "on the word of \(owner)'s whole store, damaged in place after it verified it")
        }
        summary.changeSetsVacuumed += report.removedChangeSets.count
        if reported { summary.damagedStoresRefused += 1 }
        log(
            "\(client.identifier) vacuums: \(report.removedChangeSets.count) change sets removed, the damaged store "
                + (reported ? "read and refused" : "not relied on"))
    }

    /// Puts back the bytes of every whole store damaged by a hazard and not replaced since (its uploader may have
    /// uploaded a new one): a disk repaired, before the final rounds.
    func restoreDamagedStores() throws {
        for (path, damage) in damagedStores {
            let url = remoteURL(path)
            if (try? Data(contentsOf: url)) == damage.damaged { try overwriteInPlace(url, with: damage.intact) }
        }
        damagedStores = [:]
    }

    /// A published whole store on the remote, with its uploader.
    private func someWholeStore() async throws -> (String, RemotePath)? {
        guard let remote else { return nil }
        let layout = try RemoteLayout(applicationIdentifier: SimulatedClient.application)
        let folders = try await remote.contentsOfDirectoryIfPresent(
            at: layout.wholeStoreDirectory(SimulatedClient.document))
        var stores: [(String, RemotePath)] = []
        for folder in folders.sorted(by: { $0.name < $1.name })
        where folder.kind == .directory && !TemporaryName.isTemporary(folder.name) {
            let path = layout.wholeStoreFile(SimulatedClient.document, client: folder.name)
            if try await remote.item(at: path) != nil { stores.append((folder.name, path)) }
        }
        return random.pick(stores)
    }

    /// Flips a byte in the middle of a whole store where it is, keeping its inode, size and times; `false` when it is
    /// gone or empty.
    private func damageInPlace(_ path: RemotePath) throws -> Bool {
        let url = remoteURL(path)
        guard let intact = try? Data(contentsOf: url), !intact.isEmpty else { return false }
        var damaged = intact
        damaged[damaged.count / 2] ^= 0x5A
        try overwriteInPlace(url, with: damaged)
        damagedStores[path] = DamagedStore(intact: intact, damaged: damaged)
        summary.storesDamagedInPlace += 1
        return true
    }

    private func remoteURL(_ path: RemotePath) -> URL {
        path.components.reduce(configuration.directory.appendingPathComponent("remote", isDirectory: true)) {
            $0.appendingPathComponent($1)
        }
    }

    /// Writes `data` over the file where it is, then puts its access and modification times back.
    private func overwriteInPlace(_ url: URL, with data: Data) throws {
        var before = Glibc.stat()
        guard lstat(url.path, &before) == 0 else { return }
        let handle = try FileHandle(forWritingTo: url)
        try handle.write(contentsOf: data)
        try handle.close()
        var times = [before.st_atim, before.st_mtim]
        _ = utimensat(AT_FDCWD, url.path, &times, 0)
    }
}

/// A whole store a hazard damaged: its bytes before and after.
struct DamagedStore {
    var intact: Data
    var damaged: Data
}
