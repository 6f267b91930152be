public import Foundation

/// Where a document sync manager keeps its local bookkeeping, in one place.
///
/// TICoreDataSync kept unsynchronized changes, changes being synchronized and
/// the applied-change-set ledger in side files. FolderSync keeps pending
/// changes and the ledger **inside the document's SQLite database**, in the
/// tables named here, so they commit in the same transaction as the data
/// they describe (invariant 2). The helper folder holds only what is not
/// row data: the remembered registration, staged change sets awaiting
/// publication, the sync lock and reset backups.
public struct LocalLayout: Hashable, Sendable {
    /// The helper folder of one document on one client.
    public let helperDirectory: URL

    /// The layout of the helper folder at `helperDirectory`; nothing is created until a sync or registration needs it.
    public init(helperDirectory: URL) { self.helperDirectory = helperDirectory.standardizedFileURL }

    /// The registration this client remembers (integrity key included): what a launch without the remote comes up from.
    public var registrationFile: URL { helperDirectory.appendingPathComponent("Registration.plist") }
    /// Written by a first registration as soon as it finds the application's tree (before the registration is
    /// done): a later launch never creates that tree by itself, even if the first registration never finished.
    public var applicationSeenFile: URL { helperDirectory.appendingPathComponent("Application.plist") }
    /// The reset the document stopped on, until ``DocumentSyncManager/rejoin()``.
    public var resetFile: URL { helperDirectory.appendingPathComponent("Reset.plist") }
    /// How the last syncs went (``DocumentSyncManager/lastSynchronization``).
    public var statusFile: URL { helperDirectory.appendingPathComponent("Status.plist") }
    /// Change sets staged under their final names, durable before they are published
    /// (TICoreDataSync's "sync changes being synchronized").
    public var stagedSyncChangesDirectory: URL {
        helperDirectory.appendingPathComponent("StagedSyncChanges", isDirectory: true)
    }
    /// Downloads in progress.
    public var downloadsDirectory: URL { helperDirectory.appendingPathComponent("Downloads", isDirectory: true) }
    /// This client's attachments, one file per SHA-256 (see ``AttachmentReference``).
    public var attachmentsDirectory: URL { helperDirectory.appendingPathComponent("Attachments", isDirectory: true) }
    /// Backups of the local store and its unpushed changes, kept by resets.
    public var backupsDirectory: URL { helperDirectory.appendingPathComponent("Backups", isDirectory: true) }
    /// The whole stores this client's vacuums verified, so that each is read again only once it changed.
    public var verifiedWholeStoresFile: URL { helperDirectory.appendingPathComponent("VerifiedWholeStores.json") }
    /// When this client last read its own whole store through (``DocumentSyncManager``'s daily check of it).
    public var ownWholeStoreReadFile: URL { helperDirectory.appendingPathComponent("OwnWholeStoreRead.json") }

    /// Which installation of its client this helper folder belongs to (a recent-sync marker's `installation`).
    public var installationFile: URL { helperDirectory.appendingPathComponent("Installation.plist") }
    /// Locked while a sync runs, so two processes never sync one document at once.
    public var syncLockFile: URL { helperDirectory.appendingPathComponent("sync.lock") }
}
