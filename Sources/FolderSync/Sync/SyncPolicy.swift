public import Foundation

/// What a document sync manager does on its own around syncs.
public struct SyncPolicy: Sendable, Hashable {
    /// At the first sync, start from the remote's best whole store (a new device joining a document with data),
    /// and whenever a change set this client needs was vacuumed.
    public var automaticallyDownloadsWholeStore = true
    /// Upload a whole store after this many published change sets since the last one (`nil`: never by count).
    public var wholeStoreUploadAfterChangeSets: Int? = 50
    /// Upload a whole store after this many published bytes since the last one (`nil`: never by size).
    public var wholeStoreUploadAfterBytes: Int64? = 16 * 1024 * 1024
    /// Vacuum after each whole-store upload, so that change sets every client has applied are removed.
    public var vacuumsAfterWholeStoreUpload = true
    /// How long what this client's vacuums remove stays in the document's removed area, where readers that meet a
    /// gap heal from it, before a later vacuum purges it (default 14 days; at least a day, or vacuum refuses to run).
    public var keepsRemovedFilesFor: TimeInterval = RemovedArea.defaultGracePeriod
    /// How long a client that applied other clients' change sets, with nothing of its own to publish, may wait before
    /// it rewrites its recent sync only to acknowledge them (default 10 minutes; 0: at every such sync).
    ///
    /// An acknowledgement lets vacuum remove what every client applied; nothing else waits for it. Written at once,
    /// it costs every reader's sync a write, and every other client's next sync a read of the changed marker: with a
    /// hundred devices, most of their requests. A sync that publishes, or that finds its marker missing, older or
    /// claiming more than the store holds (a restored store), writes it at once whatever this says.
    public var acknowledgementDelay: TimeInterval = 600
    /// Whether a marker carries the small sets its sync published (``RecentSync/changeSetContents``): always, but in
    /// tests that need readers to fetch each set from its file.
    package var carriesChangeSetsInMarkers = true
    /// A `BLOB` value of at least this many bytes travels as an attachment: stored once under the document's
    /// `Attachments/`, while change sets and whole stores carry its hash and size (`nil`: values always inline).
    public var attachmentThreshold: Int? = 64 * 1024
    /// When attached files reach this client: during the sync that brings their reference, or on request.
    public var attachmentDownloads = AttachmentDownloadPolicy.eager
    /// How uploaded whole stores hold their snapshot: stored (the default: a new device installs it in one pass
    /// over its bytes) or zlib-compressed (about 2.7 times smaller, for slow or metered remotes, at the cost of
    /// compressing on upload and inflating at ~400 MB/s on download). Any client reads either.
    public var wholeStoreCompression = WholeStoreCompression.none
    /// Stop and ask before a sync deletes most of a table's rows (`nil`: never ask).
    public var deletionFailSafe: DeletionFailSafe? = DeletionFailSafe()
    /// How many backups of the local store a reset keeps in the helper folder's `Backups/` (one per reset, however
    /// many syncs stop on it); the oldest are removed beyond this. At least one is always kept.
    public var keptBackups = 3
    /// How many sync IDs a sync lists in ``SyncReport/rowChanges`` (and each ``SyncEvent/rowsChanged(_:)`` event, per
    /// change set) at most; past it only the counts grow. 0 lists none: counts only.
    public var changedRowIDLimit = 1_000

    /// The default policy: automatic whole-store downloads, an upload every 50 change sets or 16 MiB, vacuum after
    /// uploads.
    public init() {}
}

/// When a client downloads the files other clients attached (large column values are always downloaded, since
/// the column needs them).
public enum AttachmentDownloadPolicy: Sendable, Hashable {
    /// During the sync that brings a reference to them.
    case eager
    /// Only when the app calls ``DocumentSyncManager/requestDownload(for:)``; a sync only checks they exist.
    case lazy
}
