import Foundation
import GRDB

extension DocumentSyncManager {
    /// Synchronizes the document: publishes local changes and applies other clients' changes.
    ///
    /// Calls made while a sync runs are coalesced into one follow-up sync.
    /// Cancelling the calling task stops between change sets and leaves
    /// everything consistent: staged sets stay durable and are published by
    /// the next sync.
    /// - Throws: ``FolderSyncError/Code/notRegistered`` before registration,
    ///   ``FolderSyncError/Code/integrityKeyMismatch`` when the remote was reset (and, until ``rejoin()``
    ///   recovers, the reset the manager stopped on, even while it is not registered),
    ///   ``FolderSyncError/Code/corruptFile`` naming a damaged file (the local store is untouched), and others.
    @discardableResult
    public func synchronize() async throws -> SyncReport {
        try await coalescer.request { [self] in try await runSynchronization() }
    }

    /// A stream of progress events of every sync from now on. Finish iterating to unsubscribe.
    public func events() -> AsyncStream<SyncEvent> {
        let (stream, continuation) = AsyncStream<SyncEvent>.makeStream(bufferingPolicy: .bufferingNewest(256))
        let id = UUID()
        mutable.withLock { $0.eventContinuations[id] = continuation }
        continuation.onTermination = { [weak self] _ in self?.mutable.withLock { $0.eventContinuations[id] = nil } }
        return stream
    }

    func publish(_ event: SyncEvent) {
        for continuation in mutable.current.eventContinuations.values { continuation.yield(event) }
    }

    private func runSynchronization() async throws -> SyncReport {
        guard state == .ableToSync, let integrityKey else {
            throw notRegistered(before: "synchronizing it")
        }
        guard let store else {
            throw FolderSyncError(
                .invalidConfiguration, "document \(documentIdentifier) has no local store to synchronize")
        }
        await delegate?.documentSyncManagerDidBeginSynchronizing(self)
        syncStarted()
        store.synchronizationBegan()
        defer { store.synchronizationEnded() }
        do {
            let report = try await withRemote("synchronization failed") {
                try await synchronizeWithPolicy(integrityKey: integrityKey, store: store)
            }
            if !report.warnings.isEmpty {
                await delegate?.documentSyncManager(self, didEncounterWarnings: report.warnings)
            }
            syncEnded(.succeeded(report))
            await delegate?.documentSyncManager(self, didFinishSynchronizingWith: report)
            return report
        } catch {
            let error = FolderSyncError.wrapping(error, "synchronization failed")
            // A failed sync may have left temporaries in this client's folder, or stopped on a reset: the next lists
            // it.
            mutable.withLock { $0.ownNumbersKnownStore = nil }
            syncEnded(.failed(error))
            await delegate?.documentSyncManager(self, didFailToSynchronizeWithError: error)
            throw error
        }
    }

    /// Runs `body` against the remote, as every sync and whole-store transfer does.
    ///
    /// A remembered reset stops it before anything of the remote is read (and no new backup is made); a launch that
    /// came up offline registers with the remote first. An application folder found gone since this client registered
    /// makes it register again at once, which asks the app whether the remote was replaced (then it is a reset);
    /// otherwise the folder is ``FolderSyncError/Code/remoteUnavailable`` and the next call registers again first.
    /// A reset found on the way is backed up and remembered (``stopForReset(_:)``).
    ///
    /// A folder missing mid-task is told apart the same way: with the application's tree gone too (a share unmounted
    /// or emptied, a server restarted on an empty volume) it is `remoteUnavailable`; with the tree there, it is one of
    /// this client's folders (a folder restored from a copy older than its registration): the document registers again,
    /// which creates them, and `body` runs once more.
    func withRemote<T>(_ what: String, _ body: () async throws -> T) async throws -> T {
        do {
            if let reset = mutable.current.lastReset { throw reset.error }
            let check = mutable.current
            let registeringNow = check.checksRemote
            let registeringFully = check.checksRemote && check.registersDocumentAgain
            do {
                try await checkRemoteIfNeeded()
                return try await body()
            } catch let error as FolderSyncError where error.code == .remoteUnavailable && !registeringNow {
                try await registerAgain(since: error)
            } catch let error as FolderSyncError where error.code == .remoteItemNotFound {
                guard try await applicationSyncManager.remote.exists(layout.formatVersionFile) else {
                    try await registerAgain(since: .applicationFolderAway(layout))
                }
                guard !registeringFully else { throw error }
                checkRemoteAgain()
                try await checkRemoteIfNeeded()
                return try await body()
            }
        } catch {
            let error = stopForReset(FolderSyncError.wrapping(error, what).unavailableIfUnreachable)
            if error.code == .remoteUnavailable { checkRemoteAgain() }
            throw error
        }
    }

