public import Foundation

/// A client registered with an application, and the documents it syncs.
public struct ApplicationRegisteredClient: Sendable, Hashable {
    public var identifier: String
    /// From `ClientDevices/<client>/deviceInfo.plist`; `nil` when missing or unreadable.
    public var clientDescription: String?
    public var userInfo: [String: String]
    public var registrationDate: Date?
    /// Documents it is registered with and not deleted from, sorted.
    public var documents: [String]
    /// Documents it was deleted from, sorted.
    public var deletedFromDocuments: [String]

    public init(identifier: String, clientDescription: String? = nil, userInfo: [String: String] = [:], registrationDate: Date? = nil,
                documents: [String] = [], deletedFromDocuments: [String] = []) {
        self.identifier = identifier
        self.clientDescription = clientDescription
        self.userInfo = userInfo
        self.registrationDate = registrationDate
        self.documents = documents
        self.deletedFromDocuments = deletedFromDocuments
    }
}
