public import Foundation
import Logging

/// Deletes the remote files of one document that nobody needs any more (invariant 4).
///
/// The algorithm (``run()``) is fixed; the remote steps it calls are `open`,
/// each with a default on ``RemoteFileSystem``:
///
/// 1. List every folder of the document once; read the recent syncs of
///    clients that are not deleted and every whole-store manifest, and verify
///    each whole store: its file is read whole and must match its manifest
///    (size, checksum, identifier, and what it contains), or it counts as
///    covering nothing. Stores verified by an earlier run and unchanged since
///    are not read again (``verificationCacheFile``), unless the plan removes
///    a change set or a whole store on their strength: they are read before
///    the plan is final. Change-set contents are read only when the document
///    has attachments (step 4).
/// 2. With an expiry policy, clients whose last sync is older than the limit
///    are marked deleted (`DeletedClients/<client>.plist`) **before** anything
///    is computed or removed, so a returning client resets safely.
/// 3. Compute the plan (the rule is in ``VacuumReport`` terms: a change set
///    goes when every live client acknowledged it and every kept whole store
///    contains it) and, unless this is a dry run, remove in phases: dominated
///    whole stores (each by its identifier: its manifest is moved aside first,
///    and only the store the plan judged is removed), markers of deleted
///    clients, change sets (only once the kept stores are confirmed to be still
///    the planned ones, or stores that contain them: another vacuum or upload
///    may have run meanwhile), stale temporaries, emptied folders of deleted
///    clients.
/// 4. Last, attachments that no change set or whole store it keeps references,
///    once older than `temporaryFileAge`; change sets published while it ran
///    are read just before, so an attachment referenced again stays.
///
/// Anything it cannot read or does not know is left alone and reported.
/// Modification dates are used for one thing only: the age of temporaries.
///
/// `@unchecked Sendable`: an `open` class cannot be checked `Sendable`, and a run shares it with the tasks that
/// remove files (``Options/maximumConcurrentRemovals`` at once); its context and options are `let`s, and the removal
/// a run began is changed only by the task that runs ``run()``.
open class VacuumOperation: DocumentOperation, @unchecked Sendable {
    /// How a vacuum runs: whether it only reports, what it expires, how long what it removes is kept, and what it
    /// remembers between runs. Set before the operation is made; a backend subclass built with
    /// ``VacuumOperation/init(copying:)`` receives the same value.
    public struct Options: Sendable {
        /// Compute and report the plan, write and remove nothing.
        public var dryRun = false
        /// Mark clients deleted whose last sync is older than this; `nil` never expires anyone.
        public var expireClientsAfter: TimeInterval?
        /// Temporaries older than this are interrupted writes and are removed.
        public var temporaryFileAge = VacuumOperation.defaultTemporaryFileAge
        /// How long what this vacuum removes stays in the document's removed area
        /// (``RemoteLayout/removedDirectory(_:)``) before a later vacuum purges it for good; at least a day
        /// (``VacuumOperation/minimumRemovedFileGracePeriod``). Nothing in the folder shortens it: a removal's age is
        /// the folder's own date of its record against the folder's time now.
        public var keepRemovedFor = VacuumOperation.defaultRemovedFileGracePeriod
        /// How many removals run at once; remote backends gain from a few in flight.
        public var maximumConcurrentRemovals = 8
        /// A local file where the whole stores this vacuum verified are remembered, so that the next run reads only
        /// those that changed or that it removes something on the strength of (`nil`: every store is read at every
        /// run).
        public var verificationCacheFile: URL?
        /// Safeguards switched off, for tests that replay the defects they guard against.
        package var disabledSafeguards: Set<RemovalSafeguard> = []

        /// Options; see the properties for each argument.
        public init(
            dryRun: Bool = false, expireClientsAfter: TimeInterval? = nil,
            temporaryFileAge: TimeInterval = VacuumOperation.defaultTemporaryFileAge,
            keepRemovedFor: TimeInterval = VacuumOperation.defaultRemovedFileGracePeriod,
            verificationCacheFile: URL? = nil
        ) {
            self.dryRun = dryRun
            self.expireClientsAfter = expireClientsAfter
            self.temporaryFileAge = temporaryFileAge
            self.keepRemovedFor = keepRemovedFor
            self.verificationCacheFile = verificationCacheFile
        }
    }

