public import Foundation

/// One synchronization of a document: stage, fetch and apply, publish, acknowledge.
///
/// The algorithm (``run()``) is fixed; the remote steps it calls are `open`,
/// each with a default on ``RemoteFileSystem``:
///
/// 1. Check that the remote document still has this client's integrity key.
/// 2. List `RecentSyncs/`; read only the markers whose version tag changed;
///    list only the change-set folders of clients that published something new.
/// 3. Download, verify and apply each new change set in one local transaction
///    with its ledger entry, in causal order, asking the conflict resolver first.
/// 4. Stage local changes, as the resolutions left them, into change sets under
///    their final names in the helper folder, durable before they are marked staged:
///    a local value the resolver rejected is no longer a change and never leaves.
/// 5. Publish staged sets (atomic write under the final name; publishing again
///    after a crash writes the same bytes under the same name; sets an earlier
///    sync staged go out as they are, since they may be on the remote already).
/// 6. Write `RecentSyncs/<client>.recentsync` with the acknowledgement.
///
/// An idle sync (nothing new anywhere) costs two listings and reads no change set.
open class SynchronizationOperation: DocumentOperation, @unchecked Sendable {
    /// Where and as whom the operation works, the manager's policy, and where events go.
    public let context: DocumentOperationContext
    /// The integrity key this client registered with; a different remote key stops the sync.
    public let integrityKey: String
    /// The local data synced: changes are staged from it and applied to it.
    public let store: any ModelAdapter
    /// Answers conflicts (the manager's resolver or delegate), or `nil` to let the last writer win.
    public let resolver: (@Sendable (SyncConflict) async -> ConflictResolution?)?


    /// Largest change set, before compression; larger batches are split into consecutive sets.
    var partByteLimit = ChangeSetSplitter.defaultPartByteLimit
    /// Only fetch and apply: stage, publish and write nothing (an operator's export reads a tree it must not change).
    var isReadOnly = false
    /// Attachments this sync found on the remote or uploaded, so each is checked once.
    var attachmentsOnRemote = Set<String>()
    /// Change sets this sync staged with no attachment reference in them (seen as they were written), by file
    /// name: publishing them needs no scan for attachments. Sets staged by an earlier sync are scanned.
    var stagedWithoutAttachments = Set<String>()

    /// Whether this sync looks at this client's whole store whatever the heartbeat says (the first of a launch).
    var checksOwnWholeStore = false

    /// Asks ``confirmMassDeletion`` before applying deletions that trip it (`nil`: never asks).
    var deletionFailSafe: DeletionFailSafe?
    /// The app's answer to a mass deletion; without one, a mass deletion is declined.
    var confirmMassDeletion: (@Sendable (MassDeletion) async -> Bool)?

    /// Change sets downloaded and verified in this sync, by remote path.
    private var downloaded: [String: Downloaded] = [:]
    /// Clients with a set their marker announced that the remote does not show (yet).
    private var notYetVisible: Set<String> = []
    /// Clients with a file this sync could not use (a damaged marker or change set): reported once, and their sets
    /// from the damaged one on wait, while every other client's sync goes on (one client's file never stops others).
    private var unreadable: Set<String> = []
    /// Whether this client's own recent sync must be written whatever it would say (found damaged or older).
    private var rewritesOwnRecentSync = false
    var report = SyncReport()
    /// The ledger, read once per sync and kept current as sets are applied: reading it (every set ever applied)
    /// at each step made a sync cost what exists rather than what is new.
    private var ledger: AppliedChangeSets?

    /// An operation ready to ``run()``; see the properties for each argument.
    ///
    /// `resolver` settles conflicts (`nil`, or a `nil` answer, lets the last writer win).
    public init(context: DocumentOperationContext, integrityKey: String, store: any ModelAdapter,
                resolver: (@Sendable (SyncConflict) async -> ConflictResolution?)?) {
        self.context = context
        self.integrityKey = integrityKey
        self.store = store
        self.resolver = resolver
    }

    /// The operation `standard` is, for a backend subclass to run with its own steps: the same context, store,
    /// resolver and settings, so that nothing the manager set is lost.
    public init(copying standard: SynchronizationOperation) {
        context = standard.context
        integrityKey = standard.integrityKey
        store = standard.store
        resolver = standard.resolver
        partByteLimit = standard.partByteLimit
        isReadOnly = standard.isReadOnly
        checksOwnWholeStore = standard.checksOwnWholeStore
        deletionFailSafe = standard.deletionFailSafe
        confirmMassDeletion = standard.confirmMassDeletion
    }