    /// After the folder was found away mid-task: registers again at once, which asks the app whether the remote was
    /// replaced (then the reset is thrown), and throws `away` otherwise.
    private func registerAgain(since away: FolderSyncError) async throws -> Never {
        checkRemoteAgain()
        try await checkRemoteIfNeeded()
        throw away
    }

    /// Makes the next ``withRemote(_:_:)`` register with the remote first, the document too: the folder may be back,
    /// or replaced, or lack one of this client's folders.
    private func checkRemoteAgain() {
        mutable.withLock { state in
            state.checksRemote = true
            state.registersDocumentAgain = true
        }
        applicationSyncManager.checkRemoteAgain()
    }

    /// One sync, with the policy around it: bootstrap from a whole store, re-bootstrap after a vacuum, upload.
    private func synchronizeWithPolicy(integrityKey: String, store: any ModelAdapter) async throws -> SyncReport {
        let policy = self.policy
        let snapshotting = Self.snapshotting(store)
        var installed: WholeStoreManifest?
        var bootstrapWarning: SyncWarning?
        var attachmentsFetched = WholeStoreDownloadOperation.AttachmentsFetched()
        if policy.automaticallyDownloadsWholeStore, let snapshotting,
            try !store.loadSyncState().progress.hasBootstrapped
        {
            do {
                let download = bootstrapDownloadOperation(integrityKey: integrityKey, store: snapshotting)
                (installed, attachmentsFetched) = try await download.perform()
            } catch let error as FolderSyncError where error.isUnusableWholeStore {
                // Starting from a whole store saves time; the change sets bring the same data. Once they are
                // applied, this client uploads a store of its own, so that the next device finds a usable one.
                bootstrapWarning = SyncWarning(kind: .wholeStoreUnusable, message: error.message, path: error.path)
            }
            // Under the sync lock, like every other writer of the state: another process syncing the same store
            // could otherwise publish between this load and save, and have its bookkeeping overwritten (seen as a
            // rare failure of "two processes take turns" under load).
            let lock = try await FileLock.acquire(localLayout.syncLockFile)
            defer { lock.release() }
            try snapshotting.markBootstrapped()
            if bootstrapWarning != nil { try store.updateRemoteKnowledge { $0.owesWholeStore = true } }
        }
        let synchronization = try await guardedSynchronization(integrityKey: integrityKey, store: store, policy: policy)
        var report = synchronization.report
        mutable.withLock {
            $0.checkedOwnWholeStore = true
            $0.rejoinedAfterDeletion = false
            $0.ownNumbersKnownStore = synchronization.ownNumbersKnownAtEnd == nil ? nil : store
            $0.ownNumbersKnownThrough = synchronization.ownNumbersKnownAtEnd ?? 0
        }
        if let bootstrapWarning { report.warnings.insert(bootstrapWarning, at: 0) }
        let download = snapshotting.map { wholeStoreDownloadOperation(store: $0, options: wholeStoreDownloadOptions()) }
        if report.needsWholeStore, policy.automaticallyDownloadsWholeStore, let download {
            do {
                let downloaded = try await download.perform(covering: report.missingChangeSets)
                if let manifest = downloaded.manifest {
                    installed = manifest
                    attachmentsFetched.add(downloaded.attachmentsFetched)
                    mutable.withLock { $0.ownNumbersKnownStore = nil }  // the store's data and progress were replaced
                    report.merge(
                        try await guardedSynchronization(integrityKey: integrityKey, store: store, policy: policy)
                            .report)
                }
            } catch let error as FolderSyncError where error.isUnusableWholeStore {
                // Every store is unusable for now (one being replaced, its manifest and file caught half way): this
                // sync keeps what it applied, reports the store, and the next one looks again.
                // This client owes a store of its own, so that the tree does not stay without a usable one.
                report.warnings.append(SyncWarning(kind: .wholeStoreUnusable, message: error.message, path: error.path))
                try await oweWholeStore()
            }
        }
        if report.needsWholeStore {
            // No whole store filled the gap: what a vacuum, deletion or repair moved aside for its grace period does.
            let healing = try await guardedSynchronization(
                integrityKey: integrityKey, store: store, policy: policy,
                healsFromRemovedArea: true)
            report.merge(healing.report)
        }
        // Said once per sync, with what a status line shows (``SynchronizationStatus/missingChangeSets``).
        for (client, sequence) in report.missingChangeSets.sorted(by: { $0.key < $1.key }) {
            report.warnings.append(
                SyncWarning(
                    kind: .changeSetMissing,
                    message:
                        "change set \(sequence) of client \(client) is missing from the shared folder: this device waits for it "
                        + "(a whole store that covers it brings its changes; its author uploads one when it next syncs)",
                    path: layout.syncChangesDirectory(documentIdentifier, client: client).description))
        }
        report.installedWholeStore = installed
        report.goneAttachments.insert(contentsOf: attachmentsFetched.gone, at: 0)
        report.attachmentsDownloaded += attachmentsFetched.count
        report.attachmentBytesReceived += attachmentsFetched.bytes
        report.bytesReceived += attachmentsFetched.bytes
        if let snapshotting {
            try await readOwnWholeStoreIfDue(&report, store: snapshotting)
            report.uploadedWholeStore = try await uploadWholeStoreIfDue(report, store: snapshotting, policy: policy)
        }
        return report
    }

