@_spi(ModelAdapter) import FolderSync
import Foundation

/// The document lifecycle steps of a schedule: whole-store uploads, vacuums, client deletions and remote wipes.
///
/// Each step goes through the public API an app or an operator would use, and
/// tells the clients it affects which reset their next sync must stop on.
extension SimulationRun {
    var layout: RemoteLayout {
        get throws { try RemoteLayout(applicationIdentifier: SimulatedClient.application) }
    }

    /// `uploadWholeStore()` (a snapshot when every local change is published) or `downloadWholeStore()` by the client.
    func transferWholeStore(_ client: SimulatedClient) async throws {
        guard let document = client.document else { return }
        let upload = random.chance(70)
        let before = try localState(client)
        do {
            if upload {
                if let manifest = try await document.uploadWholeStore() {
                    summary.wholeStoreUploads += 1
                    folderLostAbove[client.index] = nil
                    log("\(client.name) uploads a whole store covering \(manifest.coveredCount) change sets")
                } else {
                    log(
                        "\(client.name) uploads no whole store (changes unpublished, or its store on the remote covers more)"
                    )
                }
            } else if let manifest = try await document.downloadWholeStore() {
                summary.wholeStoreInstalls += 1
                log(
                    "\(client.name) installs the whole store of \(manifest.clientIdentifier) covering \(manifest.coveredCount) change sets"
                )
            } else {
                log("\(client.name) finds no whole store to download")
            }
            // A store must not cross from a wiped epoch to the new one, either way (its manifest names the old epoch's
            // sets).
            if !client.expectedResets.isDisjoint(with: Self.wipeCodes)
                || client.reset.map(Self.wipeCodes.contains) == true
            {
                throw SimulationFailure.Detail(
                    "\(client.name) transferred a whole store although the remote was wiped since it last synced")
            }
        } catch let error as FolderSyncError where isReset(error) {
            try noteReset(client, error, before: before)
        } catch let error as FolderSyncError where error.code == .notRegistered && client.reset != nil {
            log("\(client.name) cannot transfer a whole store before re-joining")
        } catch let error as FolderSyncError where !upload && error.code == .corruptFile && !damagedStores.isEmpty {
            log("\(client.name) finds no usable whole store to download (a vacuum hazard damaged one): \(error)")
        } catch let failure as SimulationFailure.Detail {
            throw failure
        } catch {
            throw SimulationFailure.Detail(
                "\(client.name) failed to \(upload ? "upload" : "download") a whole store: \(error)")
        }
    }

    /// `vacuum()` by the client; sometimes after days of silence, expiring the clients silent for a day or two.
    func vacuum(_ client: SimulatedClient) async throws {
        guard let document = client.document else { return }
        var expiry: TimeInterval?
        if random.chance(30) {
            time.advance(byMilliseconds: Int64(random.int(0...72)) * 3_600_000)
            expiry = TimeInterval(random.int(24...48) * 3600)
            if clients.contains(where: awaitsCover) { expiry = nil }
        }
        let live = try await liveClientsOnRemote()
        let report: VacuumReport
        do {
            report = try await document.vacuum(expireClientsAfter: expiry)
        } catch let error as FolderSyncError where error.code == .remoteItemNotFound || error.code == .remoteUnavailable
        {
            guard try await !documentExists() else {
                throw SimulationFailure.Detail("\(client.name) failed to vacuum: \(error)")
            }
            log("\(client.name) finds no document to vacuum (wiped)")
            return
        } catch {
            throw SimulationFailure.Detail("\(client.name) failed to vacuum: \(error)")
        }
        guard report.failures.isEmpty else {
            throw SimulationFailure.Detail("\(client.name)'s vacuum failed to remove \(report.failures.map(\.path))")
        }
        if let expiry { try checkExpiry(report.expiredClients, expiry: expiry, live: live) }
        summary.vacuums += 1
        summary.changeSetsVacuumed += report.removedChangeSets.count
        summary.expiredClients += report.expiredClients.count
        for expired in report.expiredClients {
            let targets = clients.filter { $0.identifier == expired }
            guard !targets.isEmpty else {
                throw SimulationFailure.Detail("vacuum expired \(expired), which is no client of the simulation")
            }
            for target in targets { expectDeletion(of: target) }
        }
        log(
            "\(client.name) vacuums\(expiry.map { " expiring clients silent for \(Int($0 / 3600)) h" } ?? ""): "
                + "\(report.removedChangeSets.count) change sets removed, expired \(report.expiredClients)")
    }

    /// Clients with a recent sync and no deletion marker in the document, as the folder holds them now.
    private func liveClientsOnRemote() async throws -> Set<String> {
        guard let remote else { return [] }
        let layout = try layout
        let markers = try await remote.contentsOfDirectoryIfPresent(
            at: layout.recentSyncsDirectory(SimulatedClient.document))
        let deleted = try await remote.contentsOfDirectoryIfPresent(
            at: layout.deletedClientsDirectory(SimulatedClient.document))
        return Set(markers.compactMap { RemoteLayout.parseRecentSyncFileName($0.name) })
            .subtracting(deleted.map { String($0.name.dropLast(".plist".count)) })
    }

