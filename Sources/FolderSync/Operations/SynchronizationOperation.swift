public import Foundation

/// One synchronization of a document: find and apply what other clients published, stage local changes,
/// publish, acknowledge.
///
/// The algorithm (``run()``) is fixed; the remote steps it calls are `open`,
/// each with a default on ``RemoteFileSystem``:
///
/// 1. Check that the remote document still has this client's integrity key.
/// 2. List `RecentSyncs/`; read only the markers whose version tag changed;
///    list only the change-set folders of clients that published something new
///    (and this client's own, with something to publish: a store restored from an
///    older copy must not number a new set as one already published).
/// 3. Download, verify and apply each new change set in one local transaction
///    with its ledger entry, in causal order, asking the conflict resolver first.
/// 4. Stage local changes, as the resolutions left them, into change sets under
///    their final names in the helper folder, durable before they are marked staged:
///    a local value the resolver rejected is no longer a change and never leaves.
/// 5. Publish staged sets (atomic write under the final name; publishing again
///    after a crash writes the same bytes under the same name; sets an earlier
///    sync staged go out as they are, since they may be on the remote already).
/// 6. Write `RecentSyncs/<client>.recentsync` with the acknowledgement: after the
///    sets, or with them when it carries them (small sets). A sync that only
///    applied writes it at most every ``SyncPolicy/acknowledgementDelay``.
///
/// An idle sync (nothing new anywhere) costs two listings and reads no change set. Over a wide-area link, a sync
/// that publishes one small set takes three round trips (the listings; the set and the marker written together,
/// PUT then MOVE on WebDAV), and one that applies it two (the listings; the marker, which carries the set).
///
/// The operation holds only what it was built with: its context, its store and its ``Options``, none of which
/// changes after it is made. What one run learns and changes is a value (`Run`) that ``run()`` creates and hands to
/// each phase, so that two runs share nothing and nothing must be reset.
///
/// This file holds ``run()`` and the backend steps; each phase is a file of its own:
/// `SynchronizationOperation+Discovery` (markers and listings), `+Download` (each set fetched once and verified;
/// how often a set is read, and why), `+Apply` (causal order, the deletion fail-safe, conflicts), `+Publish`
/// (staging, publishing, the marker), `+Attachments`.
///
/// `@unchecked Sendable`: an `open` class cannot be checked `Sendable`; its stored properties are all `let`s of
/// `Sendable` types, and a run's state is a local value of ``run()`` (see ``DocumentOperation``).
open class SynchronizationOperation: DocumentOperation, @unchecked Sendable {
    /// What a sync is asked to do, beside where it works: the integrity key, the conflict resolver, and the settings
    /// the manager derives for each sync. Set before the operation is made; a backend subclass built with
    /// ``SynchronizationOperation/init(copying:)`` receives the same value, so no setting is lost.
    public struct Options: Sendable {
        /// The integrity key this client registered with; a different remote key stops the sync.
        public var integrityKey: String
        /// Answers conflicts (the manager's resolver or delegate), or `nil` to let the last writer win.
        public var resolver: (@Sendable (SyncConflict) async -> ConflictResolution?)?

