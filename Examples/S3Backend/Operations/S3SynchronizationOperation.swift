public import FolderSync
public import Foundation

/// Synchronization on S3. The standard steps are already what S3 does best for most of a sync (one
/// `ListObjectsV2` per folder, one GET per file, one PUT per change set), so only two steps change:
///
/// - A change set is published with `If-None-Match: *`: a published change set is immutable, and the server
///   enforces it. A 412 means this very set is already there (a publish repeated after a crash: the name
///   carries the set's unique identifier), which counts as published.
/// - Whether this client was deleted is one HEAD (the file system's stat would list a folder as well).
public final class S3SynchronizationOperation: SynchronizationOperation, @unchecked Sendable {
    let s3: S3FileSystem

    /// The standard operation's configuration (and its conflict resolver and events), with S3 steps.
    public init(s3: S3FileSystem, standard: SynchronizationOperation) {
        self.s3 = s3
        super.init(copying: standard)
    }

    public override func publishChangeSet(from url: URL, name: String) async throws {
        let path = layout.syncChangesDirectory(documentIdentifier, client: clientIdentifier).appending(name)
        _ = try await s3.putIfAbsent(fileAt: url, at: path)
    }

    public override func deletedClientMarkerExists() async throws -> Bool {
        try await s3.fileExists(at: layout.deletedClientFile(documentIdentifier, client: clientIdentifier))
    }
}