    /// Runs one synchronization and reports what it did.
    public func run() async throws -> SyncReport {
        let started = Date()
        report = SyncReport()
        ledger = nil
        downloaded = [:]
        notYetVisible = []
        unreadable = []
        rewritesOwnRecentSync = false
        for directory in [localLayout.stagedSyncChangesDirectory, localLayout.downloadsDirectory] {
            try LocalFiles.createDirectory(directory)
        }
        let lock = try await FileLock.acquire(localLayout.syncLockFile)
        defer { lock.release() }
        // What a failed sync downloaded is downloaded again if needed: the helper folder does not grow with failures.
        for name in (try? FileManager.default.contentsOfDirectory(atPath: localLayout.downloadsDirectory.path)) ?? [] {
            try? FileManager.default.removeItem(at: localLayout.downloadsDirectory.appendingPathComponent(name))
        }
        // No prescan outlives the sync (one of a set never applied may still be reading its file).
        defer { for set in downloaded.values { set.prescan.wait() } }
        localLayout.attachmentStore.removeStaleTemporaries(now: Date())   // file dates are the wall clock, not the sync clock

        emit(.phase(.checkingIntegrity))
        try await checkIntegrityKey()
        var state = try store.loadSyncState()
        // What the local changes were made after: they are staged once this sync's sets are applied, but they do
        // not depend on those (a set of a newer format parked here must not hold them back at every reader).
        let dependencies = try acknowledgement()
        try Task.checkCancellation()

        emit(.phase(.findingRemoteChanges))
        let (available, ownRecentSyncExists) = try await findNewChangeSets(&state)
        if !isReadOnly && !ownRecentSyncExists {
            // Our marker is gone (or this is our first sync): an operator or an expiry may have deleted this client.
            // Checked even when this client never published: a client that only reads must notice too.
            report.remoteRequests += 1
            if try await isDeleted() {
                throw FolderSyncError(.clientDeleted, "this client was deleted from document \(documentIdentifier)",
                                      path: layout.deletedClientFile(documentIdentifier, client: clientIdentifier).description)
            }
        }

        // A mass deletion the app declines stops applying, not publishing: this client's own changes still go out
        // (another client's legitimate mass delete must not silence this one), then the sync ends with the error.
        var declined: FolderSyncError?
        emit(.phase(.applyingRemoteChanges))
        var waiting = try await applyUnlessDeclined(available, declined: &declined)
        if !notYetVisible.isEmpty && declined == nil {
            // A set a marker named or a listing showed is not there (reads lagging behind writes, or vacuumed): its
            // client's folder is listed again, so that a gap is seen and a whole store fetched if need be.
            let listing = notYetVisible
            notYetVisible = []
            let (listed, _) = try await findNewChangeSets(&state, listing: listing)
            // The new listing holds every set still unapplied, so only this pass's leftovers are waiting.
            waiting = try await applyUnlessDeclined(listed, declined: &declined)
        }
        for left in waiting where !unreadable.contains(left.client) {
            report.warnings.append(SyncWarning(kind: .changeSetWaiting,
                message: "waiting for change sets it depends on to become visible", path: left.path.description))
        }
        if let after = state.ownChangeSetsToReapplyAfter,
           (try acknowledgement()[clientIdentifier] ?? after) >= state.publishedSequence {
            state.ownChangeSetsToReapplyAfter = nil
        }
        if isReadOnly {
            report.duration = Date().timeIntervalSince(started)
            if let declined { throw declined }
            return report
        }
        emit(.phase(.stagingLocalChanges))
        if try store.hasUnpublishedChanges() {
            state = try store.loadSyncState().merging(known: state)
            try stageLocalChanges(&state, dependencies: dependencies)
        }

        emit(.phase(.publishingLocalChanges))
        state = try store.loadSyncState().merging(known: state)
        try await publishStagedChangeSets(&state)

        // Also when an earlier sync published or applied but failed to write the marker (found by the simulator
        // under faults: a set published then never announced stayed invisible to every other client).
        let acknowledgement = try acknowledgement()
        // The heartbeat: an idle sync says it is alive once an hour, so that "last sync" means last sync.
        let heartbeatDue = state.announcedAt.map { environment.now().timeIntervalSince($0) >= RecentSync.heartbeatInterval } ?? true
        if heartbeatDue || checksOwnWholeStore, state.ownWholeStoreTag != nil { try await checkOwnWholeStore(&state) }
        if !ownRecentSyncExists || state.announcedSequence != state.publishedSequence || state.announcedAcknowledgement != acknowledgement
            || heartbeatDue || rewritesOwnRecentSync {
            emit(.phase(.writingRecentSync))
            state.announcedAt = try await writeOwnRecentSync(state, acknowledgement: acknowledgement)
            // The tag of what was just written: the marker is read back only once someone else changed it.
            state.ownRecentSyncEtag = try await fetchOwnRecentSyncVersionTag()
            report.remoteRequests += 1
            state.announcedSequence = state.publishedSequence
            state.announcedAcknowledgement = acknowledgement
        }
        // Saving is a write transaction (fsyncs): an idle sync that learned nothing skips it.
        if try state != store.loadSyncState() { try store.saveSyncState(state) }
        report.duration = Date().timeIntervalSince(started)
        if let declined { throw declined }
        emit(.phase(.finished))
        return report
    }

    /// Applies `available` unless a mass deletion among them is declined (``checkMassDeletion(_:)``), which is
    /// kept in `declined` and leaves every set unapplied. Returns the sets left waiting.
    private func applyUnlessDeclined(_ available: [Available], declined: inout FolderSyncError?) async throws -> [Available] {
        do {
            if !isReadOnly { try await checkMassDeletion(available) }
        } catch let error as FolderSyncError where error.code == .massDeletionDeclined {
            declined = error
            return []
        }
        return try await applyInCausalOrder(available)
    }

    /// Checks, without changing anything, that this client may still change its local data from this remote:
    /// the document has its integrity key and the client is not deleted. Whole-store installs and uploads run
    /// outside ``run()``, so they check first: a store of another epoch, or installed on a deleted client, would
    /// change local data before the reset is noticed.
    func checkStillRegistered() async throws {
        try await checkIntegrityKey()
        if try await isDeleted() {
            throw FolderSyncError(.clientDeleted, "this client was deleted from document \(documentIdentifier)",
                                  path: layout.deletedClientFile(documentIdentifier, client: clientIdentifier).description)
        }
    }

    // MARK: Steps of the algorithm

    /// Whether this client was deleted from the document: a deletion marker exists, opens, and names this client
    /// (``DeletedClientInfo/verify(_:deleted:path:)``). One that does not open is ignored with a warning.
    private func isDeleted() async throws -> Bool {
        guard try await deletedClientMarkerExists() else { return false }
        let path = layout.deletedClientFile(documentIdentifier, client: clientIdentifier).description
        do {
            guard let data = try await fetchDeletedClientMarker() else { return false }
            try DeletedClientInfo.verify(data, deleted: clientIdentifier, path: path)
            return true
        } catch let error as FolderSyncError where error.isDamagedFile {
            report.warnings.append(SyncWarning(kind: .unreadableFile,
                message: "ignored a deletion marker that does not open (\(error.message)): this client is not deleted", path: path))
            return false
        }
    }

    private func checkIntegrityKey() async throws {
        let keys = try await fetchIntegrityKeys()
        report.remoteRequests += 1
        guard !keys.contains(integrityKey) else { return }
        // A listing can lag behind the folder (NFS attribute caching, eventually consistent stores): before
        // declaring the remote replaced, ask for the key file itself (found by the simulator under faults).
        report.remoteRequests += 1
        if try await integrityKeyExists() { return }
        if keys.isEmpty, try await !applicationTreeExists() {
            // Not a wipe: the application's folder is not there at all. An unmounted share is an empty folder.
            throw FolderSyncError.applicationFolderAway(layout)
        }
        if keys.isEmpty, let marker = try await fetchDeletedDocumentMarker() {
            report.remoteRequests += 1
            let path = layout.deletedDocumentFile(documentIdentifier).description
            let deletedBy = (try? PropertyListFile.decode(DeletedDocumentInfo.self, from: marker, path: path))
                .map { " by client \($0.deletedByClient)" } ?? ""
            throw FolderSyncError(.documentDeleted, "document \(documentIdentifier) was deleted\(deletedBy)", path: path)
        }
        throw FolderSyncError(.integrityKeyMismatch,
                              keys.isEmpty ? "the remote document is gone (wiped or replaced)"
                                           : "the remote document has integrity key \(keys.sorted().joined(separator: ", ")), this store belongs to \(integrityKey)",
                              path: layout.integrityKeyDirectory(documentIdentifier).description)
    }