        /// Largest change set, before compression; larger batches are split into consecutive sets.
        var partByteLimit = ChangeSetSplitter.defaultPartByteLimit
        /// Only fetch and apply: stage, publish and write nothing (an operator's export reads a tree it must not
        /// change).
        var isReadOnly = false
        /// Whether this sync looks at this client's whole store whatever the heartbeat says (the first of a launch).
        var checksOwnWholeStore = false
        /// Whether a change set this client needs that is gone from its folder is looked for in the removed area
        /// (``changeSetsInRemovedArea(of:from:before:_:)``): set by the manager once no whole store filled the gap.
        var healsFromRemovedArea = false
        /// The next sequence of this client's store when the last sync of the launch that knew its numbers ended
        /// (`nil`: none did). A sync with something to publish lists this client's own change sets before numbering new
        /// ones (``checkOwnNumbers(in:_:_:)``) unless its store still numbers at or past it: a store goes back to an
        /// earlier copy while it is closed, or when the app copies a backup into it (its sequence goes back with it),
        /// and a listing costs what the folder holds.
        var ownNumbersKnownThrough: Int64?
        /// Whether this client's marker went with its deletion, which it re-joined from since: the marker's absence
        /// is then no sign of a folder restored from an older copy.
        var ownMarkerRemovedByDeletion = false
        /// This installation's identifier (``RecentSync/installation``), carried in the marker; `nil`: none is
        /// carried, and a shared identity is not looked for.
        var installation: String?
        /// Whether a marker carrying ``installation`` was written before this sync: a marker of this client found
        /// with another installation's identifier was then written by another installation since.
        var installationAnnounced = false
        /// Asks ``confirmMassDeletion`` before applying deletions that trip it (`nil`: never asks).
        var deletionFailSafe: DeletionFailSafe?
        /// The app's answer to a mass deletion; without one, a mass deletion is declined.
        var confirmMassDeletion: (@Sendable (MassDeletion) async -> Bool)?

        /// Options with the manager's defaults for every other setting.
        ///
        /// `resolver` settles conflicts (`nil`, or a `nil` answer, lets the last writer win).
        public init(integrityKey: String, resolver: (@Sendable (SyncConflict) async -> ConflictResolution?)? = nil) {
            self.integrityKey = integrityKey
            self.resolver = resolver
        }
    }

    /// What one run learns and changes, created by ``run()`` and handed to each phase: a value, so that what a
    /// phase changes is visible in its signature and no run sees another's.
    struct Run {
        var report = SyncReport()
        /// The ledger, read once per sync and kept current as sets are applied: reading it (every set ever applied)
        /// at each step would make a sync cost what exists rather than what is new.
        var ledger: AppliedChangeSets?
        /// What this sync learned of the remote before applying, when the store does not have it yet: saved in the
        /// transaction of the first set applied, so that a sync that only applies commits once (its end saves what
        /// changed after, when anything did).
        var unsavedKnowledge: LocalSyncState.RemoteKnowledge?
        /// Change sets downloaded and verified in this sync, by remote path.
        var downloaded: [String: Downloaded] = [:]
        /// The change sets the markers read in this sync carried, by client and file name
        /// (``RecentSync/changeSetContents``).
        var markerContents: [String: [String: Data]] = [:]
        /// Clients with a set their marker announced that the remote does not show (yet).
        var notYetVisible: Set<String> = []
        /// Clients with a file this sync could not use (a damaged marker or change set): reported once, and their
        /// sets from the damaged one on wait, while every other client's sync goes on (one client's file never stops
        /// others).
        var unreadable: Set<String> = []
        /// Whether this client's own recent sync must be written whatever it would say (found damaged or older).
        var rewritesOwnRecentSync = false
        /// Sets applied in this sync that took over columns of rows this client created and has not published, by
        /// author (the highest sequence): the inserts staged next leave those columns out, so they depend on these
        /// sets.
        var suppliersOfUnpublishedInserts: [String: Int64] = [:]
        /// Sets a constraint of the store refused in this sync, by remote path, with SQLite's words: they wait.
        var unmetConstraints: [String: String] = [:]
        /// Attachments this sync found on the remote or uploaded, so each is checked once.
        var attachmentsOnRemote = Set<String>()
        /// Large values this sync downloaded to apply, by SHA-256: scratch files in the downloads folder, removed
        /// when it ends.
        var fetchedValues: [String: URL] = [:]
        /// Change sets this sync staged with no attachment reference in them (seen as they were written), by file
        /// name: publishing them needs no scan for attachments. Sets staged by an earlier sync are scanned.
        var stagedWithoutAttachments = Set<String>()
        /// Whether this sync wrote a marker carrying ``Options/installation``.
        var announcedInstallation = false
        /// The store's next sequence when this sync ended, when it listed this client's sets or knew its numbers.
        var ownNumbersKnownAtEnd: Int64?
    }

