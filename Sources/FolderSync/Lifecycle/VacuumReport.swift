public import Foundation

/// What a vacuum removed (or, in a dry run, would remove), what it kept back and why.
///
/// What it removes is moved into the document's removed area (``removalFolder``), where it stays for
/// ``keepRemovedFor`` before a later vacuum purges it (``purgedRemovals``).
///
/// A dry run and a real run over the same tree report the same plan, so an
/// operator can read the dry run and know exactly what the real one will do.
public struct VacuumReport: Sendable, Hashable {
    /// Why an item is removable.
    public enum Reason: String, Sendable, Hashable {
        /// A change set every live client has applied and every kept whole store contains.
        case changeSet
        /// A whole store another whole store dominates (contains every change set it contains).
        case dominatedWholeStore
        /// A temporary file older than the age limit: an interrupted write.
        case staleTemporary
        /// The recent-sync marker of a deleted (or just expired) client; removing it is how the client notices.
        case deletedClientRecentSync
        /// An empty folder of a deleted client whose change sets are all gone.
        case deletedClientFolder
        /// An attachment no change set and no whole store that vacuum keeps references, older than the age limit of
        /// temporaries (an attachment is published just before the change set that references it).
        case unreferencedAttachment
    }

    /// One removed item.
    public struct Removal: Sendable, Hashable {
        /// The file or folder removed (in a dry run, that a real run would remove).
        public var path: RemotePath
        /// Bytes of the files removed (a folder counts the files under it).
        public var byteCount: Int64
        /// Why nobody needed it.
        public var reason: Reason

        /// A removal of `path`, freeing `byteCount` bytes, for `reason`.
        public init(path: RemotePath, byteCount: Int64, reason: Reason) {
            self.path = path
            self.byteCount = byteCount
            self.reason = reason
        }
    }

    /// How much one client's acknowledgement keeps from being vacuumed.
    ///
    /// Counts change sets that every kept whole store already contains but
    /// that this client has not acknowledged. The exclusive counts are the
    /// sets no other client holds back: what deleting or expiring this client
    /// alone would free.
    public struct HeldBack: Sendable, Hashable {
        /// Change sets held back.
        public var changeSetCount: Int = 0
        /// Bytes of the change sets held back.
        public var byteCount: Int64 = 0
        /// Change sets that only this client holds back.
        public var exclusiveChangeSetCount: Int = 0
        /// Bytes of the change sets that only this client holds back.
        public var exclusiveByteCount: Int64 = 0

        /// Counts of held-back change sets and their bytes; zero by default.
        public init(
            changeSetCount: Int = 0, byteCount: Int64 = 0, exclusiveChangeSetCount: Int = 0,
            exclusiveByteCount: Int64 = 0
        ) {
            self.changeSetCount = changeSetCount
            self.byteCount = byteCount
            self.exclusiveChangeSetCount = exclusiveChangeSetCount
            self.exclusiveByteCount = exclusiveByteCount
        }

        /// Whether the client holds back any change set.
        public var isHoldingBack: Bool { changeSetCount > 0 }
    }

    /// A file the vacuum could not read or does not know, and therefore left alone.
    public struct Skipped: Sendable, Hashable {
        /// The file left in place.
        public var path: RemotePath
        /// Why it was left, for people.
        public var reason: String

        /// A skipped file at `path`, with the reason it was left.
        public init(path: RemotePath, reason: String) {
            self.path = path
            self.reason = reason
        }
    }

    /// An item the plan removes whose removal failed; the next vacuum tries again.
    public struct Failure: Sendable, Hashable {
        /// The item that is still there.
        public var path: RemotePath
        /// Why its removal failed.
        public var error: FolderSyncError
    }