    /// `store` as a store that takes whole stores, when it is one (``ModelAdapter/snapshotting``, not a cast to the
    /// protocol, which looks the conformance up across every loaded image the first time a process makes it).
    static func snapshotting(_ store: any ModelAdapter) -> (any SnapshottingModelAdapter)? {
        store.snapshotting
    }

    /// A new device's first whole-store download, which checks, once a store is found, that installing it does
    /// not change local data from a replaced remote or on a deleted client. `options`: the download's, before that
    /// check is added (the manager's by default).
    func bootstrapDownloadOperation(
        integrityKey: String, store: any SnapshottingModelAdapter,
        options: WholeStoreDownloadOperation.Options? = nil
    ) -> WholeStoreDownloadOperation {
        let check = synchronizationOperation(store: store, options: synchronizationOptions(integrityKey: integrityKey))
        var options = options ?? wholeStoreDownloadOptions()
        options.checkBeforeInstalling = { try await check.checkStillRegistered() }
        return wholeStoreDownloadOperation(store: store, options: options)
    }

    /// Runs one sync with the settings this launch keeps for it (set before the factory makes the operation, so that
    /// backend subclasses get them too), and notes what the launch keeps of it.
    private func guardedSynchronization(
        integrityKey: String, store: any ModelAdapter, policy: SyncPolicy,
        healsFromRemovedArea: Bool = false
    ) async throws -> SynchronizationOperation.Run {
        let launch = mutable.current
        let installation = try currentInstallation(store: store)
        var options = synchronizationOptions(integrityKey: integrityKey)
        // The first sync of a launch looks at this client's whole store; later ones with the heartbeat.
        options.checksOwnWholeStore = !launch.checkedOwnWholeStore
        options.ownNumbersKnownThrough = launch.ownNumbersKnownStore === store ? launch.ownNumbersKnownThrough : nil
        options.installation = installation.identifier
        options.installationAnnounced = installation.announced
        options.ownMarkerRemovedByDeletion = launch.rejoinedAfterDeletion
        options.deletionFailSafe = policy.deletionFailSafe
        options.confirmMassDeletion = { [weak self] deletion in await self?.confirm(deletion) ?? false }
        options.healsFromRemovedArea = healsFromRemovedArea
        let run = try await synchronizationOperation(store: store, options: options).perform()
        try noteInstallationAnnounced(by: run)
        return run
    }

