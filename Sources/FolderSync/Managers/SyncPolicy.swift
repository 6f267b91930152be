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

    /// The default policy: automatic whole-store downloads, an upload every 50 change sets or 16 MiB, vacuum after uploads.
    public init() {}
}