    /// The remote, the document, and who vacuums (``DocumentOperationContext/clientIdentifier``: a client identifier
    /// or an operator's name, written in the markers of expired clients and in the removal's record).
    public let context: DocumentOperationContext
    /// How the vacuum runs.
    public let options: Options
    /// Compute and report the plan, write and remove nothing.
    public var dryRun: Bool { options.dryRun }
    /// Mark clients deleted whose last sync is older than this; `nil` never expires anyone.
    public var expireClientsAfter: TimeInterval? { options.expireClientsAfter }
    /// Temporaries older than this are interrupted writes and are removed.
    public var temporaryFileAge: TimeInterval { options.temporaryFileAge }
    /// How long what this vacuum removes stays in the document's removed area (``Options/keepRemovedFor``).
    public var keepRemovedFor: TimeInterval { options.keepRemovedFor }
    /// How many removals run at once.
    public var maximumConcurrentRemovals: Int { options.maximumConcurrentRemovals }
    /// Where the whole stores this vacuum verified are remembered (``Options/verificationCacheFile``).
    public var verificationCacheFile: URL? { options.verificationCacheFile }
    var disabledSafeguards: Set<RemovalSafeguard> { options.disabledSafeguards }
    /// This run's removal in the removed area, once it began (a real run that removes something).
    private var removal: RemovedArea.Removal?

    /// The default age after which a temporary counts as an interrupted write: one hour, in seconds.
    public static let defaultTemporaryFileAge: TimeInterval = 3600
    /// The default time removed files are kept (``keepRemovedFor``): 14 days.
    public static let defaultRemovedFileGracePeriod: TimeInterval = RemovedArea.defaultGracePeriod
    /// The shortest time removed files are kept: one day.
    public static let minimumRemovedFileGracePeriod: TimeInterval = RemovedArea.minimumGracePeriod

    /// The shortest silence after which a client may be expired: one day, 24 heartbeats
    /// (`RecentSync/heartbeatInterval`). A client that syncs at all rewrites its marker at least once an
    /// hour, so only a client that really stopped syncing is older than this; a shorter expiry could delete
    /// clients that sync every minute.
    public static let minimumClientExpiry: TimeInterval = 24 * RecentSync.heartbeatInterval

    /// An operation ready to ``run()``: it vacuums as `options` say, where `context` says.
    public init(context: DocumentOperationContext, options: Options = Options()) {
        self.context = context
        self.options = options
    }

    /// The operation `standard` is, for a backend subclass to run with its own steps: the same context and options,
    /// so that nothing the maintenance object set is lost.
    public init(copying standard: VacuumOperation) {
        context = standard.context
        options = standard.options
    }

