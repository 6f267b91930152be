import Foundation

/// What one vacuum will remove, in the order it removes it.
struct VacuumPlan: Sendable {
    /// The report of the run (removals listed as planned).
    var report: VacuumReport
    /// The removals in phases: each phase runs after the previous one finished.
    var phases: [[VacuumReport.Removal]]
    /// Registered clients that are not deleted (nor expired by this run).
    var liveClients: Set<String>
    /// Whole stores the plan keeps, by uploader: what it judged removable by.
    var keptWholeStores: [String: WholeStoreManifest]
    /// The dominated whole stores it removes: each `WholeStore/<client>` folder, with the identifier of the store
    /// it judged (a store uploaded since is another store, and stays).
    var removedWholeStores: [RemotePath: String] = [:]

    /// The positions of the change-set phase and of the emptied folders' phase in ``phases``.
    static let changeSetPhase = 2, folderPhase = 4

    /// The whole stores whose coverage this plan removes something on: the kept ones, when it removes a change set
    /// or a dominated store.
    var storesReliedOn: Set<String> {
        let relies = (phases[0] + phases[Self.changeSetPhase]).contains {
            $0.reason == .changeSet || $0.reason == .dominatedWholeStore
        }
        return relies ? Set(keptWholeStores.keys) : []
    }
}

