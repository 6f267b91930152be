public import Foundation
import CFileSystem
#if canImport(Glibc)
import Glibc
#endif

/// The remote file system of a local path, an NFS export or a mounted share.
///
/// Every write is durable and atomic (temporary file in the same folder,
/// fsync, rename, fsync of the folder); "publish if absent" uses
/// `renameat2(RENAME_NOREPLACE)` where the file system has it and
/// `link(2)` + `unlink(2)` where it does not, so concurrent creators never
/// overwrite each other.
public struct FileManagerFileSystem: RemoteFileSystem {
    /// The folder that holds the shared tree.
    public let rootURL: URL
    /// Whether stat can tell that a file changed: not on FUSE mounts (rclone mount of a WebDAV share keeps an
    /// inode per path and whole-second times, so a marker replaced within a second with the same size looks
    /// unchanged). Without version tags, sync reads every marker.
    private let hasVersionTags: Bool

    /// A file system whose root is the local folder `rootURL`: remote paths resolve under it.
    public init(rootURL: URL) {
        self.rootURL = rootURL.standardizedFileURL
        hasVersionTags = foldersync_is_fuse(self.rootURL.path) == 0
    }

    /// The local URL of a remote path.
    public func url(for path: RemotePath) -> URL {
        path.components.reduce(rootURL) { $0.appendingPathComponent($1, isDirectory: false) }
    }

    private func fail(_ operation: String, _ path: RemotePath) -> FolderSyncError {
        LocalFiles.error(operation, path: path.description, remote: true)
    }

    public func contentsOfDirectory(at path: RemotePath) async throws -> [RemoteItem] {
        let directoryPath = url(for: path).path
        guard let directory = opendir(directoryPath) else { throw fail("list", path) }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        // A file can vanish between the listing and the stat (another client's rename): skip it. Relative to the open
        // folder, so that the kernel does not walk the whole path again for each of thousands of change sets.
        let folder = dirfd(directory)
        return names.compactMap { name in
            var info = Glibc.stat()
            guard fstatat(folder, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
            return withoutUnreliableTags(Self.item(from: info, name: name))
        }
    }

    public func item(at path: RemotePath) async throws -> RemoteItem? {
        let local = url(for: path).path
        var info = Glibc.stat()
        if lstat(local, &info) != 0 {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw fail("stat", path)
        }
        return withoutUnreliableTags(Self.item(from: info, name: path.name))
    }

    private func withoutUnreliableTags(_ item: RemoteItem) -> RemoteItem {
        var item = item
        if !hasVersionTags { item.etag = nil }
        return item
    }

    private static func item(from info: Glibc.stat, name: String) -> RemoteItem {
        let isDirectory = (info.st_mode & S_IFMT) == S_IFDIR
        let seconds = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
        return RemoteItem(
            name: name,
            kind: isDirectory ? .directory : .file,
            size: isDirectory ? nil : Int64(info.st_size),
            modificationDate: Date(timeIntervalSince1970: seconds),
            etag: "\(info.st_ino)-\(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)-\(info.st_size)")
    }

    public func read(_ path: RemotePath) async throws -> Data {
        try LocalFiles.read(url(for: path), remote: true)
    }

    public func write(_ data: Data, to path: RemotePath) async throws {
        try LocalFiles.writeDurably(data, to: url(for: path), remote: true)
    }

    /// Streams the file in chunks (attachments of any size), durably and atomically like ``write(_:to:)``.
    public func move(from source: RemotePath, to destination: RemotePath, replacing: Bool) async throws {
        let from = url(for: source).path
        let to = url(for: destination).path
        if replacing {
            guard rename(from, to) == 0 else { throw fail("rename", source) }
        } else if foldersync_rename_noreplace(from, to) != 0 {
            guard errno == EINVAL || errno == ENOSYS else { throw fail("rename", destination) }
            try linkThenUnlink(from, to, source: source, destination: destination)
        }
        LocalFiles.syncDirectory(url(for: destination.parent).path)
    }

    /// Create-if-absent for file systems without `RENAME_NOREPLACE` (older NFS, some FUSE mounts); on those
    /// without hard links either, a check then a rename.
    private func linkThenUnlink(_ from: String, _ to: String, source: RemotePath, destination: RemotePath) throws {
        var info = Glibc.stat()
        if lstat(from, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
            // Folders cannot be hard-linked; rename refuses a non-empty target, which is enough here.
            if lstat(to, &info) == 0 { throw FolderSyncError(.remoteItemExists, "already exists", path: destination.description) }
            guard rename(from, to) == 0 else { throw fail("rename", source) }
            return
        }
        guard link(from, to) == 0 else {
            guard [EPERM, EIO, ENOSYS, EOPNOTSUPP].contains(errno) else { throw fail("link", destination) }
            // No hard links either (rclone mount answers EIO): look, then rename. Not atomic: two creators racing
            // for one name can both win, as on a WebDAV server whose MOVE Overwrite: F is a check then a rename.
            if lstat(to, &info) == 0 { throw FolderSyncError(.remoteItemExists, "already exists", path: destination.description) }
            guard rename(from, to) == 0 else { throw fail("rename", source) }
            return
        }
        unlink(from)
    }

    public func remove(_ path: RemotePath) async throws {
        let local = url(for: path)
        var info = Glibc.stat()
        guard lstat(local.path, &info) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { return }
            throw fail("stat", path)
        }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            for child in try await contentsOfDirectory(at: path) {
                try await remove(path.appending(child.name))
            }
            guard rmdir(local.path) == 0 || errno == ENOENT else { throw fail("rmdir", path) }
        } else {
            guard unlink(local.path) == 0 || errno == ENOENT else { throw fail("unlink", path) }
        }
    }

    public func createDirectory(at path: RemotePath) async throws {
        try LocalFiles.createDirectory(url(for: path), remote: true)
    }

    public func download(_ path: RemotePath, toLocalFile destination: URL) async throws {
        let source = url(for: path)
        guard FileManager.default.fileExists(atPath: source.path) else {
            throw FolderSyncError(.remoteItemNotFound, "no such file", path: path.description)
        }
        try LocalFiles.copy(source, to: destination, durably: false, remote: true)
    }

    /// Reads the remote file itself in pieces: a whole store is checked and unpacked as it is read, with no local copy.
    public func readPieces(of path: RemotePath, size: Int, _ body: (Data) throws -> Void) async throws {
        let source = url(for: path)
        guard FileManager.default.fileExists(atPath: source.path) else {
            throw FolderSyncError(.remoteItemNotFound, "no such file", path: path.description)
        }
        try LocalFiles.readPieces(of: source, size: size, remote: true) { piece, _ in try body(piece) }
    }

    /// Streams the file into place (temporary, fsync, rename, fsync of the folder): a whole store is never loaded whole.
    public func upload(fromLocalFile source: URL, to path: RemotePath) async throws {
        try LocalFiles.copy(source, to: url(for: path), durably: true, remote: true)
    }
}
