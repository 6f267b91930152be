public import Foundation

/// One client registered with a document, as an operator sees it: who it is, when it last synced, what it holds back.
public struct RegisteredClient: Sendable, Hashable {
    /// The client's identifier, as its recent sync and change-set folder name it.
    public var identifier: String
    /// From `ClientDevices/<client>/deviceInfo.plist`; `nil` when that file is missing or unreadable.
    public var clientDescription: String?
    /// The app's own information about the client, from its device info; empty when that is missing.
    public var userInfo: [String: String]
    /// From its recent sync, by the client's own clock; `nil` when it has not synced (or its marker is unreadable).
    public var lastSyncDate: Date?
    /// When the shared folder last saw it write a file of the document (its marker, a change set, a whole store), by
    /// the folder's own clock: what vacuum's expiry judges silence by. `nil` when the folder records no dates.
    public var lastSeenDate: Date?
    /// Per client, the highest sequence up to which it has applied every change set.
    public var acknowledgement: [String: Int64]
    /// The highest sequence of its own published change sets.
    public var publishedSequence: Int64?
    /// When its whole store was made, if it uploaded one.
    public var wholeStoreDate: Date?
    /// Whether it has a `DeletedClients/` marker.
    public var isDeleted: Bool
    /// What its acknowledgement keeps from being vacuumed (zero for deleted clients).
    public var heldBack: VacuumReport.HeldBack

    /// Whether vacuum would free more if this client caught up (or were deleted).
    public var holdsVacuumBack: Bool { heldBack.isHoldingBack }

    /// A listed client; see the properties for each argument.
    public init(
        identifier: String, clientDescription: String? = nil, userInfo: [String: String] = [:],
        lastSyncDate: Date? = nil,
        acknowledgement: [String: Int64] = [:], publishedSequence: Int64? = nil, wholeStoreDate: Date? = nil,
        isDeleted: Bool = false, heldBack: VacuumReport.HeldBack = .init(), lastSeenDate: Date? = nil
    ) {
        self.identifier = identifier
        self.clientDescription = clientDescription
        self.userInfo = userInfo
        self.lastSyncDate = lastSyncDate
        self.acknowledgement = acknowledgement
        self.publishedSequence = publishedSequence
        self.wholeStoreDate = wholeStoreDate
        self.isDeleted = isDeleted
        self.heldBack = heldBack
        self.lastSeenDate = lastSeenDate
    }
}