/// The vacuum rule, as a pure function of a document's inventory. The only place the rule is written.
///
/// A change set `(c, s)` is removed only when it is the only set of `c` numbered `s`, and
/// 1. every live client `k ≠ c` (registered, not deleted) acknowledges it:
///    `acknowledgement_k[c] ≥ s` in its readable recent sync — a client with
///    no readable recent sync acknowledges nothing; and
/// 2. **every** whole store the plan keeps contains it (`covers[c] ≥ s`), and
///    at least one is kept. Requiring every kept store, not just some, means
///    a new client may bootstrap from whichever store it picks and still find
///    every later change set.
///
/// Whole stores dominated by a kept one go first (never the last one), so
/// coverage only ever grows between the phases of a run.
enum VacuumPlanner {
    /// - Parameter now: the folder's time now (``VacuumReport/FolderTime``), which ages temporaries; `nil` when the
    ///   folder records no times, and then no temporary is old enough.
    static func plan(
        _ inventory: DocumentInventory, layout: RemoteLayout, document: String, expired: Set<String>,
        now: Date?, temporaryFileAge: TimeInterval, dryRun: Bool
    ) -> VacuumPlan {
        var report = VacuumReport(isDryRun: dryRun)
        report.expiredClients = expired.sorted()
        report.skipped = inventory.skipped
        let deleted = inventory.deletedClients.union(expired)
        let live = inventory.registeredClients.subtracting(deleted)

        // Whole stores: the most covering first; a store dominated by one already kept goes.
        let stores = inventory.wholeStores.sorted { lhs, rhs in
            (lhs.value.coveredCount, rhs.key) > (rhs.value.coveredCount, lhs.key)
        }
        var kept: [(String, WholeStoreManifest)] = []
        var storeRemovals: [VacuumReport.Removal] = []
        var judgedStores: [RemotePath: String] = [:]
        for (client, manifest) in stores {
            if kept.contains(where: { WholeStoreReplacement.replaces($0.1.covers, manifest) }) {
                let folder = layout.wholeStoreDirectory(document, client: client)
                storeRemovals.append(
                    .init(
                        path: folder, byteCount: inventory.wholeStoreFolders[client] ?? 0, reason: .dominatedWholeStore)
                )
                judgedStores[folder] = manifest.wholeStoreIdentifier
            } else {
                kept.append((client, manifest))
            }
        }
        func covered(_ client: String) -> Int64 {
            kept.isEmpty ? 0 : kept.map { $0.1.covers[client] ?? 0 }.min()!
        }

        // Markers of deleted clients: removing them is how a deleted client notices.
        let markerRemovals = deleted.sorted().compactMap { client in
            inventory.recentSyncMarkers[client].map {
                VacuumReport.Removal(
                    path: layout.recentSyncFile(document, client: client), byteCount: $0,
                    reason: .deletedClientRecentSync)
            }
        }

        // Change sets, and who holds back the ones that a whole store already has.
        var setRemovals: [VacuumReport.Removal] = []
        var heldBack: [String: VacuumReport.HeldBack] = [:]
        for author in inventory.changeSets.keys.sorted() {
            let coverage = covered(author)
            let acknowledgers = live.subtracting([author]).sorted().map { client in
                (client, inventory.recentSyncs[client]?.acknowledgement[author] ?? 0)
            }
            // Two sets under one number (a device cloned to a second machine): an acknowledgement counts numbers, so it
            // cannot say both were applied, nor can a whole store's coverage. Both stay.
            let duplicated = Set(
                Dictionary(grouping: inventory.changeSets[author]!, by: \.sequence).filter { $0.value.count > 1 }.keys)
            for set in inventory.changeSets[author]! where set.sequence <= coverage {
                if duplicated.contains(set.sequence) {
                    report.skipped.append(
                        .init(
                            path: set.path,
                            reason: "another change set of client \(author) carries sequence "
                                + "\(set.sequence): kept, since acknowledgements count numbers, not sets"))
                    continue
                }
                let blockers = acknowledgers.filter { $0.1 < set.sequence }
                if blockers.isEmpty {
                    setRemovals.append(.init(path: set.path, byteCount: set.byteCount, reason: .changeSet))
                    continue
                }
                for (client, _) in blockers {
                    heldBack[client, default: .init()].changeSetCount += 1
                    heldBack[client, default: .init()].byteCount += set.byteCount
                    if blockers.count == 1 {
                        heldBack[client, default: .init()].exclusiveChangeSetCount += 1
                        heldBack[client, default: .init()].exclusiveByteCount += set.byteCount
                    }
                }
            }
        }
        report.heldBack = heldBack

        // Stale temporaries, judged by the folder's own dates (with expiry, the one place a date decides anything).
        var temporaryRemovals: [VacuumReport.Removal] = []
        let removedStores = storeRemovals.map(\.path)
        let temporaryPaths = inventory.temporaries.map(\.path)
        for temporary in inventory.temporaries {
            if removedStores.contains(where: { temporary.path.hasPrefix($0) }) { continue }
            if temporaryPaths.contains(where: { $0 != temporary.path && temporary.path.hasPrefix($0) }) { continue }
            guard let date = temporary.modificationDate, let now else {
                report.skipped.append(
                    .init(path: temporary.path, reason: "temporary without a modification date; its age is unknown"))
                continue
            }
            if now.timeIntervalSince(date) > temporaryFileAge {
                temporaryRemovals.append(
                    .init(path: temporary.path, byteCount: temporary.byteCount, reason: .staleTemporary))
            }
        }

        // Folders of deleted clients that the removals above leave empty.
        let planned = Set((storeRemovals + markerRemovals + setRemovals + temporaryRemovals).map(\.path))
        var folderRemovals: [VacuumReport.Removal] = []
        for client in deleted.sorted() {
            var folders =
                inventory.changeSets[client] == nil ? [] : [layout.syncChangesDirectory(document, client: client)]
            folders += inventory.clientFolders[client] ?? []
            for folder in folders
            where (inventory.tree[folder] ?? []).allSatisfy({ planned.contains(folder.appending($0.name)) }) {
                folderRemovals.append(.init(path: folder, byteCount: 0, reason: .deletedClientFolder))
            }
        }

        let phases = [storeRemovals, markerRemovals, setRemovals, temporaryRemovals, folderRemovals]
        report.removed = phases.flatMap { $0 }
        return VacuumPlan(
            report: report, phases: phases, liveClients: live,
            keptWholeStores: Dictionary(uniqueKeysWithValues: kept), removedWholeStores: judgedStores)
    }
}