    /// Runs the vacuum and reports what it removed (or, in a dry run, would remove).
    ///
    /// - Throws: ``FolderSyncError/Code/invalidConfiguration`` for an expiry shorter than ``minimumClientExpiry``, or
    ///   a grace period shorter than ``minimumRemovedFileGracePeriod``.
    public func run() async throws -> VacuumReport {
        if let expiry = expireClientsAfter, expiry < Self.minimumClientExpiry {
            throw FolderSyncError(
                .invalidConfiguration,
                "clients can be expired after one day of silence at the soonest "
                    + "(a syncing client says it is alive once an hour); \(Int(expiry)) seconds is too short")
        }
        try RemovedArea.checkGracePeriod(keepRemovedFor)
        var inventory = try await takeInventory()
        let folderTime = await readFolderTime(inventory)
        let expired = expiredClients(inventory, now: folderTime.now)
        if !dryRun {
            for client in expired.sorted() {
                let marker = DeletedClientInfo(
                    clientIdentifier: client, deletedBy: clientIdentifier,
                    deletionDate: environment.now().wholeSeconds)
                try await writeDeletedClientMarker(try PropertyListFile.encode(marker), client: client)
                environment.logger.info("Expired client \(client) of document \(documentIdentifier)")
            }
        }
        inventory.recentSyncs = inventory.recentSyncs.filter { !expired.contains($0.key) }
        let plan = try await planOnStoresReadNow(&inventory, expired: expired, now: folderTime.now)
        var report = plan.report
        report.folderTime = folderTime
        let attachments = try await unreferencedAttachments(inventory, plan: plan, now: folderTime.now)
        report.removed += attachments.removals
        report.skipped += attachments.skipped
        report.wholeStoreCheck = inventory.wholeStoreCheck
        report.keepRemovedFor = keepRemovedFor
        let areas = [documentArea, RemovedArea(fileSystem: fileSystem, layout: layout)]
        var expiredRemovals: [RemovedArea.StoredRemoval] = []
        for area in areas {
            let removals = try await area.removals(in: area.root == documentArea.root ? inventory.tree : nil)
            expiredRemovals += RemovedArea.expired(removals, gracePeriod: keepRemovedFor, now: folderTime.now)
        }
        report.purgedRemovals = expiredRemovals.map(\.folder)
        guard !dryRun else { return report }

        if report.removed.contains(where: { $0.reason != .deletedClientFolder }) {
            removal = try await documentArea.begin(
                .vacuum, by: clientIdentifier, at: folderTime.now ?? environment.now())
            report.removalFolder = removal?.folder
        }
        var failed: [RemotePath: FolderSyncError] = [:]
        for (index, phase) in plan.phases.enumerated() {
            try Task.checkCancellation()
            if index == VacuumPlan.changeSetPhase, !phase.isEmpty, !disabledSafeguards.contains(.removesWhatItPlanned),
                let changed = try await keptStoreChange(plan)
            {
                // The stores that justify removing these change sets are not the planned ones any more.
                let kept = Set(phase + plan.phases[VacuumPlan.folderPhase])
                report.removed.removeAll { kept.contains($0) }
                report.skipped.append(
                    .init(
                        path: layout.wholeStoreDirectory(documentIdentifier),
                        reason: "change sets kept: \(changed) while this vacuum ran; the next vacuum looks again"))
                break
            }
            for (path, error) in try await remove(phase, plan: plan) { failed[path] = error }
        }
        if !attachments.removals.isEmpty {
            // A client may have published a change set referencing one of them meanwhile (it found it present).
            let referencedNow = try await attachmentsReferencedByChangeSets(notIn: inventory)
            let stillUnreferenced = attachments.removals.filter { !referencedNow.contains($0.path.name) }
            report.removed.removeAll { $0.reason == .unreferencedAttachment && referencedNow.contains($0.path.name) }
            for (path, error) in try await remove(stillUnreferenced) { failed[path] = error }
        }
        for expired in expiredRemovals {
            do {
                try await purgeRemoval(expired.folder)
            } catch {
                failed[expired.folder] = FolderSyncError.wrapping(error, "purging failed")
            }
        }
        report.failures = failed.map { .init(path: $0.key, error: $0.value) }.sorted { $0.path < $1.path }
        report.removed.removeAll { failed[$0.path] != nil }
        report.purgedRemovals.removeAll { failed[$0] != nil }
        environment.logger.info(
            "Vacuumed document \(documentIdentifier): \(report.removed.count) items, \(report.bytesFreed) bytes")
        return report
    }

    /// The inventory and plan without side effects (a dry run that also returns what it read), for listings:
    /// whole stores count on their manifests' word here (a listing does not read them whole; vacuum does).
    func survey() async throws -> (DocumentInventory, VacuumPlan) {
        let inventory = try await takeInventory(verifyingWholeStores: false)
        let plan = VacuumPlanner.plan(
            inventory, layout: layout, document: documentIdentifier, expired: [],
            now: inventory.newestWrite, temporaryFileAge: temporaryFileAge, dryRun: true)
        return (inventory, plan)
    }

    /// The plan, made once every whole store it removes anything on the strength of was read in this run: a store
    /// remembered as verified by an earlier run (``verificationCacheFile``) is read again before a change set or a
    /// whole store goes because of it, since a store damaged in place can keep its size and version tag. A store
    /// that fails is dropped and the plan made again without it; each store is read at most once, so this ends.
    private func planOnStoresReadNow(_ inventory: inout DocumentInventory, expired: Set<String>, now: Date?)
        async throws -> VacuumPlan
    {
        while true {
            let plan = VacuumPlanner.plan(
                inventory, layout: layout, document: documentIdentifier, expired: expired,
                now: now, temporaryFileAge: temporaryFileAge, dryRun: dryRun)
            guard !disabledSafeguards.contains(.rereadsRememberedStores) else { return plan }
            let relied = plan.storesReliedOn.intersection(inventory.wholeStoresVerifiedEarlier)
            guard !relied.isEmpty else { return plan }
            var cache = WholeStoreVerificationCache(url: verificationCacheFile)
            for client in relied.sorted() {
                inventory.wholeStoresVerifiedEarlier.remove(client)
                inventory.wholeStoreCheck.verifiedEarlier -= 1
                try await verifyWholeStore(client: client, &inventory, cache: &cache)
            }
            cache.save(keeping: inventory.wholeStoreKeys)
        }
    }