    /// Where and as whom the operation works, the manager's policy, and where events go.
    public let context: DocumentOperationContext
    /// The local data synced: changes are staged from it and applied to it.
    public let store: any ModelAdapter
    /// The integrity key, the resolver and the sync's settings.
    public let options: Options

    /// The integrity key this client registered with; a different remote key stops the sync.
    public var integrityKey: String { options.integrityKey }
    /// Answers conflicts (the manager's resolver or delegate), or `nil` to let the last writer win.
    public var resolver: (@Sendable (SyncConflict) async -> ConflictResolution?)? { options.resolver }
    var partByteLimit: Int { options.partByteLimit }
    var isReadOnly: Bool { options.isReadOnly }
    var checksOwnWholeStore: Bool { options.checksOwnWholeStore }
    var healsFromRemovedArea: Bool { options.healsFromRemovedArea }
    var ownNumbersKnownThrough: Int64? { options.ownNumbersKnownThrough }
    var ownMarkerRemovedByDeletion: Bool { options.ownMarkerRemovedByDeletion }
    var installation: String? { options.installation }
    var installationAnnounced: Bool { options.installationAnnounced }
    var deletionFailSafe: DeletionFailSafe? { options.deletionFailSafe }
    var confirmMassDeletion: (@Sendable (MassDeletion) async -> Bool)? { options.confirmMassDeletion }

    /// An operation ready to ``run()``: it syncs `store` where `context` says, as `options` say.
    public init(context: DocumentOperationContext, store: any ModelAdapter, options: Options) {
        self.context = context
        self.store = store
        self.options = options
    }

    /// An operation ready to ``run()`` with the default settings; see ``Options`` for `integrityKey` and `resolver`.
    public convenience init(
        context: DocumentOperationContext, integrityKey: String, store: any ModelAdapter,
        resolver: (@Sendable (SyncConflict) async -> ConflictResolution?)?
    ) {
        self.init(context: context, store: store, options: Options(integrityKey: integrityKey, resolver: resolver))
    }

    /// The operation `standard` is, for a backend subclass to run with its own steps: the same context, store and
    /// options, so that nothing the manager set is lost.
    public init(copying standard: SynchronizationOperation) {
        context = standard.context
        store = standard.store
        options = standard.options
    }

    /// Runs one synchronization and reports what it did.
    public func run() async throws -> SyncReport {
        try await perform().report
    }

    /// Runs one synchronization and returns all it learned: the report, and what the manager keeps for the next
    /// sync of the launch (``Run/ownNumbersKnownAtEnd``, ``Run/announcedInstallation``).
    func perform() async throws -> Run {
        let started = Date()
        var run = Run()
        for directory in [localLayout.stagedSyncChangesDirectory, localLayout.downloadsDirectory] {
            try LocalFiles.createDirectory(directory)
        }
        let lock = try await FileLock.acquire(localLayout.syncLockFile)
        defer { lock.release() }
        // What a failed sync downloaded is downloaded again if needed: the helper folder does not grow with failures.
        for name in (try? FileManager.default.contentsOfDirectory(atPath: localLayout.downloadsDirectory.path)) ?? [] {
            try? FileManager.default.removeItem(at: localLayout.downloadsDirectory.appendingPathComponent(name))
        }
        // file dates are the wall clock, not the sync clock
        localLayout.attachmentStore.removeStaleTemporaries(now: Date())
        // Not a Result: a process's first Result of an error type costs a lookup of the type's conformance across
        // every loaded image.
        var failure: (any Error)?
        do { try await runPhases(started: started, &run) } catch { failure = error }
        for url in run.fetchedValues.values { try? FileManager.default.removeItem(at: url) }
        // No prescan outlives the sync (one of a set never applied may still be reading its file).
        for set in run.downloaded.values { await set.prescan.ended() }
        if let failure { throw failure }
        return run
    }

