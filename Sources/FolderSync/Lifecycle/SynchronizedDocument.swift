public import Foundation

/// A document some client synchronized through the remote, as listed for choosing one to download or delete.
public struct SynchronizedDocument: Sendable, Hashable {
    /// The document's identifier: the name of its folder in `Documents/`.
    public var identifier: String
    /// From `documentInfo.plist`; `nil` when it is missing or unreadable (a document being created, or damaged).
    public var documentDescription: String?
    /// The app's own information about the document, from `documentInfo.plist`; empty when that is missing.
    public var userInfo: [String: String]
    /// The document's current epoch, from `documentInfo.plist`; `nil` when that is missing or unreadable.
    public var integrityKey: String?
    /// Registered clients that are not deleted, sorted.
    public var clients: [String]
    /// The newest last-sync date among its clients' recent syncs, for display.
    public var lastActivityDate: Date?
    /// Bytes of every file in the document's remote folder.
    public var byteCount: Int64

    /// A listed document; see the properties for each argument.
    public init(
        identifier: String, documentDescription: String? = nil, userInfo: [String: String] = [:],
        integrityKey: String? = nil,
        clients: [String] = [], lastActivityDate: Date? = nil, byteCount: Int64 = 0
    ) {
        self.identifier = identifier
        self.documentDescription = documentDescription
        self.userInfo = userInfo
        self.integrityKey = integrityKey
        self.clients = clients
        self.lastActivityDate = lastActivityDate
        self.byteCount = byteCount
    }
}
