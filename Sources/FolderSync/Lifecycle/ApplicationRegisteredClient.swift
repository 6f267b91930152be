public import Foundation

/// A client registered with an application, and the documents it syncs.
public struct ApplicationRegisteredClient: Sendable, Hashable {
    /// The client's identifier: the name of its folder in `ClientDevices/`.
    public var identifier: String
    /// From `ClientDevices/<client>/deviceInfo.plist`; `nil` when missing or unreadable.
    public var clientDescription: String?
    /// The app's own information about the client, from its device info; empty when that is missing.
    public var userInfo: [String: String]
    /// When it registered, from its device info; `nil` when that is missing or unreadable.
    public var registrationDate: Date?
    /// Documents it is registered with and not deleted from, sorted.
    public var documents: [String]
    /// Documents it was deleted from, sorted.
    public var deletedFromDocuments: [String]

    /// A listed client; see the properties for each argument.
    public init(
        identifier: String, clientDescription: String? = nil, userInfo: [String: String] = [:],
        registrationDate: Date? = nil,
        documents: [String] = [], deletedFromDocuments: [String] = []
    ) {
        self.identifier = identifier
        self.clientDescription = clientDescription
        self.userInfo = userInfo
        self.registrationDate = registrationDate
        self.documents = documents
        self.deletedFromDocuments = deletedFromDocuments
    }
}