    /// The phases of ``run()``, under the sync lock.
    private func runPhases(started: Date, _ run: inout Run) async throws {
        emit(.phase(.checkingIntegrity))
        // The markers' listing goes out with the integrity key's (over a wide-area link each request is a round
        // trip); what it shows is used only once the key is found. So does the look at this client's whole store, when
        // this sync makes it, though its answer is used at the end.
        // The state's progress is the store's, read again after each store call that changes it; what it knows of
        // the remote is this sync's, saved once at the end.
        var state = try store.loadSyncState()
        let storedKnowledge = state.remote
        async let markerListing = fetchRecentSyncListing()
        let looksAtWholeStore = looksAtOwnWholeStore(state)
        async let wholeStoreTag: String?? = looksAtWholeStore ? fetchOwnWholeStoreVersionTag() : nil
        let numbersKnown = ownNumbersKnownThrough.map { state.progress.nextSequence >= $0 } ?? false
        let listsOwnSets = try !numbersKnown && listsOwnChangeSets(state)
        async let ownSets = listsOwnSets ? fetchChangeSetListing(client: clientIdentifier) : nil
        // This client's own marker, when it wrote one it has not read back since (a write answers no version tag on
        // every backend, and asking for it would be a round trip of the sync that wrote it): read with the listings.
        let readsOwnMarker = !isReadOnly && state.remote.ownRecentSyncEtag == nil && state.remote.announcedAt != nil
        async let ownMarker = readsOwnMarker ? loadRecentSync(client: clientIdentifier) : nil
        try await checkIntegrityKey(&run)
        // What the local changes were made after: they are staged once this sync's sets are applied, but they do
        // not depend on those (a set of a newer format parked here must not hold them back at every reader), but for
        // the sets that took over columns of a row this client created (``Run/suppliersOfUnpublishedInserts``).
        let dependencies = try acknowledgement(&run)
        try Task.checkCancellation()

        emit(.phase(.findingRemoteChanges))
        let markers = try await markerListing
        // Our marker is gone (or this is our first sync): an operator or an expiry may have deleted this client.
        // Checked even when this client never published: a client that only reads must notice too. Asked while the
        // changes are found, and answered before any is applied.
        let ownRecentSyncExists = ownRecentSync(in: markers) != nil
        let checksDeletion = !isReadOnly && !ownRecentSyncExists
        async let deletionMarker = checksDeletion ? readOwnDeletionMarker() : .read(nil)
        let available = try await findNewChangeSets(
            &state, markers: markers, ownSets: try await ownSets, ownMarker: await ownMarker, &run)
        if checksDeletion {
            run.report.remoteRequests += 1
            if try isDeleted(by: await deletionMarker, &run) {
                throw FolderSyncError(
                    .clientDeleted, "this client was deleted from document \(documentIdentifier)",
                    path: layout.deletedClientFile(documentIdentifier, client: clientIdentifier).description)
            }
        }

        // A mass deletion the app declines stops applying, not publishing: this client's own changes still go out
        // (another client's legitimate mass delete must not silence this one), then the sync ends with the error.
        var declined: FolderSyncError?
        emit(.phase(.applyingRemoteChanges))
        if !isReadOnly {
            // Saved with the first set applied. Not the version tag of this client's own marker when it was read back
            // in this sync: a marker that must be written again (found older, or claiming more than the store holds)
            // is read back until it was, so its tag is saved at the end, after the write.
            var learned = state.remote
            learned.ownRecentSyncEtag = storedKnowledge.ownRecentSyncEtag
            run.unsavedKnowledge = learned == storedKnowledge ? nil : learned
        }
        var waiting = try await applyUnlessDeclined(available, declined: &declined, &run)
        if !run.notYetVisible.isEmpty && declined == nil {
            // A set a marker named or a listing showed is not there (reads lagging behind writes, or vacuumed): its
            // client's folder is listed again, so that a gap is seen and a whole store fetched if need be.
            let listing = run.notYetVisible
            run.notYetVisible = []
            let listed = try await findNewChangeSets(&state, listing: listing, &run)
            // The new listing holds every set still unapplied, so only this pass's leftovers are waiting.
            waiting = try await applyUnlessDeclined(listed, declined: &declined, &run)
        }
        for left in waiting where !run.unreadable.contains(left.client) {
            let path = left.path.description
            run.report.warnings.append(
                run.unmetConstraints[path].map {
                    SyncWarning(
                        kind: .changeSetRefused,
                        message:
                            "this store refuses it as it stands (\($0)); it waits for the change sets that let it apply",
                        path: path)
                }
                    ?? SyncWarning(
                        kind: .changeSetWaiting, message: "waiting for change sets it depends on to become visible",
                        path: path))
        }
        if isReadOnly {
            run.report.duration = Date().timeIntervalSince(started)
            if let declined { throw declined }
            return
        }
        emit(.phase(.stagingLocalChanges))
        if try store.hasUnpublishedChanges() {
            let stated = dependencies.merging(run.suppliersOfUnpublishedInserts, uniquingKeysWith: max)
            try stageLocalChanges(&state, dependencies: stated, &run)
        }

        emit(.phase(.publishingLocalChanges))
        // This client's whole store, looked at before publishing: what it finds is for the manager, after this sync.
        let heartbeatDue = isHeartbeatDue(state)
        if heartbeatDue || checksOwnWholeStore, state.remote.ownWholeStoreTag != nil {
            let tag: String?
            if looksAtWholeStore, let asked = try await wholeStoreTag {
                tag = asked
            } else {
                tag = try await fetchOwnWholeStoreVersionTag()
            }
            try await checkOwnWholeStore(&state, tag: tag, &run)
        }
        // Also when an earlier sync published or applied but failed to write the marker: a set published and never
        // announced stays invisible to every other client.
        let acknowledgement = try acknowledgement(&run)
        let staged = try stagedChangeSets(state)
        // A client of an earlier epoch is awaited until its marker is in the folder.
        state.remote.awaitedClients.removeAll { state.remote.knownRecentSyncs[$0] != nil }
        let announces =
            !staged.isEmpty || !ownRecentSyncExists || run.rewritesOwnRecentSync || heartbeatDue
            || state.remote.announcedSequence != state.progress.publishedSequence
            || acknowledges(acknowledgement, state) || run.report.missingChangeSets != state.remote.announcedWaitingFor
            || state.remote.awaitedClients != state.remote.announcedAwaiting
        run.unsavedKnowledge = nil
        do {
            try await publish(staged, &state, announcing: announces ? acknowledgement : nil, &run)
        } catch let error as FolderSyncError
            where staged.isEmpty && (error.code == .permissionDenied || error.code == .remoteFull)
        {
            // A reader of a read-only or full share: what it applied stays applied; it says why it cannot acknowledge.
            run.report.warnings.append(
                SyncWarning(
                    kind: .acknowledgementNotWritten,
                    message:
                        "the shared folder refused this device's recent-sync marker (\(error.code): \(error.message)): "
                        + "other devices' changes were applied, but cannot be acknowledged until it accepts writes",
                    path: error.path))
        }
        // The whole-store policy's counters go with the rest (they had a write transaction, an fsync, of their own).
        countPublished(&state.remote, &run)
        // Saving is a write transaction (fsyncs): an idle sync that learned nothing skips it, and so does one that
        // saved it all with its last store write (a set applied, or its sets marked published with their marker).
        let learned = state.remote
        try store.updateRemoteKnowledge { $0 = learned }
        if numbersKnown || listsOwnSets { run.ownNumbersKnownAtEnd = state.progress.nextSequence }
        run.report.duration = Date().timeIntervalSince(started)
        if let declined { throw self.declined(declined, afterPublishing: run.report.changesSent) }
        emit(.phase(.finished))
    }