    private func takeInventory(verifyingWholeStores: Bool = true) async throws -> DocumentInventory {
        let tree = try await fetchDocumentTree()
        var inventory = DocumentInventory.classify(tree: tree, layout: layout, document: documentIdentifier)
        for client in inventory.recentSyncMarkers.keys.sorted() where !inventory.deletedClients.contains(client) {
            let path = layout.recentSyncFile(documentIdentifier, client: client)
            do {
                guard let data = try await fetchRecentSync(client: client) else { continue }
                let recent = try PropertyListFile.decode(RecentSync.self, from: data, path: path.description)
                guard recent.clientIdentifier == client else {
                    throw FolderSyncError(
                        .corruptFile, "the recent sync names client \(recent.clientIdentifier)", path: path.description)
                }
                inventory.recentSyncs[client] = recent
            } catch let error as FolderSyncError where error.isDamagedFile || error.code == .unsupportedFormatVersion {
                inventory.skipped.append(
                    .init(
                        path: path, reason: "unreadable (\(error.message)); this client counts as acknowledging nothing"
                    ))
            }
        }
        for client in inventory.wholeStoreFolders.keys.sorted() {
            let path = layout.appliedSyncChangeSetsFile(documentIdentifier, client: client)
            do {
                guard let data = try await fetchWholeStoreManifest(client: client) else {
                    inventory.skipped.append(
                        .init(path: path, reason: "whole store without a manifest; not counted, left alone"))
                    continue
                }
                let manifest = try PropertyListFile.decode(WholeStoreManifest.self, from: data, path: path.description)
                guard manifest.clientIdentifier == client else {
                    throw FolderSyncError(
                        .corruptFile, "the manifest names client \(manifest.clientIdentifier)", path: path.description)
                }
                inventory.wholeStores[client] = manifest
            } catch let error as FolderSyncError where error.isDamagedFile || error.code == .unsupportedFormatVersion {
                inventory.skipped.append(
                    .init(path: path, reason: "unreadable (\(error.message)); whole store not counted, left alone"))
            }
        }
        if verifyingWholeStores, !disabledSafeguards.contains(.verifiesWholeStores) {
            try await verifyWholeStores(&inventory)
        }
        return inventory
    }

    /// Reads every whole store whose manifest was read, unless an earlier run verified it unchanged, and drops from
    /// the inventory each one that fails: a store counts as covering change sets only once verified (invariant 4).
    /// Those taken on an earlier run's word are noted (``DocumentInventory/wholeStoresVerifiedEarlier``): nothing is
    /// removed on their strength before they are read (``planOnStoresReadNow(_:expired:)``).
    private func verifyWholeStores(_ inventory: inout DocumentInventory) async throws {
        var cache = WholeStoreVerificationCache(url: verificationCacheFile)
        for (client, manifest) in inventory.wholeStores.sorted(by: { $0.key < $1.key }) {
            let key = wholeStoreKey(client: client, manifest: manifest, inventory)
            if let key { inventory.wholeStoreKeys.insert(key) }
            if cache.contains(key) {
                inventory.wholeStoreCheck.verifiedEarlier += 1
                inventory.wholeStoresVerifiedEarlier.insert(client)
                continue
            }
            try await verifyWholeStore(client: client, &inventory, cache: &cache)
        }
        cache.save(keeping: inventory.wholeStoreKeys)
    }

    /// What the verification cache knows a client's whole store by: its identifier, size and version tag as listed.
    private func wholeStoreKey(client: String, manifest: WholeStoreManifest, _ inventory: DocumentInventory) -> String?
    {
        let item = inventory.tree[layout.wholeStoreDirectory(documentIdentifier, client: client)]?
            .first { $0.name == RemoteLayout.wholeStoreFileName }
        return WholeStoreVerificationCache.key(client: client, manifest: manifest, item: item)
    }

    /// Reads one client's whole store whole and checks it against its manifest: counted as verified and remembered,
    /// or dropped from the inventory (it covers nothing), reported as damaged and forgotten.
    private func verifyWholeStore(
        client: String, _ inventory: inout DocumentInventory,
        cache: inout WholeStoreVerificationCache
    ) async throws {
        guard let manifest = inventory.wholeStores[client] else { return }
        let path = layout.wholeStoreFile(documentIdentifier, client: client)
        let key = wholeStoreKey(client: client, manifest: manifest, inventory)
        do {
            let file = try await verifyWholeStore(client: client, path: path.description)
            inventory.wholeStoreCheck.bytesRead += file.byteCount
            try manifest.check(file, path: path.description)
            inventory.wholeStoreCheck.verified += 1
            cache.insert(key)
        } catch let error as FolderSyncError
            where error.isDamagedFile || error.code == .unsupportedFormatVersion
            || error.code == .remoteItemNotFound
        {
            inventory.wholeStores[client] = nil
            inventory.wholeStoreCheck.damaged.append(
                .init(path: path, reason: "\(error.message); whole store not counted, left alone"))
            cache.remove(key)
        }
    }

