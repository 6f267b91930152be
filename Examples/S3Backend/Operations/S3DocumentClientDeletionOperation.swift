public import FolderSync
import Foundation

/// Client deletion on S3: whether the client is known is asked with HEADs and one-key listings (the file
/// system's stat of a missing file costs a HEAD and a listing).
public final class S3DocumentClientDeletionOperation: DocumentClientDeletionOperation, @unchecked Sendable {
    let s3: S3FileSystem

    /// The standard operation's configuration, with S3 steps.
    public init(s3: S3FileSystem, standard: DocumentClientDeletionOperation) {
        self.s3 = s3
        super.init(copying: standard)
    }

    public override func clientIsKnown() async throws -> Bool {
        let document = documentIdentifier
        let client = deletedClientIdentifier
        for file in [
            layout.recentSyncFile(document, client: client), layout.deletedClientFile(document, client: client),
        ]
        where try await s3.fileExists(at: file) {
            return true
        }
        for folder in [
            layout.syncChangesDirectory(document, client: client), layout.wholeStoreDirectory(document, client: client),
        ]
        where try await s3.containsAnything(below: folder) {
            return true
        }
        return false
    }
}