    /// Adds what this sync published to the whole-store policy's counters.
    func countPublished(_ remote: inout LocalSyncState.RemoteKnowledge, _ run: inout Run) {
        guard run.report.changeSetsSent > 0 else { return }
        remote.changeSetsSinceWholeStore += run.report.changeSetsSent
        remote.bytesSinceWholeStore += run.report.bytesSent - run.report.attachmentBytesSent
    }

    /// Checks, without changing anything, that this client may still change its local data from this remote:
    /// the document has its integrity key and the client is not deleted. Whole-store installs and uploads run
    /// outside ``run()``, so they check first: a store of another epoch, or installed on a deleted client, would
    /// change local data before the reset is noticed.
    func checkStillRegistered() async throws {
        var run = Run()  // what the check counts and warns of is no sync's
        try await checkIntegrityKey(&run)
        if try isDeleted(by: await readOwnDeletionMarker(), &run) {
            throw FolderSyncError(
                .clientDeleted, "this client was deleted from document \(documentIdentifier)",
                path: layout.deletedClientFile(documentIdentifier, client: clientIdentifier).description)
        }
    }

    /// The heartbeat: an idle sync says it is alive once an hour, so that "last sync" means last sync.
    private func isHeartbeatDue(_ state: LocalSyncState) -> Bool {
        isDue(state, after: RecentSync.heartbeatInterval)
    }

