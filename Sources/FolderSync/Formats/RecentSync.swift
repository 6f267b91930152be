public import Foundation

/// `RecentSyncs/<client>.recentsync`: when a client last synced, what it published, and what it has applied.
///
/// Other clients read it to learn, without listing change-set folders, which
/// change sets are new; vacuum reads the acknowledgements to know what every
/// client still needs. It is a versioned, checksummed property list.
@_spi(Tooling) public struct RecentSync: PropertyListPayload, Hashable {
    public static let kind = "recentSync"
    public static let formatVersion = 1

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

    /// How many change-set names a marker announces.
    public static let announcedChangeSetLimit = 8

    /// How old ``lastSyncDate`` may grow while the client keeps syncing (one hour): an idle sync rewrites the
    /// marker when its date is this old, one request an hour. Client expiry refuses durations shorter than
    /// ``VacuumOperation/minimumClientExpiry``, a safe multiple of it.
    public static let heartbeatInterval: TimeInterval = 3600
}