    /// This installation, read (or made) once per launch (``LocalInstallation``).
    private func currentInstallation(store: any ModelAdapter) throws -> LocalInstallation {
        if let installation = mutable.current.installation { return installation }
        let installation = try LocalInstallation.current(
            localLayout, storePath: store.storeFilePath,
            makeIdentifier: applicationSyncManager.environment.makeIdentifier)
        mutable.withLock { $0.installation = installation }
        return installation
    }

    /// Remembers, once, that a marker carrying this installation's identifier is out: from then on, another identifier
    /// in this client's marker is another installation's.
    private func noteInstallationAnnounced(by synchronization: SynchronizationOperation.Run) throws {
        guard synchronization.announcedInstallation, var installation = mutable.current.installation,
            !installation.announced
        else { return }
        installation.announced = true
        try installation.save(localLayout)
        mutable.withLock { $0.installation = installation }
    }

    private func uploadWholeStoreIfDue(_ report: SyncReport, store: any SnapshottingModelAdapter, policy: SyncPolicy)
        async throws -> WholeStoreManifest?
    {
        // The sync counted what it published since the last whole store, saving it with the rest of its state.
        let remote = try store.loadSyncState().remote
        // Owed whatever the policy: this client's published sets are gone from the folder, or no usable store covers
        // them.
        let due =
            remote.owesWholeStore
            || (policy.wholeStoreUploadAfterChangeSets.map { remote.changeSetsSinceWholeStore >= $0 } ?? false)
            || (policy.wholeStoreUploadAfterBytes.map { remote.bytesSinceWholeStore >= $0 } ?? false)
        guard due, let manifest = try await wholeStoreUploadOperation(store: store).run() else { return nil }
        try rememberOwnWholeStoreWritten(store: store)
        try store.updateRemoteKnowledge { remote in
            remote.changeSetsSinceWholeStore = 0
            remote.bytesSinceWholeStore = 0
            remote.owesWholeStore = false
        }
        if policy.vacuumsAfterWholeStoreUpload {
            _ = try await vacuum()
            _ = try await collectTombstonesNow(store)
        }
        return manifest
    }

    /// Remembers that this client owes the remote a whole store (``LocalSyncState/RemoteKnowledge/owesWholeStore``):
    /// one it found is damaged. Under the sync lock, like every writer of the state.
    func oweWholeStore() async throws {
        guard let store = store as? any SnapshottingModelAdapter else { return }
        let lock = try await FileLock.acquire(localLayout.syncLockFile)
        defer { lock.release() }
        try store.updateRemoteKnowledge { $0.owesWholeStore = true }
    }

    /// For a reset (remote replaced or deleted, client deleted): backs up the local store into the error and
    /// remembers the reset for ``rejoin()``, wherever it was found (sync, registration, whole-store transfer). Once
    /// per reset: a reset already remembered is returned as it is, with its backup, and no new one is made.
    func stopForReset(_ error: FolderSyncError) -> FolderSyncError {
        guard error.isReset else { return error }
        if let remembered = mutable.current.lastReset { return remembered.error }
        var error = error
        if let store { error.backupPath = try? backUpForReset(store) }
        rememberReset(error)
        return error
    }

    /// Copies the local store, with its unpublished changes, into the helper folder's `Backups/`, and removes the
    /// oldest backups beyond ``SyncPolicy/keptBackups``.
    private func backUpForReset(_ store: any ModelAdapter) throws -> String? {
        guard let snapshotting = store as? any SnapshottingModelAdapter else { return nil }
        let folder = localLayout.backupsDirectory
        try LocalFiles.createDirectory(folder)
        let stamp = String(format: "%012d", Int(applicationSyncManager.environment.now().timeIntervalSince1970))
        let url = folder.appendingPathComponent(
            "backup-\(stamp)-\(applicationSyncManager.environment.makeIdentifier()).sqlite")
        try snapshotting.backup(to: url)
        let backups =
            (try? FileManager.default.contentsOfDirectory(atPath: folder.path))?
            .filter { $0.hasPrefix("backup-") && $0.hasSuffix(".sqlite") }.sorted() ?? []
        for old in backups.dropLast(max(1, policy.keptBackups)) {
            try? FileManager.default.removeItem(at: folder.appendingPathComponent(old))
        }
        return url.path
    }