    /// Whether the marker was written `interval` or longer ago (or never).
    private func isDue(_ state: LocalSyncState, after interval: TimeInterval) -> Bool {
        state.remote.isDue(after: interval, now: environment.now())
    }

    /// Whether `acknowledgement` alone makes this sync rewrite the marker: at once when the marker claims more than
    /// the store holds (a store restored, or a whole store covering less installed: vacuum would remove what this
    /// client needs); what it applied since waits for ``SyncPolicy/acknowledgementDelay``.
    private func acknowledges(_ acknowledgement: [String: Int64], _ state: LocalSyncState) -> Bool {
        let announced = state.remote.announcedAcknowledgement
        guard announced != acknowledgement else { return false }
        if announced.contains(where: { $0.value > acknowledgement[$0.key] ?? 0 }) { return true }
        return isDue(state, after: context.policy.acknowledgementDelay)
    }

    /// Whether this sync looks at this client's whole store (``checkOwnWholeStore(_:tag:_:)``), as known when it
    /// starts.
    private func looksAtOwnWholeStore(_ state: LocalSyncState) -> Bool {
        !isReadOnly && (isHeartbeatDue(state) || checksOwnWholeStore) && state.remote.ownWholeStoreTag != nil
    }

    // MARK: Registration checks (the phases are in SynchronizationOperation+Discovery, +Download, +Apply, +Publish)
    /// What ``readOwnDeletionMarker()`` found: the marker's bytes (`nil` when there is none), or the damage that kept
    /// it from being read. An enum of its own, not a `Result` (see ``run()``).
    enum DeletionMarkerRead: Sendable {
        case read(Data?)
        case damaged(FolderSyncError)
    }

    /// This client's deletion marker when one exists, or the damage that kept it from being read. Only requests,
    /// touching nothing of the sync's, so that it can run beside the finding of changes.
    private func readOwnDeletionMarker() async throws -> DeletionMarkerRead {
        do {
            guard try await deletedClientMarkerExists() else { return .read(nil) }
            return .read(try await fetchDeletedClientMarker())
        } catch let error as FolderSyncError where error.isDamagedFile {
            return .damaged(error)
        }
    }

    /// Whether the marker ``readOwnDeletionMarker()`` read deletes this client: it exists, opens, and names this
    /// client (``DeletedClientInfo/verify(_:deleted:path:)``). One that does not open is ignored with a warning.
    private func isDeleted(by marker: DeletionMarkerRead, _ run: inout Run) throws -> Bool {
        let path = layout.deletedClientFile(documentIdentifier, client: clientIdentifier).description
        do {
            let data: Data
            switch marker {
            case .read(nil): return false
            case .read(let read?): data = read
            case .damaged(let error): throw error
            }
            try DeletedClientInfo.verify(data, deleted: clientIdentifier, path: path)
            return true
        } catch let error as FolderSyncError where error.isDamagedFile {
            run.report.warnings.append(
                SyncWarning(
                    kind: .unreadableFile,
                    message:
                        "ignored a deletion marker that does not open (\(error.message)): this client is not deleted",
                    path: path))
            return false
        }
    }

