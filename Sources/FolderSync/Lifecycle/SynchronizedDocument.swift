public import Foundation

/// A document some client synchronized through the remote, as listed for choosing one to download or delete.
public struct SynchronizedDocument: Sendable, Hashable {
    public var identifier: String
    /// From `documentInfo.plist`; `nil` when it is missing or unreadable (a document being created, or damaged).
    public var documentDescription: String?
    public var userInfo: [String: String]
    public var integrityKey: String?
    /// Registered clients that are not deleted, sorted.
    public var clients: [String]
    /// The newest last-sync date among its clients' recent syncs, for display.
    public var lastActivityDate: Date?
    /// Bytes of every file in the document's remote folder.
    public var byteCount: Int64

    public init(identifier: String, documentDescription: String? = nil, userInfo: [String: String] = [:], integrityKey: String? = nil,
                clients: [String] = [], lastActivityDate: Date? = nil, byteCount: Int64 = 0) {
        self.identifier = identifier
        self.documentDescription = documentDescription
        self.userInfo = userInfo
        self.integrityKey = integrityKey
        self.clients = clients
        self.lastActivityDate = lastActivityDate
        self.byteCount = byteCount
    }
}