    /// Expiry judges silence by the folder's own clock, whatever the clients' clocks say (they run days apart here):
    /// no client the folder saw write within `expiry` is expired, and never every live client of the document.
    private func checkExpiry(_ expired: [String], expiry: TimeInterval, live: Set<String>) throws {
        guard let folderClock else { return }
        let folderNow = time.clock(skew: 0)()
        for client in expired {
            if let last = folderClock.lastWrite(of: client, in: SimulatedClient.document, layout: try layout),
                folderNow.timeIntervalSince(last) <= expiry
            {
                throw SimulationFailure.Detail(
                    "vacuum expired \(client), which the folder saw write "
                        + "\(Int(folderNow.timeIntervalSince(last) / 60)) min before (expiry \(Int(expiry / 3600)) h)")
            }
        }
        if !live.isEmpty, live.isSubset(of: Set(expired)) {
            throw SimulationFailure.Detail("vacuum expired every live client of the document: \(expired.sorted())")
        }
    }

    /// `collectTombstones()` by the client (churn runs); a reset found on the way is noted as a sync's would be.
    func collectTombstones(_ client: SimulatedClient) async throws {
        guard let document = client.document, client.reset == nil else { return }
        let before = try localState(client)
        do {
            let collected = try await document.collectTombstones()
            summary.tombstonesCollected += collected
            log("\(client.identifier) collects \(collected) tombstones")
        } catch let error as FolderSyncError where isReset(error) {
            try noteReset(client, error, before: before)
        } catch let error as FolderSyncError where error.code == .remoteItemNotFound || error.code == .remoteUnavailable
        {
            guard try await !documentExists() else {
                throw SimulationFailure.Detail("\(client.identifier) failed to collect tombstones: \(error)")
            }
            log("\(client.identifier) finds no document to collect tombstones of (wiped)")
        } catch {
            throw SimulationFailure.Detail("\(client.identifier) failed to collect tombstones: \(error)")
        }
    }

    /// A deleted client must stop with `clientDeleted`; an installation of a client copied to a second computer may
    /// (the other may re-join first and remove the deletion marker: ``noteReset(_:_:before:rejoining:)`` allows it).
    private func expectDeletion(of client: SimulatedClient) {
        if !sharedIdentity.contains(client.index) { client.expectedResets.insert(.clientDeleted) }
    }

    private func documentExists() async throws -> Bool {
        guard let remote else { return false }
        return try await remote.item(at: try layout.documentInfoFile(SimulatedClient.document)) != nil
    }

    /// `deleteClient(_:)` of `target` by a random client (the operator's path through an app).
    func deleteClient(_ target: SimulatedClient) async throws {
        guard let document = random.pick(clients)?.document, !awaitsCover(target) else { return }
        do {
            try await document.deleteClient(target.identifier)
            summary.clientDeletions += 1
            for installation in clients where installation.identifier == target.identifier {
                expectDeletion(of: installation)
            }
            log("\(document.clientIdentifier) deletes \(target.name) from the document")
        } catch let error as FolderSyncError
            where error.code == .remoteItemNotFound
            && (target.reset != nil || !target.expectedResets.isDisjoint(with: Self.wipeCodes))
        {
            // After a wipe, a client that has not re-joined is not registered with the new document.
            log("\(target.name) is not registered with the document since the wipe: not deleted")
        } catch {
            throw SimulationFailure.Detail("deleting \(target.name) failed: \(error)")
        }
    }

    /// Wipes the remote: the document's folder, the application's whole folder, or a document deletion by a client.
    func wipeRemote() async throws {
        guard let remote else { return }
        let layout = try layout
        let expected: Set<FolderSyncError.Code>
        switch random.int(0...2) {
        case 0:
            try await remote.remove(layout.documentDirectory(SimulatedClient.document))
            expected = [.integrityKeyMismatch]
            log("the document's folder is wiped")
        case 1:
            try await remote.remove(layout.applicationDirectory)
            replacedRemote.applicationFolderWiped()
            expected = [.integrityKeyMismatch]
            log("the application's folder is wiped")
        default:
            guard let app = random.pick(clients)?.document?.applicationSyncManager else { return }
            guard try await documentExists() else { return log("no document to delete (wiped)") }
            do {
                try await app.deleteDocument(identifier: SimulatedClient.document)
            } catch {
                throw SimulationFailure.Detail("deleting the document failed: \(error)")
            }
            // Once someone re-joins, the document exists again with a new key.
            expected = [.documentDeleted, .integrityKeyMismatch]
            log("the document is deleted")
        }
        if try await remote.item(at: layout.documentInfoFile(SimulatedClient.document)) != nil {
            throw SimulationFailure.Detail("the wipe left the document's info file")
        }
        // A deletion marker left by an earlier document deletion (in Information/, outside the document) says
        // "deleted".
        let marker = try await remote.item(at: layout.deletedDocumentFile(SimulatedClient.document)) != nil
        summary.wipes += 1
        journal.remoteWiped()
        keptChangeSets = [:]  // the user's doing: no removal kept what went
        for client in clients { client.expectedResets = marker ? expected.union([.documentDeleted]) : expected }
    }
}