    private func stageLocalChanges(_ state: inout LocalSyncState, dependencies: [String: Int64]) throws {
        let directory = localLayout.stagedSyncChangesDirectory
        // A file numbered at or past the next sequence was written by a staging that never committed.
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            if let parsed = RemoteLayout.parseChangeSetFileName(name), parsed.sequence >= state.nextSequence {
                try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
            } else if TemporaryName.isTemporary(name) {
                try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
            }
        }
        let splitter = ChangeSetSplitter(
            clientIdentifier: clientIdentifier, schemaVersion: store.schemaVersion, firstSequence: state.nextSequence,
            createdAt: environment.now(), dependencies: dependencies, partByteLimit: partByteLimit) { sequence in
                let identifier = self.environment.makeIdentifier()
                let name = RemoteLayout.changeSetFileName(sequence: sequence, changeSetIdentifier: identifier)
                return .init(url: directory.appendingPathComponent(name), changeSetIdentifier: identifier)
            }
        var parts: [ChangeSetSplitter.Part] = []
        var referencesAttachments = false
        // Encoding, compressing and writing run on a thread of their own while the store reads the next changes.
        let writer = BackgroundBatchConsumer<SyncChange> { changes in
            for change in changes {
                let stored = try self.storingLargeValues(of: change)
                if !referencesAttachments, stored.referencesAttachment { referencesAttachments = true }
                try splitter.append(stored)
            }
        }
        defer { writer.abandon() }   // after a failure, or when there was nothing to stage
        let count = try store.stageChanges(sequence: state.nextSequence, emit: writer.add, seal: {
            try writer.finish()
            parts = try splitter.finish()
            LocalFiles.syncDirectory(directory.path)
            return parts.last?.header.sequence ?? state.nextSequence
        })
        if count > 0, let last = parts.last {
            if !referencesAttachments { stagedWithoutAttachments.formUnion(parts.map(\.url.lastPathComponent)) }
            state.nextSequence = last.header.sequence + 1
            environment.logger.debug("Staged \(count) changes in \(parts.count) change set(s) up to \(last.header.sequence)")
        }
    }

    private func appliedChangeSets() throws -> AppliedChangeSets {
        if let ledger { return ledger }
        let read = try store.appliedChangeSets()
        ledger = read
        return read
    }

    /// Per client, the highest sequence up to which every change set is in the ledger.
    private func acknowledgement() throws -> [String: Int64] {
        try appliedChangeSets().contiguous
    }

    private struct Available {
        var client: String
        var sequence: Int64
        var name: String
        var path: RemotePath
        /// Named by its client's marker rather than seen in a listing: the remote may not show it yet.
        var announced = false
    }

    /// Finds the change sets this client has not applied: from the markers in `RecentSyncs/`, reading only those
    /// whose version tag changed, and listing only the folders of clients with news their marker does not name.
    ///
    /// Clients without a marker (deleted, expired) are found too, from what this client knew of them, from the
    /// acknowledgements in other markers, and once after each fresh start from a listing of `SyncChanges/`:
    /// their folders are listed until everything they published is applied.
    /// - Parameter listing: clients whose folder is listed even when their marker names every set they have new.
    private func findNewChangeSets(_ state: inout LocalSyncState, listing: Set<String> = []) async throws -> ([Available], ownRecentSyncExists: Bool) {
        let markers = try await fetchRecentSyncListing()
        report.remoteRequests += 1
        let ownMarker = markers.first { $0.kind == .file && $0.name == RemoteLayout.recentSyncFileName(client: clientIdentifier) }
        if let ownMarker {
            try await checkOwnHistory(ownMarker, &state)
        } else if !isReadOnly, state.publishedSequence > 0 {
            // Gone although this client published: deleted (checked next), or a folder restored to before its first marker.
            try await checkOwnChangeSets(after: 0, &state)
        }
        let applied = try appliedChangeSets()
        let acknowledged = try acknowledgement()
        var clientsWithNews: [String] = []
        var listedInstead = Set<String>()
        var withMarkers = Set<String>()
        for item in markers where item.kind == .file && !TemporaryName.isTemporary(item.name) {
            guard let client = RemoteLayout.parseRecentSyncFileName(item.name) else {
                warnUnknown(layout.recentSyncsDirectory(documentIdentifier).appending(item.name))
                continue
            }
            withMarkers.insert(client)
            if client == clientIdentifier { continue }
            var known = state.knownRecentSyncs[client]
            if known == nil || item.etag == nil || known?.etag != item.etag {
                let recent: RecentSync?
                do {
                    recent = try await readRecentSync(client: client)
                } catch let error as FolderSyncError where error.isDamagedFile || error.code == .unsupportedFormatVersion {
                    // Its folder is listed instead: what the marker would have said is what the folder holds.
                    warnUnreadable(error, "the recent sync of client \(client)")
                    clientsWithNews.append(client)
                    listedInstead.insert(client)
                    continue
                }
                guard let recent else { continue }
                for (other, sequence) in recent.acknowledgement where other != client && other != clientIdentifier {
                    state.acknowledgedByOthers[other] = max(state.acknowledgedByOthers[other] ?? 0, sequence)
                }
                if let previous = known, recent.publishedSequence < previous.publishedSequence {
                    // A marker never goes back: this one is an older copy (a restored folder, a provider rolling it
                    // back). What was seen stays known, and the folder is listed for what the marker no longer says.
                    report.warnings.append(SyncWarning(kind: .staleRecentSync,
                        message: "client \(client)'s recent sync says it published up to \(recent.publishedSequence), "
                                 + "where it said \(previous.publishedSequence) before; the older copy is ignored",
                        path: layout.recentSyncFile(documentIdentifier, client: client).description))
                    known?.etag = item.etag
                    clientsWithNews.append(client)
                    listedInstead.insert(client)
                } else {
                    known = .init(etag: item.etag, publishedSequence: recent.publishedSequence, recentChangeSets: recent.recentChangeSets)
                }
                state.knownRecentSyncs[client] = known
            }
            if let known, known.publishedSequence > (acknowledged[client] ?? 0) { clientsWithNews.append(client) }
        }
        if let after = state.ownChangeSetsToReapplyAfter, state.publishedSequence > after {
            clientsWithNews.append(clientIdentifier)
        }
        // Clients without a marker: those that others applied sets of, and, once after a fresh start, every
        // client with a folder in SyncChanges/.
        for (client, sequence) in state.acknowledgedByOthers where !withMarkers.contains(client) && sequence > (acknowledged[client] ?? 0) {
            let known = state.knownRecentSyncs[client]
            state.knownRecentSyncs[client] = .init(etag: nil, publishedSequence: max(known?.publishedSequence ?? 0, sequence))
        }
        if !state.hasListedClients && !isReadOnly {
            report.remoteRequests += 1
            for item in try await fetchClientsWithChangeSets() where item.kind == .directory && !withMarkers.contains(item.name)
                && state.knownRecentSyncs[item.name] == nil && DocumentInventory.isIdentifierName(item.name) {
                state.knownRecentSyncs[item.name] = .init(etag: nil, publishedSequence: 0)
            }
            state.hasListedClients = true
        }
        // A client whose marker vanished leaves its change sets until everyone applied them: its folder is listed
        // until everything it published (as far as anyone knows) is applied, then it is forgotten.
        let vanished = Set(state.knownRecentSyncs.keys.filter { $0 != clientIdentifier && !withMarkers.contains($0) })
        clientsWithNews += vanished
        var available: [Available] = []
        for client in Set(clientsWithNews).sorted() {
            let directory = layout.syncChangesDirectory(documentIdentifier, client: client)
            if client != clientIdentifier, !vanished.contains(client), !listing.contains(client), !listedInstead.contains(client),
               let announced = state.knownRecentSyncs[client]?.announcedChangeSets(after: acknowledged[client] ?? 0) {
                // Its marker names every set this client lacks: no listing of a folder of any size.
                for (sequence, name) in announced where !applied.contains(sequence, of: client) {
                    available.append(Available(client: client, sequence: sequence, name: name, path: directory.appending(name), announced: true))
                }
                continue
            }
            let listing = try await fetchChangeSetListing(client: client)
            report.remoteRequests += 1
            var names: [Int64: String] = [:]
            for item in listing where item.kind == .file {
                guard let parsed = RemoteLayout.parseChangeSetFileName(item.name) else {
                    if !TemporaryName.isTemporary(item.name) { warnUnknown(directory.appending(item.name)) }
                    continue
                }
                if let other = names.updateValue(item.name, forKey: parsed.sequence) {
                    report.warnings.append(SyncWarning(kind: .duplicateSequence,
                        message: "client \(client) published two change sets numbered \(parsed.sequence) (\(other) and \(item.name)); "
                                 + "only one can be applied", path: directory.appending(item.name).description))
                    continue
                }
                guard !applied.contains(parsed.sequence, of: client) else { continue }
                if client == clientIdentifier && parsed.sequence > state.publishedSequence { continue }
                available.append(Available(client: client, sequence: parsed.sequence, name: item.name, path: directory.appending(item.name)))
            }
            let next = (acknowledged[client] ?? 0) + 1
            let present = Set(available.filter { $0.client == client }.map(\.sequence))
            let published = client == clientIdentifier ? state.publishedSequence : state.knownRecentSyncs[client]?.publishedSequence ?? 0
            if vanished.contains(client) && present.isEmpty && published < next {
                // Everything it published, as far as anyone knows, is applied: forget it. A listing that lags
                // behind cannot make it forgotten early: its published sequence says what must be applied first.
                state.knownRecentSyncs[client] = nil
            } else if published >= next, !present.contains(next), present.min().map({ $0 > next }) ?? true {
                // The next set this client needs is gone: vacuum removed it, so only a whole store has its changes.
                report.missingChangeSets[client] = next
            }
        }
        return (available.sorted { ($0.client, $0.sequence) < ($1.client, $1.sequence) }, ownMarker != nil)
    }

    /// Reads this client's own recent sync back when its version tag changed since it was last read (after each of
    /// this client's writes, once), to find a store or a folder that went back in time:
    /// - the marker says more was published than the store knows: the store was restored from an earlier copy. It
    ///   continues after the published sequence (``ModelAdapter/continueAfterRestore(remotePublishedSequence:localClient:)``),
    ///   its own sets in between come back from the remote, and nothing is ever numbered twice;
    /// - the marker says less: the folder was restored from an older copy, or the marker rolled back. The marker is
    ///   written again, and when this client's own sets are gone from the folder, it owes a whole store that
    ///   covers them (uploaded by the manager after this sync), so that the folder heals.
    private func checkOwnHistory(_ item: RemoteItem, _ state: inout LocalSyncState) async throws {
        guard !isReadOnly, item.etag == nil || item.etag != state.ownRecentSyncEtag else { return }
        let path = layout.recentSyncFile(documentIdentifier, client: clientIdentifier).description
        let recent: RecentSync
        do {
            guard let read = try await readRecentSync(client: clientIdentifier) else { return }
            recent = read
        } catch let error as FolderSyncError where error.isDamagedFile || error.code == .unsupportedFormatVersion {
            warnUnreadable(error, "this client's own recent sync")
            rewritesOwnRecentSync = true
            return
        }
        state.ownRecentSyncEtag = item.etag
        if recent.publishedSequence > state.publishedSequence {
            let restoredAt = state.publishedSequence
            try store.continueAfterRestore(remotePublishedSequence: recent.publishedSequence, localClient: clientIdentifier)
            ledger = nil
            let continued = try store.loadSyncState()
            state.nextSequence = continued.nextSequence
            state.publishedSequence = continued.publishedSequence
            state.ownChangeSetsToReapplyAfter = continued.ownChangeSetsToReapplyAfter
            state.recentlyPublished = continued.recentlyPublished
            state.announcedSequence = continued.announcedSequence
            // Sets staged under numbers the remote already gave to other changes: their changes are pending again.
            let staged = localLayout.stagedSyncChangesDirectory
            for name in (try? FileManager.default.contentsOfDirectory(atPath: staged.path)) ?? []
            where (RemoteLayout.parseChangeSetFileName(name)?.sequence ?? 0) > restoredAt {
                try? FileManager.default.removeItem(at: staged.appendingPathComponent(name))
            }
            report.warnings.append(SyncWarning(kind: .restoredStore,
                message: "this store was restored from an earlier copy: the remote holds this client's change sets up to "
                         + "\(recent.publishedSequence), the store knew only up to \(restoredAt); it continues after "
                         + "\(recent.publishedSequence) and applies its own sets in between from the remote", path: path))
        } else if recent.publishedSequence < state.publishedSequence {
            try await checkOwnChangeSets(after: recent.publishedSequence, &state)
        }
    }

    /// Looks at this client's whole store, once per launch and with the heartbeat (one request): one changed since
    /// this client uploaded it (damaged, or put back from an older copy) is not trusted to cover anything, and a new
    /// one is owed. One that is gone was removed by a vacuum, because another store covers more, and is forgotten;
    /// unless no store is left at all (an operator quarantined it): then a new one is owed too.
    private func checkOwnWholeStore(_ state: inout LocalSyncState) async throws {
        let tag = try await fetchOwnWholeStoreVersionTag()
        report.remoteRequests += 1
        guard tag != state.ownWholeStoreTag else { return }
        state.ownWholeStoreTag = nil
        if tag == nil {
            report.remoteRequests += 1
            guard try await fetchWholeStoreClients().isEmpty else { return }
        }
        state.owesWholeStore = true
        report.warnings.append(SyncWarning(kind: .wholeStoreUnusable,
            message: "this client's whole store " + (tag == nil ? "is gone and no other is left" : "changed since it uploaded it (damaged, or put back from an older copy)")
                     + ": a new one is uploaded",
            path: layout.wholeStoreFile(documentIdentifier, client: clientIdentifier).description))
    }

    /// This client's marker on the remote says it published only up to `sequence` (or there is none), less than it
    /// did: the folder or the file was restored from an older copy. The marker is written again; when some of its
    /// change sets after `sequence` are gone from the folder, this client owes a whole store that covers them.
    private func checkOwnChangeSets(after sequence: Int64, _ state: inout LocalSyncState) async throws {
        rewritesOwnRecentSync = true
        let listing = try await fetchChangeSetListing(client: clientIdentifier)
        report.remoteRequests += 1
        let present = Set(listing.compactMap { RemoteLayout.parseChangeSetFileName($0.name)?.sequence })
        let lost = (sequence + 1...state.publishedSequence).filter { !present.contains($0) }
        if !lost.isEmpty { state.owesWholeStore = true }
        report.warnings.append(SyncWarning(kind: .staleRecentSync,
            message: "this client's recent sync on the remote says it published up to \(sequence), where it published up to "
                     + "\(state.publishedSequence) (the folder or the file was restored from an older copy); it is written again"
                     + (lost.isEmpty ? "" : ", and \(lost.count) of its change sets are gone from the folder: a whole store that covers them is uploaded"),
            path: layout.recentSyncFile(documentIdentifier, client: clientIdentifier).description))
    }

    /// Reports a file another client wrote that this sync cannot use.
    private func warnUnreadable(_ error: FolderSyncError, _ what: String) {
        report.warnings.append(SyncWarning(kind: .unreadableFile,
            message: "\(what) cannot be used (\(error.message)); the sync went on without it", path: error.path))
    }

    private func warnUnknown(_ path: RemotePath) {
        report.warnings.append(SyncWarning(kind: .unknownFile, message: "ignored a file the layout does not know", path: path.description))
    }

    /// Downloads and applies change sets so that each set comes after the sets its author had applied when writing it.
    /// Returns the sets left waiting for others (parked ones aside).
    private func applyInCausalOrder(_ available: [Available]) async throws -> [Available] {
        var pending = available
        var ledger = try acknowledgement()
        var parkedClients = Set<String>()
        var index = 0
        var progress = true
        while progress && !pending.isEmpty {
            progress = false
            var applied = Set<Int>()
            for (position, candidate) in pending.enumerated() {
                try Task.checkCancellation()
                guard !parkedClients.contains(candidate.client), !unreadable.contains(candidate.client),
                      (ledger[candidate.client] ?? 0) == candidate.sequence - 1 else { continue }
                guard let set = try await downloadOnce(candidate) else { continue }
                let header = set.header
                if header.schemaVersion > store.schemaVersion {
                    parkedClients.insert(candidate.client)
                    report.parkedChangeSets.append(candidate.path.description)
                    report.warnings.append(SyncWarning(kind: .changeSetParked,
                        message: "change set uses schema version \(header.schemaVersion); this app has \(store.schemaVersion)",
                        path: candidate.path.description))
                    continue
                }
                let missing = header.dependencies.filter { client, sequence in
                    client != clientIdentifier && client != candidate.client && (ledger[client] ?? 0) < sequence
                }
                guard missing.isEmpty else { continue }
                index += 1
                emit(.applyingChangeSet(index: index, count: available.count, changes: header.changeCount))
                guard let found = try await prescan(candidate) else { continue }
                try await apply(downloaded[candidate.path.description] ?? set, prescan: found, path: candidate.path)
                try? FileManager.default.removeItem(at: set.url)
                ledger[candidate.client] = candidate.sequence
                applied.insert(position)
                progress = true
            }
            // Removed after the pass: removing each set as it was applied made a catch-up quadratic.
            pending = pending.enumerated().filter { !applied.contains($0.offset) }.map(\.element)
        }
        return pending.filter { !parkedClients.contains($0.client) }
    }

    /// Before applying anything: when the change sets about to be applied would delete more rows than the
    /// fail-safe allows, asks the app, and stops the sync with the local store untouched unless it agrees.
    private func checkMassDeletion(_ available: [Available]) async throws {
        guard let failSafe = deletionFailSafe, !available.isEmpty else { return }
        var streams: [ChangeStream] = [], paths: [String] = [], changes = 0
        // Every set downloaded first, so that their prescans run while the next ones download.
        var sets: [(Available, Downloaded)] = []
        for candidate in available {
            if let set = try await downloadOnce(candidate) { sets.append((candidate, set)) }
        }
        for (candidate, set) in sets {
            // Only deletes can trip it: a set without one is not read again, and in one with, the other records
            // are skipped, not decoded.
            // Parked, damaged, or without a delete.
            guard set.header.schemaVersion <= store.schemaVersion, try await prescan(candidate)?.deletes == true else { continue }
            changes += set.header.changeCount
            paths.append(candidate.path.description)
            let url = set.url
            streams.append { body in try ChangeSetReader.forEachChange(at: url, path: candidate.path.description, selecting: .deletes, body) }
        }
        guard failSafe.couldTrip(changes: changes) else { return }
        let deletion = MassDeletion(tables: try store.rowsDeleted(by: streams).filter(failSafe.trips), changeSets: paths)
        guard !deletion.tables.isEmpty else { return }
        if let confirm = confirmMassDeletion, await confirm(deletion) {
            environment.logger.notice("Applying a mass deletion the app confirmed: \(deletion)")
            report.confirmedMassDeletion = deletion
            return
        }
        throw FolderSyncError(.massDeletionDeclined,
                              "the sync would delete \(deletion) and the deletion was declined; nothing was applied",
                              path: layout.syncChangesDirectory(documentIdentifier).description)
    }

    /// Reads another client's recent-sync marker, or `nil` if it vanished.
    ///
    /// Markers are replaced at every sync; on servers whose replace is not atomic (WebDAV MOVE done as delete
    /// then rename) a read can catch one half written, so a damaged marker is read once more before it counts.
    private func readRecentSync(client: String) async throws -> RecentSync? {
        let path = layout.recentSyncFile(documentIdentifier, client: client).description
        for attempt in 1...2 {
            do {
                // Inside the retry: on an encrypted remote, a half-written file fails authentication as it is read.
                guard let data = try await fetchRecentSync(client: client) else { return nil }
                report.remoteRequests += 1
                report.bytesReceived += Int64(data.count)
                let recent = try PropertyListFile.decode(RecentSync.self, from: data, path: path)
                guard recent.clientIdentifier == client else {
                    throw FolderSyncError(.corruptFile, "the recent sync names client \(recent.clientIdentifier)", path: path)
                }
                return recent
            } catch let error as FolderSyncError where error.isDamagedFile && attempt == 1 {
                environment.logger.debug("Reading \(path) again: \(error)")
            }
        }
        return nil
    }

    /// The set's header and local copy, downloaded at most once per sync; `nil` when the remote does not have it:
    /// its marker announced it but reads lag behind writes, or a listing showed it and a vacuum removed it since
    /// (found by the kill torture). Its client's folder is then listed again (see ``run()``): a gap there fetches
    /// a whole store, as any vacuumed set does; otherwise the client waits for the next sync.
    private func downloadOnce(_ candidate: Available) async throws -> Downloaded? {
        if let done = downloaded[candidate.path.description] { return done }
        guard !notYetVisible.contains(candidate.client), !unreadable.contains(candidate.client) else { return nil }
        do {
            let done = try await download(candidate)
            downloaded[candidate.path.description] = done
            return done
        } catch let error as FolderSyncError where error.code == .remoteItemNotFound {
            notYetVisible.insert(candidate.client)
            return nil
        } catch let error as FolderSyncError where error.isDamagedFile {
            // This client's sets wait from this one on; the others go on.
            unreadable.insert(candidate.client)
            warnUnreadable(error, "change set \(candidate.sequence) of client \(candidate.client)")
            return nil
        } catch let error as FolderSyncError where error.code == .unsupportedFormatVersion {
            // A newer app's file: parked with its client's later sets, like a set of a newer schema.
            unreadable.insert(candidate.client)
            report.parkedChangeSets.append(candidate.path.description)
            report.warnings.append(SyncWarning(kind: .changeSetParked, message: error.message, path: candidate.path.description))
            return nil
        }
    }

    /// A change set downloaded and verified in this sync: its header, local copy and its prescan.
    private struct Downloaded {
        var header: ChangeSetHeader
        var url: URL
        /// Started when the set was downloaded; runs while the sync downloads or applies others.
        var prescan: BackgroundPrescan
    }

    /// What the set's prescan found, once it is done; `nil` when the set is damaged (its client then waits). A set
    /// the prescan finds damaged (a read that caught a replacement half done) is downloaded once more, as a damaged
    /// download is.
    private func prescan(_ candidate: Available) async throws -> ChangeSetPrescan? {
        let path = candidate.path.description
        guard let set = downloaded[path] else { throw FolderSyncError(.corruptFile, "the change set was not downloaded", path: path) }
        do {
            do {
                return try set.prescan.result()
            } catch let error as FolderSyncError where error.isDamagedFile {
                environment.logger.debug("Downloading \(candidate.path) again: \(error)")
                let again = try await download(candidate)
                downloaded[path] = again
                return try again.prescan.result()
            }
        } catch let error as FolderSyncError where error.isDamagedFile {
            unreadable.insert(candidate.client)
            warnUnreadable(FolderSyncError(.corruptFile, "the change set is damaged", path: path),
                           "change set \(candidate.sequence) of client \(candidate.client)")
            return nil
        }
    }

    private func download(_ candidate: Available) async throws -> Downloaded {
        let url = localLayout.downloadsDirectory.appendingPathComponent(candidate.name)
        var header: ChangeSetHeader?
        // A change set is written once, but re-published after a crash: a read can catch that replacement half
        // done on servers whose replace is not atomic, so a damaged download is fetched once more.
        for attempt in 1...2 where header == nil {
            do {
                try await downloadChangeSet(client: candidate.client, name: candidate.name, to: url)
                report.remoteRequests += 1
                let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int64) ?? 0
                report.bytesReceived += size
                emit(.transferred(sent: report.bytesSent, received: report.bytesReceived))
                header = try ChangeSetReader.verify(at: url, path: candidate.path.description)
            } catch let error as FolderSyncError where error.isDamagedFile && attempt == 1 {
                environment.logger.debug("Downloading \(candidate.path) again: \(error)")
            }
        }
        guard let header else { throw FolderSyncError(.corruptFile, "the change set is damaged", path: candidate.path.description) }
        let expected = RemoteLayout.parseChangeSetFileName(candidate.name)
        guard header.clientIdentifier == candidate.client, header.sequence == candidate.sequence,
              header.changeSetIdentifier == expected?.changeSetIdentifier else {
            try? FileManager.default.removeItem(at: url)
            throw FolderSyncError(.corruptFile, "the change set's header does not match its name and folder", path: candidate.path.description)
        }
        return Downloaded(header: header, url: url, prescan: BackgroundPrescan(changeSet: url, path: candidate.path.description))
    }

    /// A change set's changes, as ``ChangeSetReader/forEachChange(at:path:_:)`` delivers them, read (file, zlib,
    /// decoding) on a thread of their own a few hundred changes ahead of `body`: applying a large set costs what
    /// SQLite costs, not SQLite plus decoding.
    private static func forEachChangeReadingAhead(at url: URL, path: String, _ body: (SyncChange) throws -> Void) throws {
        try BatchHandoff<SyncChange>.run(produce: { handoff in
            var batch: [SyncChange] = []
            batch.reserveCapacity(readAheadBatchSize)
            try ChangeSetReader.forEachChange(at: url, path: path) { change in
                batch.append(change)
                guard batch.count == readAheadBatchSize else { return }
                try handoff.send(batch)
                batch.removeAll(keepingCapacity: true)
            }
            if !batch.isEmpty { try handoff.send(batch) }
        }, consume: { batch in
            for change in batch { try body(change) }
        })
    }

    private static let readAheadBatchSize = 256

    private func apply(_ set: Downloaded, prescan: ChangeSetPrescan, path: RemotePath) async throws {
        let header = set.header, url = set.url
        try await fetchAttachments(prescan.references)
        let newest = NewestTimestamp()
        let stream: ChangeStream = { body in
            try Self.forEachChangeReadingAhead(at: url, path: path.description) { change in
                newest.take(change)
                try body(try self.restoringLargeValues(of: change))
            }
        }
        var resolutions: [ColumnKey: ConflictResolution] = [:]
        if let resolver, try store.hasUnpublishedChanges() {
            for conflict in try store.conflicts(author: header.clientIdentifier, localClient: clientIdentifier, changes: stream) {
                if let answer = await resolver(conflict) { resolutions[conflict.key] = answer }
            }
        }
        let outcome = try store.apply(header, localClient: clientIdentifier, changes: stream, resolutions: resolutions)
        guard outcome.applied else { return }
        let now = environment.now()
        if newest.value > HybridLogicalClock.driftLimit(now: now) {
            let hours = Int((Double(newest.value.milliseconds) / 1000 - now.timeIntervalSince1970) / 3600)
            report.warnings.append(SyncWarning(kind: .clockSkew,
                message: "client \(header.clientIdentifier) stamped changes \(hours) hours ahead of this device's clock: the clock of one of "
                         + "the two is wrong, and its changes win or lose by the wrong time until it is fixed (they apply as stamped on every device)",
                path: path.description))
        }
        ledger?.insert(header.sequence, of: header.clientIdentifier)
        report.changeSetsApplied += 1
        report.changesApplied += outcome.changesApplied
        report.changesIgnored += outcome.changesIgnored
        report.conflicts += outcome.conflicts
        report.warnings += outcome.warnings
    }

    /// The newest timestamp of the changes a stream delivered (read on the stream's thread, then after it).
    private final class NewestTimestamp: @unchecked Sendable {
        private(set) var value = HybridTimestamp.zero
        func take(_ change: SyncChange) {
            for column in change.columns where column.timestamp > value { value = column.timestamp }
            if let deleted = change.deletionTimestamp, deleted > value { value = deleted }
        }
    }

    /// How many change sets a sync uploads at once.
    static let concurrentPublications = 4

    private func publishStagedChangeSets(_ state: inout LocalSyncState) async throws {
        let directory = localLayout.stagedSyncChangesDirectory
        var staged: [(String, Int64)] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            guard let sequence = RemoteLayout.parseChangeSetFileName(name)?.sequence, sequence < state.nextSequence else { continue }
            if sequence <= state.publishedSequence {
                // Published before a crash that came before this file's removal.
                try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
            } else {
                staged.append((name, sequence))
            }
        }
        staged.sort { $0.1 < $1.1 }
        guard let last = staged.last else { return }
        // Attachments first: the remote has what a set references before the set appears.
        for (name, _) in staged where !stagedWithoutAttachments.contains(name) {
            // Reading a set again only to find its attachments cost a third of publishing millions of changes.
            try await publishAttachments(referencedBy: directory.appendingPathComponent(name))
        }
        // A few uploads at a time: over HTTP each set waits for its PUT and MOVE round trips, not for bandwidth.
        // Readers apply a client's sets in sequence order whatever order they appear in, and learn of them from
        // the marker written once all are published.
        try await withThrowingTaskGroup(of: (ChangeSetHeader, Int64).self) { group in
            var next = staged.makeIterator()
            func publishNext() throws {
                guard let (name, _) = next.next() else { return }
                let url = directory.appendingPathComponent(name)
                let header = try ChangeSetReader.readHeader(at: url, path: url.path)
                let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int64) ?? 0
                group.addTask {
                    try Task.checkCancellation()
                    try await self.publishChangeSet(from: url, name: name)
                    return (header, size)
                }
            }
            for _ in 0..<Self.concurrentPublications { try publishNext() }
            while let (header, size) = try await group.next() {
                report.remoteRequests += 1
                report.changeSetsSent += 1
                report.changesSent += header.changeCount
                report.bytesSent += size
                emit(.transferred(sent: report.bytesSent, received: report.bytesReceived))
                try publishNext()
            }
        }
        try store.markPublished(throughSequence: last.1)
        state.publishedSequence = max(state.publishedSequence, last.1)
        state.recentlyPublished = Array((state.recentlyPublished + staged.map(\.0)).suffix(RecentSync.announcedChangeSetLimit))
        for (name, _) in staged { try? FileManager.default.removeItem(at: directory.appendingPathComponent(name)) }
    }

    /// Writes this client's marker; returns the date it holds.
    private func writeOwnRecentSync(_ state: LocalSyncState, acknowledgement: [String: Int64]) async throws -> Date {
        let recent = RecentSync(clientIdentifier: clientIdentifier, lastSyncDate: environment.now().wholeSeconds,
                                publishedSequence: state.publishedSequence, acknowledgement: acknowledgement,
                                schemaVersion: store.schemaVersion, recentChangeSets: state.recentlyPublished)
        let data = try PropertyListFile.encode(recent)
        try await writeRecentSync(data)
        report.remoteRequests += 1
        report.bytesSent += Int64(data.count)
        return recent.lastSyncDate
    }

    // MARK: Backend steps

    /// The names in `IntegrityKey/` (normally exactly one).
    open func fetchIntegrityKeys() async throws -> [String] {
        let items = try await fileSystem.contentsOfDirectoryIfPresent(at: layout.integrityKeyDirectory(documentIdentifier))
        return items.filter { $0.kind == .file && !$0.name.hasPrefix(".") }.map(\.name)
    }

    /// Whether the application's tree is there (its `FormatVersion.plist`), asked only when the document looks gone.
    open func applicationTreeExists() async throws -> Bool {
        try await fileSystem.exists(layout.formatVersionFile)
    }

    /// Whether `IntegrityKey/<this client's key>` exists, asked directly when a listing did not show it.
    open func integrityKeyExists() async throws -> Bool {
        try await fileSystem.exists(layout.integrityKeyFile(documentIdentifier, key: integrityKey))
    }

    /// Lists `RecentSyncs/` (one request; version tags tell which markers changed).
    open func fetchRecentSyncListing() async throws -> [RemoteItem] {
        try await fileSystem.contentsOfDirectoryIfPresent(at: layout.recentSyncsDirectory(documentIdentifier))
    }

    /// Reads another client's recent-sync marker, or `nil` if it vanished.
    open func fetchRecentSync(client: String) async throws -> Data? {
        try await fileSystem.readIfPresent(layout.recentSyncFile(documentIdentifier, client: client), maximumSize: PropertyListFile.maximumByteCount)
    }

    /// Lists `SyncChanges/`: one folder per client that registered with the document (once after a fresh start).
    open func fetchClientsWithChangeSets() async throws -> [RemoteItem] {
        try await fileSystem.contentsOfDirectoryIfPresent(at: layout.syncChangesDirectory(documentIdentifier))
    }

    /// Lists `WholeStore/`: one folder per client that has a whole store.
    open func fetchWholeStoreClients() async throws -> [RemoteItem] {
        try await fileSystem.contentsOfDirectoryIfPresent(at: layout.wholeStoreDirectory(documentIdentifier))
    }

    /// Lists one client's change sets.
    open func fetchChangeSetListing(client: String) async throws -> [RemoteItem] {
        try await fileSystem.contentsOfDirectoryIfPresent(at: layout.syncChangesDirectory(documentIdentifier, client: client))
    }

    /// Downloads one change set to a local file.
    open func downloadChangeSet(client: String, name: String, to url: URL) async throws {
        try await fileSystem.download(layout.syncChangesDirectory(documentIdentifier, client: client).appending(name), toLocalFile: url)
    }

    /// Publishes one of this client's change sets atomically under its final name. Called for up to four sets at
    /// once (their uploads overlap).
    open func publishChangeSet(from url: URL, name: String) async throws {
        try await fileSystem.upload(fromLocalFile: url, to: layout.syncChangesDirectory(documentIdentifier, client: clientIdentifier).appending(name))
    }

    /// The version tag of this client's own recent-sync marker, asked right after writing it; `nil` when the
    /// backend has none (the marker is then read back at every sync).
    open func fetchOwnRecentSyncVersionTag() async throws -> String? {
        try await fileSystem.item(at: layout.recentSyncFile(documentIdentifier, client: clientIdentifier))?.etag
    }

    /// The version tag of this client's whole store (`LocalSyncState.ownWholeStoreTag`); `nil` when there is none.
    open func fetchOwnWholeStoreVersionTag() async throws -> String? {
        try await fileSystem.item(at: layout.wholeStoreFile(documentIdentifier, client: clientIdentifier))?.wholeStoreTag
    }

    /// Replaces this client's recent-sync marker.
    open func writeRecentSync(_ data: Data) async throws {
        try await fileSystem.write(data, to: layout.recentSyncFile(documentIdentifier, client: clientIdentifier))
    }

    /// Reads `Information/DeletedDocuments/<document>.plist`, or `nil`; consulted only when the integrity key is gone.
    open func fetchDeletedDocumentMarker() async throws -> Data? {
        try await fileSystem.readIfPresent(layout.deletedDocumentFile(documentIdentifier), maximumSize: PropertyListFile.maximumByteCount)
    }

    /// Whether `DeletedClients/<this client>.plist` exists.
    open func deletedClientMarkerExists() async throws -> Bool {
        try await fileSystem.exists(layout.deletedClientFile(documentIdentifier, client: clientIdentifier))
    }

    /// Reads `DeletedClients/<this client>.plist`, or `nil`; asked only when ``deletedClientMarkerExists()`` found one.
    open func fetchDeletedClientMarker() async throws -> Data? {
        try await fileSystem.readIfPresent(layout.deletedClientFile(documentIdentifier, client: clientIdentifier),
                                           maximumSize: PropertyListFile.maximumByteCount)
    }
}

