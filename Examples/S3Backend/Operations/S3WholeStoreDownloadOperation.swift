public import FolderSync
import Foundation

/// Whole-store download on S3: one listing of every key under `WholeStore/` finds the clients that have a
/// manifest, so a client folder without one costs no failed GET.
public final class S3WholeStoreDownloadOperation: WholeStoreDownloadOperation, @unchecked Sendable {
    let s3: S3FileSystem

    /// The standard operation's configuration (and its delegate callbacks), with S3 steps.
    public init(s3: S3FileSystem, standard: WholeStoreDownloadOperation) {
        self.s3 = s3
        super.init(copying: standard)
    }

    public override func fetchWholeStoreClients() async throws -> [String] {
        let folder = layout.wholeStoreDirectory(documentIdentifier)
        return try await s3.filesBelow(folder).compactMap { file in
            let relative = file.path.components.dropFirst(folder.components.count)
            guard relative.count == 2, relative.last == RemoteLayout.appliedSyncChangeSetsFileName else { return nil }
            return relative.first
        }
    }
}