    /// Whether this was a dry run (nothing was written or removed).
    public var isDryRun: Bool
    /// What was removed, or in a dry run what would be, in the order of removal.
    public var removed: [Removal] = []
    /// Per live client that holds something back, how much.
    public var heldBack: [String: HeldBack] = [:]
    /// Clients the expiry policy marked deleted in this run.
    public var expiredClients: [String] = []
    /// Files left alone because they could not be read or are unknown.
    public var skipped: [Skipped] = []
    /// Removals that failed (always empty in a dry run).
    public var failures: [Failure] = []
    /// What checking the whole stores cost and found: a store counts as covering change sets only once its file
    /// was read and matched its manifest.
    public var wholeStoreCheck = WholeStoreCheck()

    /// The whole stores a vacuum verified, what that cost, and the ones that failed.
    public struct WholeStoreCheck: Sendable, Hashable {
        /// Stores read whole in this run and found to match their manifests.
        public var verified = 0
        /// Stores an earlier run verified, unchanged since (same identifier, size and version tag), and not read
        /// again because this run removes nothing on their strength (a store something is removed on is read).
        public var verifiedEarlier = 0
        /// Bytes read to verify them.
        public var bytesRead: Int64 = 0
        /// Stores that failed: they count as covering nothing and are left alone (`foldersync doctor` reports them;
        /// their uploader replaces one it finds changed, which it looks for by its version tag at the first sync of a
        /// launch and hourly, and by reading it through once a day).
        public var damaged: [Skipped] = []

        /// Nothing verified yet.
        public init() {}
    }

    /// How long what this run removed stays in the removed area before a later vacuum purges it.
    public var keepRemovedFor: TimeInterval = RemovedArea.defaultGracePeriod
    /// The removal in the document's removed area that holds what this run removed (`nil` in a dry run, or when it
    /// removed nothing): `Removed/<day>/<removal>/`, each file under its path below the document.
    public var removalFolder: RemotePath?
    /// Removals of the removed areas (the document's and the application's) older than ``keepRemovedFor`` that this
    /// run purged for good (in a dry run: would purge).
    public var purgedRemovals: [RemotePath] = []

    /// The shared folder's time, which judged every age in this run (silence of clients, temporaries, attachments).
    public var folderTime = FolderTime(now: nil, isMeasured: false)

    /// The shared folder's own clock as a vacuum read it: ages of what is in the folder are judged by the dates the
    /// folder records, against its time now, never by a device's clock or the operator's.
    public struct FolderTime: Sendable, Hashable {
        /// The folder's time now; `nil` when it records no modification dates (then no age is known: nobody is
        /// expired, no temporary is stale).
        public var now: Date?
        /// `true` when ``now`` is the date the folder recorded for a file written for the purpose; `false` when it is
        /// the newest date it records for any file of the document (a dry run writes nothing), which is a lower
        /// bound: a dry run may then find fewer clients silent than the real run.
        public var isMeasured: Bool
        /// The clock of the computer that vacuumed minus the folder's (measured only): positive when it is ahead.
        public var skew: TimeInterval?

        /// A reading of the folder's time; see the properties.
        public init(now: Date?, isMeasured: Bool, skew: TimeInterval? = nil) {
            self.now = now
            self.isMeasured = isMeasured
            self.skew = skew
        }

        /// A difference between the two clocks worth telling the operator about: five minutes.
        public static let reportedSkew: TimeInterval = 300

        /// ``skew`` when it is at least ``reportedSkew`` either way.
        public var notableSkew: TimeInterval? { skew.flatMap { abs($0) >= Self.reportedSkew ? $0 : nil } }
    }

    /// An empty report, before anything is planned or removed.
    public init(isDryRun: Bool) { self.isDryRun = isDryRun }

    /// Bytes freed (or that a real run would free).
    public var bytesFreed: Int64 { removed.reduce(0) { $0 + $1.byteCount } }

    /// The change sets removed, as paths.
    public var removedChangeSets: [RemotePath] { removed.filter { $0.reason == .changeSet }.map(\.path) }
}
