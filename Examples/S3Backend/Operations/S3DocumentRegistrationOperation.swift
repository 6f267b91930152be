public import FolderSync
public import Foundation

/// Document registration on S3: one folder marker instead of eleven, `documentInfo.plist` published with one
/// conditional PUT, and the deleted-client check as one HEAD.
public final class S3DocumentRegistrationOperation: DocumentRegistrationOperation, @unchecked Sendable {
    let s3: S3FileSystem

    /// The standard operation's configuration (and its question to the app), with S3 steps.
    public init(s3: S3FileSystem, standard: DocumentRegistrationOperation) {
        self.s3 = s3
        super.init(copying: standard)
    }

    public override func deletedClientMarkerExists() async throws -> Bool {
        try await s3.fileExists(at: layout.deletedClientFile(documentIdentifier, client: clientIdentifier))
    }

    /// Nothing to do: the document's folders appear with the first key written in each.
    public override func createDocumentDirectories() async throws {}

    public override func publishDocumentInfoFileIfAbsent(_ data: Data) async throws -> Bool {
        try await s3.putIfAbsent(data, at: layout.documentInfoFile(documentIdentifier))
    }

    /// Only the marker of `SyncChanges/<client>/` (one PUT): it is what shows that this client registered with
    /// the document before it publishes anything (client deletion and listing look for it). The other folders
    /// appear with their first key.
    public override func createClientDirectories() async throws {
        try await s3.createMarker(of: layout.syncChangesDirectory(documentIdentifier, client: clientIdentifier))
    }
}