    /// Reads a whole store through, checking every byte, and returns what it holds; writes nothing.
    private func verifyWholeStore(client: String, path: String) async throws -> WholeStoreReader.Result {
        try await WholeStoreReader.verify(path: path) { try await readWholeStore(client: client, $0) }
    }

    /// Why the change sets of `plan` may not be removed now: a whole store it keeps is gone, or replaced by one
    /// that does not contain everything the planned one did (or is not verified). `nil` when all are as planned.
    private func keptStoreChange(_ plan: VacuumPlan) async throws -> String? {
        for (client, planned) in plan.keptWholeStores.sorted(by: { $0.key < $1.key }) {
            let path = layout.appliedSyncChangeSetsFile(documentIdentifier, client: client)
            guard let data = try await fetchWholeStoreManifest(client: client),
                let now = try? PropertyListFile.decode(WholeStoreManifest.self, from: data, path: path.description)
            else {
                return "the whole store of client \(client) was removed"
            }
            if now.wholeStoreIdentifier == planned.wholeStoreIdentifier { continue }
            let file = layout.wholeStoreFile(documentIdentifier, client: client).description
            let verified = (try? now.check(try await verifyWholeStore(client: client, path: file), path: file)) != nil
            guard now.dominates(planned), verified else {
                return "the whole store of client \(client) was replaced by one that does not contain as much"
            }
        }
        return nil
    }

    /// The attachments nothing left after the plan references: every change set it keeps and every whole store it
    /// keeps are read (only when the document has attachments). Anything unreadable keeps every attachment.
    private func unreferencedAttachments(_ inventory: DocumentInventory, plan: VacuumPlan, now: Date?)
        async throws -> (removals: [VacuumReport.Removal], skipped: [VacuumReport.Skipped])
    {
        let folder = layout.attachmentsDirectory(documentIdentifier)
        let stored = (inventory.tree[folder] ?? []).filter {
            $0.kind == .file && AttachmentReference.isValidName($0.name)
        }
        guard !stored.isEmpty else { return ([], []) }
        // Private: with encryption, what is read here is decrypted.
        let work = try LocalFiles.privateScratchDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let removed = Set(plan.report.removed.map(\.path))
        var referenced = Set<String>()
        do {
            referenced = try await attachments(
                referencedBy: inventory.changeSets.values.joined().filter { !removed.contains($0.path) }, work: work)
            for client in plan.keptWholeStores.keys.sorted() {
                let path = layout.wholeStoreFile(documentIdentifier, client: client)
                let (download, snapshot) = (
                    work.appendingPathComponent("whole-store"), work.appendingPathComponent("snapshot.sqlite")
                )
                try await downloadFile(path, to: download)
                _ = try WholeStoreFile.read(download, to: snapshot, path: path.description)
                referenced.formUnion(
                    try AttachmentScan.references(inSnapshot: snapshot, path: path.description).map(\.1.sha256))
                try? FileManager.default.removeItem(at: snapshot)
            }
        } catch let error as FolderSyncError
            where [.corruptFile, .unsupportedFormatVersion, .remoteItemNotFound].contains(error.code)
        {
            return (
                [],
                [
                    .init(
                        path: folder,
                        reason: "attachments kept: \(error.path ?? "a file") could not be read (\(error.message))")
                ]
            )
        }
        var removals: [VacuumReport.Removal] = []
        var skipped: [VacuumReport.Skipped] = []
        for item in stored.sorted(by: { $0.name < $1.name }) where !referenced.contains(item.name) {
            guard let date = item.modificationDate, let now else {
                skipped.append(
                    .init(
                        path: folder.appending(item.name),
                        reason: "unreferenced attachment without a modification date; its age is unknown"))
                continue
            }
            if now.timeIntervalSince(date) > temporaryFileAge {
                removals.append(
                    .init(path: folder.appending(item.name), byteCount: item.size ?? 0, reason: .unreferencedAttachment)
                )
            }
        }
        return (removals, skipped)
    }

    /// The attachments referenced by change sets published since `inventory` was taken.
    private func attachmentsReferencedByChangeSets(notIn inventory: DocumentInventory) async throws -> Set<String> {
        let known = Set(inventory.changeSets.values.joined().map(\.path))
        let now = DocumentInventory.classify(
            tree: try await fetchDocumentTree(), layout: layout, document: documentIdentifier)
        let work = try LocalFiles.privateScratchDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        return try await attachments(
            referencedBy: now.changeSets.values.joined().filter { !known.contains($0.path) }, work: work)
    }