    func resolve(_ conflict: SyncConflict) async -> ConflictResolution? {
        if let resolver = conflictResolver { return await resolver(conflict) }
        return await delegate?.documentSyncManager(self, resolve: conflict)
    }

    /// The policy for automatic whole-store downloads and uploads and vacuum.
    public var policy: SyncPolicy {
        get { mutable.current.settings.policy }
        set { mutable.withLock { $0.settings.policy = newValue } }
    }

    /// Safeguards switched off in this manager's vacuums and client deletions, for tests (the simulator) that replay
    /// the defects they guard against and show that the removed area alone keeps every write.
    package var disabledSafeguards: Set<RemovalSafeguard> {
        get { mutable.current.settings.disabledSafeguards }
        set { mutable.withLock { $0.settings.disabledSafeguards = newValue } }
    }

    /// Uploads a whole store now; returns `nil` when local changes are not all published (sync first), or when this
    /// client's store on the remote covers more than the local one (a store restored from an older copy: sync first).
    @discardableResult
    public func uploadWholeStore() async throws -> WholeStoreManifest? {
        let store = try snapshottingStore()
        try await checkStillRegistered(store)
        let manifest = try await wholeStoreUploadOperation(store: store).run()
        if manifest != nil { try rememberOwnWholeStoreWritten(store: store) }
        return manifest
    }

    /// Replaces the local synced data with the remote's best whole store now, keeping unpublished local changes.
    @discardableResult
    public func downloadWholeStore() async throws -> WholeStoreManifest? {
        let store = try snapshottingStore()
        try await checkStillRegistered(store)
        return try await wholeStoreDownloadOperation(store: store, options: wholeStoreDownloadOptions()).run()
    }

    /// Before a whole-store transfer: a store of a wiped epoch must not reach the new one, nor the reverse.
    /// - Throws: ``FolderSyncError/Code/notRegistered``, or a reset (with its backup, ready for ``rejoin()``).
    private func checkStillRegistered(_ store: any SnapshottingModelAdapter) async throws {
        guard state == .ableToSync, let integrityKey else {
            throw notRegistered(before: "transferring whole stores")
        }
        try await withRemote("checking the remote document failed") {
            try await synchronizationOperation(
                store: store, options: synchronizationOptions(integrityKey: integrityKey)
            )
            .checkStillRegistered()
        }
    }

    private func snapshottingStore() throws -> any SnapshottingModelAdapter {
        guard let store = store as? any SnapshottingModelAdapter else {
            throw FolderSyncError(
                .invalidConfiguration, "the local store of document \(documentIdentifier) cannot take whole stores")
        }
        return store
    }
}

extension SyncReport {
    /// Adds a second sync's work to this report.
    mutating func merge(_ other: SyncReport) {
        changeSetsSent += other.changeSetsSent
        changesSent += other.changesSent
        changeSetsApplied += other.changeSetsApplied
        changesApplied += other.changesApplied
        changesIgnored += other.changesIgnored
        conflicts += other.conflicts
        warnings += other.warnings
        parkedChangeSets += other.parkedChangeSets
        bytesSent += other.bytesSent
        bytesReceived += other.bytesReceived
        remoteRequests += other.remoteRequests
        duration += other.duration
        missingChangeSets = other.missingChangeSets
        goneAttachments += other.goneAttachments
        attachmentsUploaded += other.attachmentsUploaded
        attachmentsDownloaded += other.attachmentsDownloaded
        attachmentBytesSent += other.attachmentBytesSent
        attachmentBytesReceived += other.attachmentBytesReceived
        confirmedMassDeletion = confirmedMassDeletion ?? other.confirmedMassDeletion
    }
}
