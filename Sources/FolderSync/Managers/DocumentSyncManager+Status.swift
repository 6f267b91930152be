public import Foundation

/// A reset the document stopped on, remembered until ``DocumentSyncManager/rejoin()``: what an app shows in a banner.
public struct ResetState: Sendable, Hashable {
    /// ``FolderSyncError/Code/integrityKeyMismatch``, ``FolderSyncError/Code/documentDeleted`` or
    /// ``FolderSyncError/Code/clientDeleted``.
    public var code: FolderSyncError.Code
    /// What happened, for people.
    public var message: String
    /// The copy of the local store (with its unpublished changes) made when the reset was found, once per reset.
    public var backupPath: String?
    /// When the reset was found.
    public var date: Date
}

/// How a document's last syncs went: for a status line ("synced 2 minutes ago", "the share is not reachable").
public struct SynchronizationStatus: Sendable, Hashable {
    /// When a sync last completed, `nil` before the first.
    public var lastSuccess: Date?
    /// When a sync last failed, and its error; `nil` once a later one completed.
    public var lastFailure: Date?
    /// The error of the last failed sync, with its code; `nil` once a later one completed.
    public var lastError: FolderSyncError?
    /// Per client, the change set this device waits for: missing from the shared folder, and no whole store covered
    /// it when the last sync looked (the folder, or that client's folder, put back from an older copy). The device
    /// says so in its marker, and the set's author uploads a whole store that covers it at its next sync. Empty when
    /// the device waits for nothing.
    public var missingChangeSets: [String: Int64] = [:]
}

/// What an app shows of a document's sync, observable as properties and as ``SyncEvent``s: whether a sync runs,
/// whether local changes wait to be published, how the last syncs went, and the reset it stopped on. Kept in the
/// helper folder, so that it survives a relaunch (another process, such as a command-line tool, reads it too).
extension DocumentSyncManager {
    /// The reset the document stopped on (remote wiped or replaced, document or this client deleted), until
    /// ``rejoin()``. The store works meanwhile; every sync stops on it without touching the remote.
    public var resetState: ResetState? {
        mutable.current.lastReset.map {
            ResetState(code: .init(rawValue: $0.code), message: $0.message, backupPath: $0.backupPath, date: $0.date)
        }
    }

    /// Whether a sync is running now.
    public var isSynchronizing: Bool { mutable.current.isSynchronizing }

    /// Whether some local change is not published yet (`false` without a store).
    public var hasUnpublishedChanges: Bool { (try? store?.hasUnpublishedChanges()) ?? false }

    /// How the last syncs went, also across launches (the change sets it waits for are read from the store).
    public var lastSynchronization: SynchronizationStatus {
        let last = mutable.current.lastStatus
        let error = last?.lastErrorCode.map {
            FolderSyncError(FolderSyncError.Code(rawValue: $0), last?.lastErrorMessage ?? "")
        }
        let waiting = (try? store?.loadSyncState().remote.announcedWaitingFor) ?? [:]
        return SynchronizationStatus(
            lastSuccess: last?.lastSuccess, lastFailure: last?.lastFailure, lastError: error,
            missingChangeSets: waiting)
    }

    /// Reads the remembered reset and sync status from the helper folder, at launch; afterwards the manager keeps both.
    func loadRememberedState() {
        let reset = (try? LocalFiles.read(localLayout.resetFile))
            .flatMap { try? PropertyListFile.decode(LocalReset.self, from: $0, path: localLayout.resetFile.path) }
        let last = (try? LocalFiles.read(localLayout.statusFile))
            .flatMap { try? PropertyListFile.decode(LocalSyncStatus.self, from: $0, path: localLayout.statusFile.path) }
        mutable.withLock { state in
            state.lastReset = reset
            state.lastStatus = last
        }
    }

    /// Remembers `error`, a reset, until ``rejoin()``.
    func rememberReset(_ error: FolderSyncError) {
        let reset = LocalReset(
            code: error.code.rawValue, message: error.message, path: error.path, backupPath: error.backupPath,
            date: applicationSyncManager.environment.now())
        // Durable: a reset found once must not be found again by a relaunch, with another backup.
        if let data = try? PropertyListFile.encode(reset) {
            try? LocalFiles.writeDurably(data, to: localLayout.resetFile)
        }
        mutable.withLock { $0.lastReset = reset }
    }

    /// What a remote task of a manager that cannot run it answers: the remembered reset, when there is one (a re-join
    /// that stopped on a second reset leaves the manager unregistered, and only ``rejoin()`` recovers), or
    /// ``FolderSyncError/Code/notRegistered``.
    func notRegistered(before task: String) -> FolderSyncError {
        mutable.current.lastReset?.error
            ?? FolderSyncError(.notRegistered, "register document \(documentIdentifier) before \(task)")
    }

    /// Forgets the reset, once ``rejoin()`` recovered from it.
    func forgetReset() {
        try? FileManager.default.removeItem(at: localLayout.resetFile)
        mutable.withLock { $0.lastReset = nil }
    }

    /// Notes that a sync starts, and tells the event streams.
    func syncStarted() {
        mutable.withLock { $0.isSynchronizing = true }
        publish(.started)
    }

    /// How a sync ended (not a `Result`: a process's first `Result` of an error type costs a conformance lookup
    /// across every loaded image).
    enum SyncOutcome {
        case succeeded(SyncReport)
        case failed(FolderSyncError)
    }

    /// Notes how a sync ended, in memory and in the helper folder, and tells the event streams.
    func syncEnded(_ result: SyncOutcome) {
        let now = applicationSyncManager.environment.now()
        let last = mutable.withLock { state -> LocalSyncStatus in
            var last = state.lastStatus ?? LocalSyncStatus()
            switch result {
            case .succeeded:
                last.lastSuccess = now
                last.lastFailure = nil
                last.lastErrorCode = nil
                last.lastErrorMessage = nil
            case .failed(let error):
                last.lastFailure = now
                last.lastErrorCode = error.code.rawValue
                last.lastErrorMessage = error.message
            }
            state.isSynchronizing = false
            state.lastStatus = last
            return last
        }
        // For display only: not worth an fsync at every sync.
        if let data = try? PropertyListFile.encode(last) {
            try? LocalFiles.writeReplacing(localLayout.statusFile, durably: false) { write in try write(data) }
        }
        switch result {
        case .succeeded(let report): publish(.completed(report))
        case .failed(let error): publish(.failed(error))
        }
    }
}