    /// The attachments some change sets reference, each downloaded into `work` in turn.
    private func attachments(referencedBy sets: [DocumentInventory.ChangeSet], work: URL) async throws -> Set<String> {
        var referenced = Set<String>()
        for set in sets {
            let local = work.appendingPathComponent("change-set")
            do {
                try await downloadFile(set.path, to: local)
            } catch let error as FolderSyncError where error.code == .remoteItemNotFound {
                // Removed since the inventory (another client's vacuum): no reader will need what it referenced.
                continue
            }
            referenced.formUnion(
                try AttachmentScan.references(inChangeSet: local, path: set.path.description).map(\.0.sha256))
        }
        return referenced
    }

    /// The shared folder's time now (``VacuumReport/FolderTime``): measured by writing a temporary
    /// (``fetchFolderTime()``), except in a dry run, which writes nothing, or where that fails; then the newest date
    /// the folder records for a file of the document.
    private func readFolderTime(_ inventory: DocumentInventory) async -> VacuumReport.FolderTime {
        let newest = VacuumReport.FolderTime(now: inventory.newestWrite, isMeasured: false)
        guard !dryRun else { return newest }
        do {
            guard let measured = try await fetchFolderTime() else { return newest }
            return .init(now: measured, isMeasured: true, skew: environment.now().timeIntervalSince(measured))
        } catch {
            environment.logger.info(
                "Reading the folder's clock failed (\(error)); ages are judged from the newest date it records")
            return newest
        }
    }

    /// Clients silent for longer than the expiry: the folder saw no file of theirs written for that long, by the
    /// folder's own clock (a device's clock, or the operator's, decides nothing). Only clients with a readable recent
    /// sync are candidates (one that never synced is not expired), a client with no dated file is not expired, and of
    /// the candidates, the one the folder saw write last is never expired with all the others: a document always keeps
    /// a client that syncs.
    private func expiredClients(_ inventory: DocumentInventory, now: Date?) -> Set<String> {
        guard let limit = expireClientsAfter, let now else { return [] }
        let candidates = Set(inventory.recentSyncs.keys).subtracting(inventory.deletedClients)
        var silent = candidates.filter { client in
            inventory.lastWritten[client].map { now.timeIntervalSince($0) > limit } ?? false
        }
        if !silent.isEmpty, silent == candidates,
            let latest = silent.max(by: { (inventory.lastWritten[$0]!, $0) < (inventory.lastWritten[$1]!, $1) })
        {
            silent.remove(latest)
        }
        return silent
    }

    /// The document's removed area, where this vacuum moves what it removes.
    private var documentArea: RemovedArea {
        RemovedArea(fileSystem: fileSystem, layout: layout, document: documentIdentifier)
    }

    /// Removes one phase with a few removals in flight (each a move into this run's removal); returns the failures.
    private func remove(_ removals: [VacuumReport.Removal], plan: VacuumPlan? = nil) async throws -> [(
        RemotePath, FolderSyncError
    )] {
        if let removal {
            let moved = removals.filter { $0.reason != .deletedClientFolder }.map(\.path)
            try await documentArea.makeFolders(for: moved, in: removal)
        }
        return try await withRemovalsInFlight(removals) { [self] removal -> (RemotePath, FolderSyncError)? in
            do {
                if removal.reason == .deletedClientFolder {
                    try await removeDirectoryIfEmpty(removal.path)
                } else if removal.reason == .dominatedWholeStore, !disabledSafeguards.contains(.removesWhatItPlanned),
                    let planned = plan?.removedWholeStores[removal.path]
                {
                    try await removeWholeStore(client: removal.path.name, identifier: planned)
                } else {
                    try await moveToRemovedArea(removal.path)
                }
                return nil
            } catch {
                return (removal.path, FolderSyncError.wrapping(error, "removal failed"))
            }
        }.compactMap { $0 }
    }

    /// Runs `body` on each of `items` with at most ``maximumConcurrentRemovals`` in flight, checking for cancellation
    /// before each start after the first few; returns the results in the order they finished.
    private func withRemovalsInFlight<Item: Sendable, Result: Sendable>(
        _ items: [Item], _ body: @escaping @Sendable (Item) async throws -> Result
    ) async throws -> [Result] {
        try await withThrowingTaskGroup(of: Result.self) { group in
            var results: [Result] = []
            var next = items.startIndex
            func start() {
                let item = items[next]
                next += 1
                group.addTask { try await body(item) }
            }
            while next < items.endIndex && next - items.startIndex < max(1, maximumConcurrentRemovals) { start() }
            while let result = try await group.next() {
                results.append(result)
                if next < items.endIndex {
                    try Task.checkCancellation()
                    start()
                }
            }
            return results
        }
    }

