public import FolderSync
import Foundation

/// Vacuum on S3: the whole document is read with one recursive `ListObjectsV2` (a page per 1,000 keys)
/// instead of one listing per folder, and an emptied folder is its marker, if any.
public final class S3VacuumOperation: VacuumOperation, @unchecked Sendable {
    let s3: S3FileSystem

    /// The standard operation's configuration, with S3 steps.
    public init(s3: S3FileSystem, standard: VacuumOperation) {
        self.s3 = s3
        super.init(copying: standard)
    }

    public override func fetchDocumentTree() async throws -> [RemotePath: [RemoteItem]] {
        try await s3.tree(below: layout.documentDirectory(documentIdentifier))
    }

    /// S3 has no empty folders: the folder is gone once its last key is, but for a marker written by
    /// ``S3FileSystem/createDirectory(at:)``, which is removed when nothing else is left under it.
    public override func removeDirectoryIfEmpty(_ path: RemotePath) async throws {
        guard try await s3.filesBelow(path).isEmpty else {
            throw FolderSyncError(.remoteItemExists, "the folder is not empty; left alone", path: path.description)
        }
        try await s3.remove(path)
    }
}
