public import Foundation

/// What one synchronization did.
public struct SyncReport: Sendable, Hashable {
    /// Change sets and changes this client published.
    public var changeSetsSent = 0
    public var changesSent = 0
    /// Change sets and changes of other clients applied to the local store.
    public var changeSetsApplied = 0
    public var changesApplied = 0
    /// Changes that lost to newer local state or hit a deleted row.
    public var changesIgnored = 0
    public var conflicts: [ResolvedConflict] = []
    public var warnings: [SyncWarning] = []
    /// Change sets of a newer schema, left for an updated app (not applied, not acknowledged).
    public var parkedChangeSets: [String] = []
    public var bytesSent: Int64 = 0
    public var bytesReceived: Int64 = 0
    /// Change sets this client needs that are not in the remote (vacuumed, or not visible yet): per client, the
    /// first missing sequence. Only a whole store that covers them can bring their changes.
    public var missingChangeSets: [String: Int64] = [:]
    public var needsWholeStore: Bool { !missingChangeSets.isEmpty }
    /// A whole store was installed during this sync (bootstrap, or after a vacuum).
    public var installedWholeStore: WholeStoreManifest?
    /// A whole store was uploaded after this sync (by the upload policy).
    public var uploadedWholeStore: WholeStoreManifest?
    /// Deletions that tripped the ``DeletionFailSafe`` and that the app confirmed before they were applied.
    public var confirmedMassDeletion: MassDeletion?
    /// Remote requests made (list, stat, read, write, move, remove).
    public var remoteRequests = 0
    public var duration: TimeInterval = 0

    public init() {}

    /// Whether the sync changed nothing, here or on the remote.
    public var isIdle: Bool { changeSetsSent == 0 && changeSetsApplied == 0 }
}

/// Progress of a synchronization, for a progress bar or a log.
public enum SyncEvent: Sendable, Hashable {
    public enum Phase: String, Sendable, Hashable {
        case checkingIntegrity, stagingLocalChanges, findingRemoteChanges, applyingRemoteChanges, publishingLocalChanges,
             writingRecentSync, finished
    }

    case phase(Phase)
    /// Applying change set `index` (from 1) of `count`.
    case applyingChangeSet(index: Int, count: Int, changes: Int)
    /// Bytes moved so far in this sync.
    case transferred(sent: Int64, received: Int64)
}