    // MARK: Backend steps

    /// Downloads a change set or a whole store, to find the attachments it references.
    open func downloadFile(_ path: RemotePath, to url: URL) async throws {
        try await fileSystem.download(path, toLocalFile: url)
    }

    /// Lists every folder of the document, by path, down to the removals of its removed area (what they hold is not
    /// needed). A backend with recursive listing overrides this; listing more is harmless.
    ///
    /// - Throws: ``FolderSyncError/Code/remoteItemNotFound`` when the document does not exist.
    open func fetchDocumentTree() async throws -> [RemotePath: [RemoteItem]] {
        let removed = layout.removedDirectory(documentIdentifier)
        return try await fileSystem.listTree(at: layout.documentDirectory(documentIdentifier)) { folder in
            !folder.hasPrefix(removed) || folder.components.count <= removed.components.count + 2
        }
    }

    /// The folder's time now: what the remote records for a file written now (``RemoteFileSystem/recordedTime(in:)``,
    /// a temporary in the document's folder); `nil` when it records no times.
    open func fetchFolderTime() async throws -> Date? {
        try await fileSystem.recordedTime(in: layout.documentDirectory(documentIdentifier))
    }

    /// Reads a client's recent-sync marker, or `nil` if it vanished.
    open func fetchRecentSync(client: String) async throws -> Data? {
        try await fileSystem.readIfPresent(
            layout.recentSyncFile(documentIdentifier, client: client), maximumSize: PropertyListFile.maximumByteCount)
    }

    /// Reads `WholeStore/<client>/AppliedSyncChangeSets.ticdsync`, or `nil`.
    open func fetchWholeStoreManifest(client: String) async throws -> Data? {
        try await fileSystem.readIfPresent(
            layout.appliedSyncChangeSetsFile(documentIdentifier, client: client),
            maximumSize: PropertyListFile.maximumByteCount)
    }

    /// Writes `DeletedClients/<client>.plist`.
    open func writeDeletedClientMarker(_ data: Data, client: String) async throws {
        try await fileSystem.createDirectory(at: layout.deletedClientsDirectory(documentIdentifier))
        try await fileSystem.write(data, to: layout.deletedClientFile(documentIdentifier, client: client))
    }

    /// Moves a file or folder into this run's removal (its path below the document kept); one already gone was
    /// removed by another vacuum meanwhile.
    private func moveToRemovedArea(_ path: RemotePath) async throws {
        guard let removal else { return }
        do {
            try await moveAside(path, to: removal.destination(of: path))
        } catch FolderSyncError.Code.remoteItemNotFound {
            return
        }
    }

    /// Moves a file or folder to where nothing reads it as published (``RemoteFileSystem/moveAside(_:to:)``): into the
    /// removed area, where it stays for ``keepRemovedFor``.
    open func moveAside(_ path: RemotePath, to destination: RemotePath) async throws {
        try await fileSystem.moveAside(path, to: destination)
    }

    /// Purges, for good, one removal of a removed area older than the grace period: its files with a few removals in
    /// flight, its record last (a removal interrupted here keeps its date, and the next vacuum purges the rest), then
    /// its folder, then its day's folder when that is left empty.
    ///
    /// File by file rather than one removal of the folder: a server removes a folder's tree in one thread (Apache's
    /// recursive `DELETE`: 2 ms a file on a busy disk, eight times what the same files' `DELETE`s take eight at a
    /// time).
    open func purgeRemoval(_ folder: RemotePath) async throws {
        let tree: [RemotePath: [RemoteItem]]
        do {
            tree = try await fileSystem.listTree(at: folder)
        } catch FolderSyncError.Code.remoteItemNotFound {
            return  // purged by another vacuum meanwhile
        }
        let files = tree.flatMap { parent, items in items.filter { $0.kind == .file }.map { parent.appending($0.name) }
        }
        .filter { $0 != folder.appending(RemoteLayout.removalRecordFileName) }
        _ = try await withRemovalsInFlight(files) { [fileSystem] file in try await fileSystem.remove(file) }
        try await fileSystem.remove(folder)
        if try await fileSystem.contentsOfDirectoryIfPresent(at: folder.parent).isEmpty {
            try await fileSystem.remove(folder.parent)
        }
    }

