public import Foundation

/// What one synchronization did.
public struct SyncReport: Sendable, Hashable {
    /// Change sets and changes this client published.
    public var changeSetsSent = 0
    /// Row changes in the change sets this client published.
    public var changesSent = 0
    /// Change sets and changes of other clients applied to the local store.
    public var changeSetsApplied = 0
    /// Row changes of other clients that changed the local store.
    public var changesApplied = 0
    /// Changes that lost to newer local state or hit a deleted row.
    public var changesIgnored = 0
    /// The rows other clients' changes changed here, per table and client, in the order first changed: exact
    /// counts, and sync IDs up to ``SyncPolicy/changedRowIDLimit`` (``RowChanges``).
    public var rowChanges: [RowChanges] = []
    /// Conflicts settled during this sync, with how each was settled.
    public var conflicts: [ResolvedConflict] = []
    /// Things noticed that did not stop the sync, such as dangling references or parked change sets.
    public var warnings: [SyncWarning] = []
    /// Change sets of a newer schema, left for an updated app (not applied, not acknowledged).
    public var parkedChangeSets: [String] = []
    /// Bytes uploaded: compressed change sets and the recent-sync marker.
    public var bytesSent: Int64 = 0
    /// Bytes downloaded: change sets and other clients' recent-sync markers.
    public var bytesReceived: Int64 = 0
    /// Change sets this client needs that are not in the remote (vacuumed, or not visible yet): per client, the
    /// first missing sequence. Only a whole store that covers them can bring their changes.
    public var missingChangeSets: [String: Int64] = [:]
    /// Whether change sets are missing, so only a whole store can bring this client up to date.
    public var needsWholeStore: Bool { !missingChangeSets.isEmpty }
    /// A whole store was installed during this sync (bootstrap, or after a vacuum).
    public var installedWholeStore: WholeStoreManifest?
    /// A whole store was uploaded after this sync (by the upload policy).
    public var uploadedWholeStore: WholeStoreManifest?
    /// Attachments rows reference that the remote does not have, each with the row and column referencing it.
    /// The rest of the sync went on; ``DocumentSyncManager/requestDownload(for:)`` tries again.
    public var goneAttachments: [GoneAttachment] = []
    /// Attachments this sync uploaded (a whole store's included).
    public var attachmentsUploaded = 0
    /// Attachments this sync downloaded (a whole store's included).
    public var attachmentsDownloaded = 0
    /// Bytes of attachments uploaded, on the wire; also counted in ``bytesSent``.
    public var attachmentBytesSent: Int64 = 0
    /// Bytes of attachments downloaded, on the wire; also counted in ``bytesReceived``.
    public var attachmentBytesReceived: Int64 = 0
    /// Deletions that tripped the ``DeletionFailSafe`` and that the app confirmed before they were applied.
    public var confirmedMassDeletion: MassDeletion?
    /// Remote requests made (list, stat, read, write, move, remove).
    public var remoteRequests = 0
    /// How long the sync took, in seconds.
    public var duration: TimeInterval = 0

    /// An empty report: nothing done yet.
    public init() {}

    /// Whether the sync changed nothing, here or on the remote.
    public var isIdle: Bool { changeSetsSent == 0 && changeSetsApplied == 0 }
}

/// Progress of a synchronization, for a progress bar or a log.
public enum SyncEvent: Sendable, Hashable {
    /// A step of a synchronization, in the order they run.
    public enum Phase: String, Sendable, Hashable {
        /// Checking that the remote document is still the one this client joined (its integrity key).
        case checkingIntegrity
        /// Listing the other clients' recent-sync markers to find change sets not applied yet.
        case findingRemoteChanges
        /// Downloading and applying those change sets, in causal order.
        case applyingRemoteChanges
        /// Turning local changes not yet published into change sets on disk, as conflict resolutions left them.
        case stagingLocalChanges
        /// Uploading this client's staged change sets.
        case publishingLocalChanges
        /// Writing this client's recent-sync marker (what it published and has applied).
        case writingRecentSync
        /// The sync completed.
        case finished
    }

    /// A sync started (``DocumentSyncManager/isSynchronizing`` is `true` until it ends).
    case started
    /// The sync entered a new phase.
    case phase(Phase)
    /// Applying change set `index` (from 1) of `count`.
    case applyingChangeSet(index: Int, count: Int, changes: Int)
    /// The change set just applied changed these rows (per table; sync IDs up to ``SyncPolicy/changedRowIDLimit``):
    /// sent once its transaction committed, so that an app refreshes what changed while a long sync goes on.
    case rowsChanged([RowChanges])
    /// Bytes moved so far in this sync.
    case transferred(sent: Int64, received: Int64)
    /// An attachment's upload starts (followed by ``transferred(sent:received:)`` when it is done).
    case uploadingAttachment(AttachmentReference)
    /// An attachment's download starts (followed by ``transferred(sent:received:)`` when it is done).
    case downloadingAttachment(AttachmentReference)
    /// A whole store moves: `bytes` of `total` sent (an upload) or received (a download) so far.
    case wholeStoreTransfer(direction: TransferDirection, bytes: Int64, total: Int64)
    /// The sync ended and did what `report` says: the last event of a sync that succeeded, sent before
    /// ``DocumentSyncManager/synchronize()`` returns.
    case completed(SyncReport)
    /// The sync failed with `error`: the last event of a sync that failed, sent before
    /// ``DocumentSyncManager/synchronize()`` throws.
    case failed(FolderSyncError)
}

/// Which way a transfer goes.
public enum TransferDirection: Sendable, Hashable {
    /// From this client to the remote.
    case upload
    /// From the remote to this client.
    case download
}
