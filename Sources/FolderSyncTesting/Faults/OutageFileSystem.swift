@_spi(ModelAdapter) public import FolderSync
public import Foundation

/// A shared folder that goes away and comes back: a share unmounted (its mount point an empty folder), the folder
/// moved away, or a server that does not answer.
///
/// While the folder is away, reads find nothing there (or fail as an unreachable server's do), and every write is
/// refused and remembered in ``writesWhileAway``: a client must never write into a folder that is not its share,
/// since what it writes there hides the real tree when the share is mounted again. Outside an outage every
/// request reaches `base` unchanged.
///
/// `@unchecked Sendable` as its base class is (Swift asks a subclass to say so again): its own state is in `Locked`s.
public final class OutageFileSystem: ForwardingFileSystem, @unchecked Sendable {
    /// How the folder is away.
    public enum Outage: String, Sendable, CaseIterable {
        /// The mount point is there and empty: the root lists nothing, everything under it is missing.
        case emptyMountPoint
        /// The folder itself is gone (moved away, its parent unmounted).
        case folderMissing
        /// The server does not answer: every request fails with `connectionFailed`.
        case serverDown
    }

    private let current = Locked<Outage?>(nil)
    private let writes = Locked<[String]>([])

    /// The outage now, or `nil` when the folder is there.
    public var outage: Outage? {
        get { current.current }
        set { current.withLock { $0 = newValue } }
    }

    /// The writes that reached an empty mount point or a missing folder (`"createDirectory a/b"`), oldest first.
    public var writesWhileAway: [String] { writes.current }

    public override func willForward(_ request: Request, path: RemotePath) async throws {
        guard let outage else { return }
        switch (outage, request) {
        case (.serverDown, _):
            throw FolderSyncError(
                .connectionFailed, "the server did not answer (simulated outage)", path: path.description)
        case (_, .list), (_, .stat), (_, .read), (_, .download):
            // Answered below, without reaching `base`.
            return
        default:
            writes.withLock { $0.append("\(request.rawValue) \(path)") }
            throw FolderSyncError(
                .remoteIOFailed, "the shared folder is away: \(request.rawValue) refused (simulated outage)",
                path: path.description)
        }
    }

    public override func contentsOfDirectory(at path: RemotePath) async throws -> [RemoteItem] {
        try await willForward(.list, path: path)
        switch outage {
        case nil: return try await base.contentsOfDirectory(at: path)
        case .emptyMountPoint where path.isRoot: return []
        default: throw Self.notFound(path)
        }
    }

    public override func item(at path: RemotePath) async throws -> RemoteItem? {
        try await willForward(.stat, path: path)
        switch outage {
        case nil: return try await base.item(at: path)
        case .emptyMountPoint where path.isRoot: return RemoteItem(name: "", kind: .directory)
        default: return nil
        }
    }

    public override func read(_ path: RemotePath) async throws -> Data {
        try await willForward(.read, path: path)
        guard outage == nil else { throw Self.notFound(path) }
        return try await base.read(path)
    }

    public override func read(_ path: RemotePath, maximumSize: Int) async throws -> Data {
        try await willForward(.read, path: path)
        guard outage == nil else { throw Self.notFound(path) }
        return try await base.read(path, maximumSize: maximumSize)
    }

    public override func download(_ path: RemotePath, toLocalFile url: URL) async throws {
        try await willForward(.download, path: path)
        guard outage == nil else { throw Self.notFound(path) }
        try await base.download(path, toLocalFile: url)
    }

    public override func readPieces(of path: RemotePath, size: Int, _ body: (Data) throws -> Void) async throws {
        try await willForward(.download, path: path)
        guard outage == nil else { throw Self.notFound(path) }
        try await base.readPieces(of: path, size: size, body)
    }

    private static func notFound(_ path: RemotePath) -> FolderSyncError {
        FolderSyncError(.remoteItemNotFound, "no such file or folder", path: path.description)
    }
}