    private func checkIntegrityKey(_ run: inout Run) async throws {
        let keys = try await fetchIntegrityKeys()
        run.report.remoteRequests += 1
        guard !keys.contains(integrityKey) else { return }
        // A listing can lag behind the folder (NFS attribute caching, eventually consistent stores): before
        // declaring the remote replaced, ask for the key file itself.
        run.report.remoteRequests += 1
        if try await integrityKeyExists() { return }
        if keys.isEmpty, try await !applicationTreeExists() {
            // Not a wipe: the application's folder is not there at all. An unmounted share is an empty folder.
            throw FolderSyncError.applicationFolderAway(layout)
        }
        if keys.isEmpty, let marker = try await fetchDeletedDocumentMarker() {
            run.report.remoteRequests += 1
            let path = layout.deletedDocumentFile(documentIdentifier).description
            let deletedBy =
                (try? PropertyListFile.decode(DeletedDocumentInfo.self, from: marker, path: path))
                .map { " by client \($0.deletedByClient)" } ?? ""
            throw FolderSyncError(
                .documentDeleted, "document \(documentIdentifier) was deleted\(deletedBy)", path: path)
        }
        if keys.isEmpty, try await completesHalfCreatedDocument(&run) { return }
        throw FolderSyncError(
            .integrityKeyMismatch,
            keys.isEmpty
                ? "the remote document is gone (wiped or replaced)"
                : "the remote document has integrity key \(keys.sorted().joined(separator: ", ")), this store belongs to \(integrityKey)",
            path: layout.integrityKeyDirectory(documentIdentifier).description)
    }

    // MARK: Backend steps