    /// Reads a client's `WholeStore.ticdsync` from start to end in pieces, to verify it.
    open func readWholeStore(client: String, _ body: (Data) throws -> Void) async throws {
        try await fileSystem.readPieces(
            of: layout.wholeStoreFile(documentIdentifier, client: client), size: 1 << 20, body)
    }

    /// Removes the whole store `identifier` of `client`, and only that one, even if the client uploads a new store
    /// meanwhile: its manifest is first moved to a temporary name (atomically, so the store is no longer published:
    /// nobody installs or counts a store without a manifest), then the manifest moved aside is read. If it is the
    /// planned store, it and the store file (when its header still names that store) are moved into the removed
    /// area; if a newer upload got there first, the manifest is put back, unless an even newer one took its place
    /// again.
    open func removeWholeStore(client: String, identifier: String) async throws {
        guard let removal else { return }
        let folder = layout.wholeStoreDirectory(documentIdentifier, client: client)
        let manifestPath = layout.appliedSyncChangeSetsFile(documentIdentifier, client: client)
        let aside = folder.appending(TemporaryName.make(for: RemoteLayout.appliedSyncChangeSetsFileName))
        do {
            try await fileSystem.move(from: manifestPath, to: aside, replacing: false)
        } catch FolderSyncError.Code.remoteItemNotFound {
            return  // already removed, or being replaced: nothing of the planned store is published
        }
        let moved = try? PropertyListFile.decode(
            WholeStoreManifest.self,
            from: try await fileSystem.read(aside, maximumSize: PropertyListFile.maximumByteCount),
            path: aside.description)
        guard moved?.wholeStoreIdentifier == identifier else {
            do {
                try await fileSystem.move(from: aside, to: manifestPath, replacing: false)
            } catch FolderSyncError.Code.remoteItemExists {
                try await fileSystem.remove(aside)  // an even newer store took the name: the one moved aside is older
            }
            return
        }
        let storePath = layout.wholeStoreFile(documentIdentifier, client: client)
        try await fileSystem.createDirectory(at: removal.destination(of: folder))
        try await moveAside(aside, to: removal.destination(of: manifestPath))
        if try await wholeStoreIdentifier(client: client, path: storePath.description) == identifier {
            try await moveAside(storePath, to: removal.destination(of: storePath))
        }
        if try await fileSystem.contentsOfDirectoryIfPresent(at: folder).isEmpty { try await fileSystem.remove(folder) }
    }

    /// The identifier in the header of a client's whole-store file, or `nil` when there is none or it is unreadable.
    private func wholeStoreIdentifier(client: String, path: String) async throws -> String? {
        let reader = try WholeStoreReader(snapshot: nil, path: path)
        var identifier: String?
        do {
            try await readWholeStore(client: client) { piece in
                try reader.consume(piece)
                if let header = reader.header {
                    identifier = header.wholeStoreIdentifier
                    throw CancellationError()  // the header is all it needs
                }
            }
        } catch is CancellationError {
        } catch let error as FolderSyncError
            where error.isDamagedFile || error.code == .remoteItemNotFound || error.code == .unsupportedFormatVersion
        {
            return nil
        }
        return identifier
    }

    /// Removes a folder only if it is (still) empty, so a file that arrived since the listing survives.
    ///
    /// - Throws: ``FolderSyncError/Code/remoteItemExists`` when the folder is not empty.
    open func removeDirectoryIfEmpty(_ path: RemotePath) async throws {
        guard try await fileSystem.contentsOfDirectoryIfPresent(at: path).isEmpty else {
            throw FolderSyncError(.remoteItemExists, "the folder is not empty; left alone", path: path.description)
        }
        try await fileSystem.remove(path)
    }
}

extension RemoteFileSystem {
    /// Lists `path` and every folder below it that `descends` accepts, one listing per folder.
    ///
    /// - Throws: ``FolderSyncError/Code/remoteItemNotFound`` when `path` does not exist.
    func listTree(at path: RemotePath, descendingInto descends: (RemotePath) -> Bool = { _ in true }) async throws
        -> [RemotePath: [RemoteItem]]
    {
        var tree: [RemotePath: [RemoteItem]] = [path: try await contentsOfDirectory(at: path)]
        var pending = [path]
        while let folder = pending.popLast() {
            for item in tree[folder]! where item.kind == .directory && descends(folder.appending(item.name)) {
                let child = folder.appending(item.name)
                tree[child] = try await contentsOfDirectoryIfPresent(at: child)
                pending.append(child)
            }
        }
        return tree
    }
}
