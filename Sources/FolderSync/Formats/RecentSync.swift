public import Foundation

/// `RecentSyncs/<client>.recentsync`: when a client last synced, what it published, and what it has applied.
///
/// Other clients read it to learn, without listing change-set folders, which
/// change sets are new; vacuum reads the acknowledgements to know what every
/// client still needs. It is a versioned, checksummed property list.
///
/// Versions: 1, the first; 2 adds ``changeSetContents``; 3 adds ``installation``, ``waitingFor`` and
/// ``formerIdentity``; 4 adds ``awaiting``. A marker is written as the oldest version that holds what it says:
/// without them as version 1, byte for byte what earlier clients wrote. A reader of an older version refuses a newer
/// one by its number, lists that client's folder instead, and counts it as acknowledging nothing when it vacuums,
/// until its next marker it can read.
@_spi(Tooling) public struct RecentSync: PropertyListPayload, Hashable {
    public static let kind = "recentSync"
    public static let formatVersion = 4

    /// The client whose marker this is; also the marker's file name.
    public var clientIdentifier: String
    /// When the client last synced, to within ``heartbeatInterval``: a sync writes the marker when it has
    /// something new to say, and an idle sync rewrites it once the date it holds is a heartbeat old, so that a
    /// client syncing every minute never looks silent. Never used to order changes; vacuum's client expiry reads it.
    public var lastSyncDate: Date
    /// The highest sequence of this client's published change sets.
    public var publishedSequence: Int64
    /// Per client, the highest sequence up to which this client has durably applied every change set.
    public var acknowledgement: [String: Int64]
    /// The schema version of this client's data.
    public var schemaVersion: Int
    /// The file names of this client's newest published change sets (at most ``announcedChangeSetLimit``):
    /// a reader that needs only these fetches them without listing the client's folder, so a sync costs what
    /// is new, not how many sets the folder holds. Absent from markers written before it existed.
    public var recentChangeSets: [String]? = nil

    /// The bytes of the change sets the sync that wrote this marker published, by file name, when they are small
    /// (at most ``inlineChangeSetLimit`` bytes in all): a reader that lacks them takes them from here, so that each
    /// client with news costs a reader one request, not two. Their files are published too, at the same time (a
    /// reader that comes after the next marker lists or fetches them). Absent from markers of version 1, from
    /// markers that announce no new set, and when the sets are larger.
    public var changeSetContents: [String: Data]? = nil

    /// The installation that wrote the marker: a random identifier the writer keeps in its helper folder, made anew
    /// when its store or helper folder is a copy (another file, another machine). Two installations that share one
    /// client identity (a device's store copied to a second computer and used beside the first) find each other by
    /// it: each reads back the marker it wrote, and one that another installation wrote after it says so
    /// (``FolderSyncError/Code/clientIdentityShared``). Absent from markers of versions 1 and 2.
    public var installation: String? = nil

    /// Per client, the change set this client waits for: missing from the folder, the next it needs of that client
    /// (``SyncReport/missingChangeSets``). The author of such a set looks at its own folder when it reads this, and
    /// uploads a whole store that covers what is gone. Absent when this client waits for nothing.
    public var waitingFor: [String: Int64]? = nil

    /// The client identifier this client had before it took a new one because another installation shared it
    /// (``FolderSyncError/Code/clientIdentityShared``). A reader that reads this client's marker for the first time
    /// lists that client's folder, so that no set this client published under it is skipped (a marker of the shared
    /// identity that named it may have been overwritten by the other installation's before the reader read it).
    public var formerIdentity: String? = nil

    /// The clients of the document's earlier epochs (before the application's folder or the document was wiped) that
    /// this client knew and has not seen registered since, sorted. Their stores may still hold rows deleted since, and
    /// they bring them back when they re-join: no client collects a tombstone while one of them is awaited
    /// (<doc:TombstoneCollection>). Absent when this client awaits nobody, and from markers of versions 1 to 3.
    public var awaiting: [String]? = nil

    /// How many change-set names a marker announces.
    public static let announcedChangeSetLimit = 8

    /// The most change-set bytes a marker carries (``changeSetContents``): a set of a few dozen rows. A reader reads
    /// a changed marker anyway, and markers change when their client publishes (or acknowledges, rarely).
    public static let inlineChangeSetLimit = 16 * 1024

    /// The oldest version that holds what the marker says.
    public var writtenFormatVersion: Int {
        if awaiting != nil { return 4 }
        if installation != nil || waitingFor != nil || formerIdentity != nil { return 3 }
        return changeSetContents == nil ? 1 : 2
    }

    /// How old ``lastSyncDate`` may grow while the client keeps syncing (one hour): an idle sync rewrites the
    /// marker when its date is this old, one request an hour. Client expiry refuses durations shorter than
    /// ``VacuumOperation/minimumClientExpiry``, a safe multiple of it.
    public static let heartbeatInterval: TimeInterval = 3600

    /// Every sequence the marker claims is one a file name holds: readers compare and count with them.
    public func validate(path: String) throws {
        try validateSequence(publishedSequence, "to have published up to", path: path)
        for (client, sequence) in acknowledgement {
            try validateSequence(sequence, "to have applied client \(client)'s change sets up to", path: path)
        }
        for (client, sequence) in waitingFor ?? [:] {
            try validateSequence(sequence, "to wait for client \(client)'s change set", path: path)
        }
    }
}