extension LocalSyncState {
    /// The store's state (sequences, which the store commits) with what this sync learned and decided.
    func merging(known other: LocalSyncState) -> LocalSyncState {
        var merged = self
        merged.knownRecentSyncs = other.knownRecentSyncs
        merged.ownChangeSetsToReapplyAfter = other.ownChangeSetsToReapplyAfter
        merged.ownRecentSyncEtag = other.ownRecentSyncEtag
        merged.owesWholeStore = other.owesWholeStore
        merged.acknowledgedByOthers = other.acknowledgedByOthers
        merged.hasListedClients = other.hasListedClients
        return merged
    }
}

extension LocalSyncState.KnownRecentSync {
    /// `(sequence, name)` of every set after `acknowledged` through the published sequence, when the marker named them
    /// all; `nil` otherwise (a marker from before announcements, or more new sets than it names): the folder is listed.
    func announcedChangeSets(after acknowledged: Int64) -> [(sequence: Int64, name: String)]? {
        guard let names = recentChangeSets, publishedSequence > acknowledged else { return nil }
        var bySequence: [Int64: String] = [:]
        for name in names {
            if let sequence = RemoteLayout.parseChangeSetFileName(name)?.sequence { bySequence[sequence] = name }
        }
        var announced: [(sequence: Int64, name: String)] = []
        for sequence in (acknowledged + 1)...publishedSequence {
            guard let name = bySequence[sequence] else { return nil }
            announced.append((sequence, name))
        }
        return announced
    }
}
