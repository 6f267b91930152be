public import FolderSync
public import Foundation

/// Whole-store upload on S3: each file is PUT straight under its final key, store first, manifest last.
///
/// The standard steps stage both files in `TemporaryFiles/WholeStore/<client>/` and move them into place,
/// because a file system write can be seen half done. An S3 PUT never can (the object appears whole when
/// the upload completes), and S3 has no move (a copy and a delete, per file). A reader that finds the new
/// store with the old manifest sees that they do not match and skips the pair, as it would during a move.
public final class S3WholeStoreUploadOperation: WholeStoreUploadOperation, @unchecked Sendable {
    let s3: S3FileSystem

    /// The standard operation's configuration, with S3 steps.
    public init(s3: S3FileSystem, standard: WholeStoreUploadOperation) {
        self.s3 = s3
        super.init(copying: standard)
    }

    /// Nothing to stage.
    public override func prepareStagingDirectory() async throws {}

    /// Uploads the file under its final key, in one PUT.
    public override func uploadStagedFile(from url: URL, name: String) async throws {
        try await s3.upload(
            fromLocalFile: url,
            to: layout.wholeStoreDirectory(documentIdentifier, client: clientIdentifier).appending(name))
    }

    /// Nothing to move: the upload published the file.
    public override func publishStagedFile(name: String) async throws {}
}