    /// The names in `IntegrityKey/` (normally exactly one).
    open func fetchIntegrityKeys() async throws -> [String] {
        let items = try await fileSystem.contentsOfDirectoryIfPresent(
            at: layout.integrityKeyDirectory(documentIdentifier))
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

    /// Whether `IntegrityKey/` is there; asked only when it holds no key.
    open func integrityKeyDirectoryExists() async throws -> Bool {
        try await fileSystem.exists(layout.integrityKeyDirectory(documentIdentifier))
    }

    /// Reads `documentInfo.plist`, or `nil`; asked only when `IntegrityKey/` holds no key.
    open func fetchDocumentInfoFile() async throws -> Data? {
        try await fileSystem.readIfPresent(
            layout.documentInfoFile(documentIdentifier),
            maximumSize: PropertyListFile.maximumByteCount)
    }

    /// Writes `IntegrityKey/<key>` into a document whose creation stopped before it (the bytes its creator writes).
    open func writeIntegrityKeyFile(_ key: String) async throws {
        try await fileSystem.writeIntegrityKey(key, of: documentIdentifier, layout: layout)
    }

    /// Lists `RecentSyncs/` (one request; version tags tell which markers changed).
    open func fetchRecentSyncListing() async throws -> [RemoteItem] {
        try await fileSystem.contentsOfDirectoryIfPresent(at: layout.recentSyncsDirectory(documentIdentifier))
    }

    /// Reads another client's recent-sync marker, or `nil` if it vanished.
    open func fetchRecentSync(client: String) async throws -> Data? {
        try await fileSystem.readIfPresent(
            layout.recentSyncFile(documentIdentifier, client: client), maximumSize: PropertyListFile.maximumByteCount)
    }

    /// Lists `SyncChanges/`: one folder per client that registered with the document (once after a fresh start).
    /// Names and kinds only (``RemoteFileSystem/namesOfDirectory(at:)``).
    open func fetchClientsWithChangeSets() async throws -> [RemoteItem] {
        try await fileSystem.namesOfDirectoryIfPresent(at: layout.syncChangesDirectory(documentIdentifier))
    }

    /// Lists `WholeStore/`: one folder per client that has a whole store.
    open func fetchWholeStoreClients() async throws -> [RemoteItem] {
        try await fileSystem.contentsOfDirectoryIfPresent(at: layout.wholeStoreDirectory(documentIdentifier))
    }

    /// Reads a client's whole-store manifest, or `nil`; asked only when this client's own sets are missing from the
    /// folder.
    open func fetchWholeStoreManifest(client: String) async throws -> Data? {
        try await fileSystem.readIfPresent(
            layout.appliedSyncChangeSetsFile(documentIdentifier, client: client),
            maximumSize: PropertyListFile.maximumByteCount)
    }

    /// Lists one client's change sets: names and kinds only (``RemoteFileSystem/namesOfDirectory(at:)``; a publishing
    /// sync lists its own folder, which grows with every set it published, and a local folder's full listing cost a
    /// `stat` and a version tag per set).
    open func fetchChangeSetListing(client: String) async throws -> [RemoteItem] {
        try await fileSystem.namesOfDirectoryIfPresent(
            at: layout.syncChangesDirectory(documentIdentifier, client: client))
    }

    /// Downloads one change set to a local file.
    open func downloadChangeSet(client: String, name: String, to url: URL) async throws {
        try await fileSystem.download(
            layout.syncChangesDirectory(documentIdentifier, client: client).appending(name), toLocalFile: url)
    }

    /// Publishes one of this client's change sets atomically under its final name. Called for up to four sets at
    /// once (their uploads overlap).
    open func publishChangeSet(from url: URL, name: String) async throws {
        try await fileSystem.upload(
            fromLocalFile: url,
            to: layout.syncChangesDirectory(documentIdentifier, client: clientIdentifier).appending(name))
    }

    /// The version tag of this client's own recent-sync marker, asked right after a sync that published nothing
    /// wrote it; `nil` when the backend has none (the marker is then read back at every sync).
    open func fetchOwnRecentSyncVersionTag() async throws -> String? {
        try await fileSystem.item(at: layout.recentSyncFile(documentIdentifier, client: clientIdentifier))?.etag
    }

    /// The version tag of this client's whole store (`LocalSyncState.ownWholeStoreTag`); `nil` when there is none.
    open func fetchOwnWholeStoreVersionTag() async throws -> String? {
        try await fileSystem.item(at: layout.wholeStoreFile(documentIdentifier, client: clientIdentifier))?
            .wholeStoreTag
    }

    /// Replaces this client's recent-sync marker.
    open func writeRecentSync(_ data: Data) async throws {
        try await fileSystem.write(data, to: layout.recentSyncFile(documentIdentifier, client: clientIdentifier))
    }

    /// Reads `Information/DeletedDocuments/<document>.plist`, or `nil`; consulted only when the integrity key is gone.
    open func fetchDeletedDocumentMarker() async throws -> Data? {
        try await fileSystem.readIfPresent(
            layout.deletedDocumentFile(documentIdentifier), maximumSize: PropertyListFile.maximumByteCount)
    }

    /// Whether `DeletedClients/<this client>.plist` exists.
    open func deletedClientMarkerExists() async throws -> Bool {
        try await fileSystem.exists(layout.deletedClientFile(documentIdentifier, client: clientIdentifier))
    }

    /// Reads `DeletedClients/<this client>.plist`, or `nil`; asked only when ``deletedClientMarkerExists()`` found one.
    open func fetchDeletedClientMarker() async throws -> Data? {
        try await fileSystem.readIfPresent(
            layout.deletedClientFile(documentIdentifier, client: clientIdentifier),
            maximumSize: PropertyListFile.maximumByteCount)
    }
}

extension LocalSyncState.RemoteKnowledge {
    /// Whether this client's marker was written `interval` or longer before `now` (or never): its heartbeat is due
    /// after ``RecentSync/heartbeatInterval``.
    func isDue(after interval: TimeInterval, now: Date) -> Bool {
        announcedAt.map { now.timeIntervalSince($0) >= interval } ?? true
    }
}
