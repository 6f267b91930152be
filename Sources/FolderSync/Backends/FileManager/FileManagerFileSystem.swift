import CFileSystem
public import Foundation

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
///
/// The folder is someone else's to fill: symbolic links in it are never followed. The root may be a link or a
/// mount point; below it each folder of a path is opened with `O_NOFOLLOW` relative to the one before
/// (`openat`), and each file too, so a link to a private file or to `/dev/zero` is not read, and a folder linked
/// to a place outside the share is not written through. A link met in a folder's path throws
/// ``FolderSyncError/Code/permissionDenied``, a file that is a link (or not a regular file) throws
/// ``FolderSyncError/Code/corruptFile``, each naming the link: "is a symbolic link; not followed".
///
/// A root that is not there, or a mount that stopped answering (a dead FUSE mount, a stale NFS handle, a server that
/// is down), throws ``FolderSyncError/Code/remoteUnavailable``: the share is away, not damaged. The root itself is
/// never created, and a folder in it (the application's) only when it is the one asked for, never as the parent of
/// a deeper one.
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

    // MARK: Paths resolved without following links

    /// A folder of the tree, open; closed when released.
    final class OpenFolder {
        let fd: Int32
        let path: RemotePath
        init(_ fd: Int32, _ path: RemotePath) {
            self.fd = fd
            self.path = path
        }
        deinit { close(fd) }
    }

    /// Opens the folder at `path`: the root as it is given (a link or a mount point is fine), then each component
    /// below it relative to the one before, never following a link. With `creating`, missing folders are made
    /// (`0755`: the share's folders are shared), but a folder in the root only when it is `path` itself: a share
    /// that went away mid-task (an empty mount point) never gets a tree made from below. A missing root is never
    /// made: it is a share that is not mounted or not there (``FolderSyncError/Code/remoteUnavailable``).
    func openFolder(_ path: RemotePath, creating: Bool = false) throws -> OpenFolder {
        if let fd = openBeneathRoot(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) { return OpenFolder(fd, path) }
        let root = open(rootURL.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard root >= 0 else { throw failOpeningRoot() }
        var folder = OpenFolder(root, .root)
        for component in path.components {
            let here = folder.path.appending(component)
            var next = openat(folder.fd, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            if next < 0, errno == ENOENT, creating, here.components.count > 1 || here == path {
                guard mkdirat(folder.fd, component, LocalFiles.sharedDirectoryMode) == 0 || errno == EEXIST else {
                    throw fail("mkdir", here)
                }
                _ = fsync(folder.fd)
                next = openat(folder.fd, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            }
            guard next >= 0 else { throw failOpening(here, in: folder, folder: true) }
            folder = OpenFolder(next, here)
        }
        return folder
    }

    /// `path` below the root opened in one call that follows no link (`openat2`), or `nil` when that did not open
    /// it (no such item, a link, a kernel without `openat2`): the caller then walks the path one folder at a time,
    /// which makes what is missing and names what refuses. A sync asks for a dozen paths six folders deep: the walk
    /// was two system calls a folder.
    private func openBeneathRoot(_ path: RemotePath, _ flags: Int32) -> Int32? {
        guard !path.isRoot else { return nil }
        let root = open(rootURL.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard root >= 0 else { return nil }
        defer { close(root) }
        let fd = foldersync_open_beneath(root, path.components.joined(separator: "/"), flags, 0)
        return fd >= 0 ? fd : nil
    }

    /// Opens the regular file at `path` for reading, not following a link anywhere in its path; returns the
    /// descriptor and the file's size.
    private func openFile(_ path: RemotePath) throws -> (fd: Int32, size: Int64) {
        var fd = openBeneathRoot(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK) ?? -1
        if fd < 0 {
            let folder = try openFolder(path.parent)
            fd = openat(folder.fd, path.name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
            guard fd >= 0 else { throw failOpening(path, in: folder, folder: false) }
        }
        var info = Glibc.stat()
        guard fstat(fd, &info) == 0 else {
            close(fd)
            throw fail("stat", path)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            if (info.st_mode & S_IFMT) == S_IFDIR {
                throw FolderSyncError(.remoteItemNotFound, "is a folder, not a file", path: path.description)
            }
            throw FolderSyncError(
                .corruptFile, "is not a regular file (a device, pipe or socket); not read", path: path.description)
        }
        // O_NONBLOCK only kept a FIFO from blocking the open; a regular file reads the same without it.
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return (fd, Int64(info.st_size))
    }

    /// The error for an `open` of the root that failed: a root that is not there (or not a folder) is a share that
    /// cannot be reached, not an item missing from it.
    private func failOpeningRoot() -> FolderSyncError {
        let code = errno
        guard code == ENOENT || code == ENOTDIR else {
            return LocalFiles.error("open", path: rootURL.path, errno: code, remote: true)
        }
        return FolderSyncError(
            .remoteUnavailable, "the shared folder is not there (not mounted, moved or removed)",
            path: rootURL.path)
    }

    /// The error for an `openat` of `path` (the entry `path.name` of `folder`) that failed: a symbolic link is
    /// named as such, other failures as their cause.
    private func failOpening(_ path: RemotePath, in folder: OpenFolder, folder isFolder: Bool) -> FolderSyncError {
        let code = errno
        var info = Glibc.stat()
        if code == ELOOP || code == ENOTDIR || code == EMLINK,
            fstatat(folder.fd, path.name, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFLNK
        {
            return FolderSyncError(
                isFolder ? .permissionDenied : .corruptFile, "is a symbolic link; not followed", path: path.description)
        }
        return LocalFiles.error("open", path: path.description, errno: code, remote: true)
    }

    public func contentsOfDirectory(at path: RemotePath) async throws -> [RemoteItem] {
        let folder = try openFolder(path)
        var names: [String] = []
        try forEachEntry(of: folder, at: path) { name, _ in names.append(name) }
        // A file can vanish between the listing and the stat (another client's rename): skip it. Relative to the open
        // folder, so that the kernel does not walk the whole path again for each of thousands of change sets.
        return names.compactMap { name in
            var info = Glibc.stat()
            guard fstatat(folder.fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return nil }
            return withoutUnreliableTags(Self.item(from: info, name: name))
        }
    }

    /// Names and kinds from `readdir` alone (its `d_type`), without a `stat` per file; an entry of unknown type is
    /// asked with `fstatat`. Every item that is not a folder is a file, as in ``contentsOfDirectory(at:)``.
    public func namesOfDirectory(at path: RemotePath) async throws -> [RemoteItem] {
        let folder = try openFolder(path)
        var items: [RemoteItem] = []
        items.reserveCapacity(16)
        try forEachEntry(of: folder, at: path) { name, type in
            var isDirectory = Int32(type) == Int32(DT_DIR)
            if Int32(type) == Int32(DT_UNKNOWN) {
                var info = Glibc.stat()
                guard fstatat(folder.fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return }
                isDirectory = (info.st_mode & S_IFMT) == S_IFDIR
            }
            items.append(RemoteItem(name: name, kind: isDirectory ? .directory : .file))
        }
        return items
    }

    /// Each entry of the open folder but "." and "..", with its `d_type`, in `readdir`'s order.
    private func forEachEntry(of folder: OpenFolder, at path: RemotePath, _ body: (String, UInt8) -> Void) throws {
        // fdopendir takes the descriptor over; the folder object keeps its own copy.
        let listed = dup(folder.fd)
        guard listed >= 0, let directory = fdopendir(listed) else {
            if listed >= 0 { close(listed) }
            throw fail("list", path)
        }
        defer { closedir(directory) }
        while let entry = readdir(directory) {
            // "." and ".." by their bytes, and the name decoded from its length: a client's folder holds hundreds.
            let name: String? = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                let length = strnlen(raw.baseAddress!.assumingMemoryBound(to: CChar.self), raw.count)
                if raw[0] == UInt8(ascii: "."), length == 1 || (length == 2 && raw[1] == UInt8(ascii: ".")) {
                    return nil
                }
                return String(decoding: UnsafeRawBufferPointer(rebasing: raw[..<length]), as: UTF8.self)
            }
            if let name { body(name, entry.pointee.d_type) }
        }
    }

    public func item(at path: RemotePath) async throws -> RemoteItem? {
        guard !path.isRoot else {
            var info = Glibc.stat()
            guard stat(rootURL.path, &info) == 0 else {
                if errno == ENOENT || errno == ENOTDIR { return nil }
                throw fail("stat", path)
            }
            return withoutUnreliableTags(Self.item(from: info, name: ""))
        }
        let folder: OpenFolder
        do {
            folder = try openFolder(path.parent)
        } catch let error as FolderSyncError where error.code == .remoteItemNotFound {
            return nil
        }
        var info = Glibc.stat()
        if fstatat(folder.fd, path.name, &info, AT_SYMLINK_NOFOLLOW) != 0 {
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
            etag: versionTag(info))
    }

    /// `inode-seconds.nanoseconds-size` (built from `String(_:)` of each number: interpolation cost more).
    static func versionTag(_ info: Glibc.stat) -> String {
        var tag = String(UInt64(info.st_ino))
        tag.reserveCapacity(48)
        tag += "-"
        tag += String(Int64(info.st_mtim.tv_sec))
        tag += "."
        tag += String(Int64(info.st_mtim.tv_nsec))
        tag += "-"
        tag += String(Int64(info.st_size))
        return tag
    }

    public func read(_ path: RemotePath) async throws -> Data {
        let (fd, _) = try openFile(path)
        defer { close(fd) }
        return try LocalFiles.read(fd, path: path.description, remote: true)
    }

    /// Opens the file (never through a link), refuses it by its `fstat` size when larger than `maximumSize`, and
    /// reads at most that much: a file that grows while it is read is refused too.
    public func read(_ path: RemotePath, maximumSize: Int) async throws -> Data {
        let (fd, size) = try openFile(path)
        defer { close(fd) }
        try FolderSyncError.checkSize(size, maximumSize: maximumSize, path: path.description)
        return try LocalFiles.read(fd, path: path.description, maximumSize: maximumSize, remote: true)
    }

    public func write(_ data: Data, to path: RemotePath) async throws {
        let folder = try openFolder(path.parent)
        try LocalFiles.writeReplacing(
            in: folder.fd, name: path.name, path: path.description, durably: true, remote: true
        ) { write in
            try write(data)
        }
    }

    public func move(from source: RemotePath, to destination: RemotePath, replacing: Bool) async throws {
        let from = try openFolder(source.parent)
        let to = try openFolder(destination.parent)
        if replacing {
            guard renameat(from.fd, source.name, to.fd, destination.name) == 0 else { throw fail("rename", source) }
        } else if foldersync_renameat_noreplace(from.fd, source.name, to.fd, destination.name) != 0 {
            guard errno == EINVAL || errno == ENOSYS else { throw fail("rename", destination) }
            try linkThenUnlink(from, to, source: source, destination: destination)
        }
        _ = fsync(to.fd)
    }

    /// One rename that refuses to replace, without the folder's `fsync` of ``move(from:to:replacing:)``: the
    /// destination is a fresh name in a removed area, and a rename a crash takes back leaves the file where it was,
    /// published as before, for the next vacuum to move again. A vacuum of 100,000 sets makes 100,000 of these.
    public func moveAside(_ source: RemotePath, to destination: RemotePath) async throws {
        let from = try openFolder(source.parent)
        let to = try openFolder(destination.parent)
        if foldersync_renameat_noreplace(from.fd, source.name, to.fd, destination.name) != 0 {
            guard errno == EINVAL || errno == ENOSYS else { throw fail("rename", destination) }
            try linkThenUnlink(from, to, source: source, destination: destination)
        }
    }

    /// Create-if-absent for file systems without `RENAME_NOREPLACE` (older NFS, some FUSE mounts); on those
    /// without hard links either, a check then a rename.
    private func linkThenUnlink(_ from: OpenFolder, _ to: OpenFolder, source: RemotePath, destination: RemotePath)
        throws
    {
        var info = Glibc.stat()
        if fstatat(from.fd, source.name, &info, AT_SYMLINK_NOFOLLOW) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
            // Folders cannot be hard-linked; rename refuses a non-empty target, which is enough here.
            if fstatat(to.fd, destination.name, &info, AT_SYMLINK_NOFOLLOW) == 0 {
                throw FolderSyncError(.remoteItemExists, "already exists", path: destination.description)
            }
            guard renameat(from.fd, source.name, to.fd, destination.name) == 0 else { throw fail("rename", source) }
            return
        }
        guard linkat(from.fd, source.name, to.fd, destination.name, 0) == 0 else {
            guard [EPERM, EIO, ENOSYS, EOPNOTSUPP].contains(errno) else { throw fail("link", destination) }
            // No hard links either (rclone mount answers EIO): look, then rename. Not atomic: two creators racing
            // for one name can both win, as on a WebDAV server whose MOVE Overwrite: F is a check then a rename.
            if fstatat(to.fd, destination.name, &info, AT_SYMLINK_NOFOLLOW) == 0 {
                throw FolderSyncError(.remoteItemExists, "already exists", path: destination.description)
            }
            guard renameat(from.fd, source.name, to.fd, destination.name) == 0 else { throw fail("rename", source) }
            return
        }
        unlinkat(from.fd, source.name, 0)
    }

    /// Removes a file, or a folder with its contents; a link is removed itself, never what it points to.
    public func remove(_ path: RemotePath) async throws {
        guard !path.isRoot else {
            throw FolderSyncError(.permissionDenied, "the root of the shared folder is not removed", path: "/")
        }
        let folder: OpenFolder
        do {
            folder = try openFolder(path.parent)
        } catch let error as FolderSyncError where error.code == .remoteItemNotFound {
            return
        }
        var info = Glibc.stat()
        guard fstatat(folder.fd, path.name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { return }
            throw fail("stat", path)
        }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            let contents = openat(folder.fd, path.name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard contents >= 0 else {
                if errno == ENOENT { return }
                throw fail("open", path)
            }
            try removeContents(of: OpenFolder(contents, path))
            guard unlinkat(folder.fd, path.name, AT_REMOVEDIR) == 0 || errno == ENOENT else {
                throw fail("rmdir", path)
            }
        } else {
            guard unlinkat(folder.fd, path.name, 0) == 0 || errno == ENOENT else { throw fail("unlink", path) }
        }
    }

    /// Empties an open folder as `rm -r` does, one `unlinkat` a file, each subfolder through its own descriptor (never
    /// by a path, never following a link): the purge of a removal of 100,000 sets.
    private func removeContents(of folder: OpenFolder) throws {
        var entries: [(name: String, type: UInt8)] = []
        try forEachEntry(of: folder, at: folder.path) { entries.append(($0, $1)) }
        for entry in entries {
            let isDirectory = Int32(entry.type) == Int32(DT_DIR)
            if !isDirectory {
                if unlinkat(folder.fd, entry.name, 0) == 0 || errno == ENOENT { continue }
                guard errno == EISDIR else { throw fail("unlink", folder.path.appending(entry.name)) }
            }
            let child = openat(folder.fd, entry.name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard child >= 0 else {
                if errno == ENOENT { continue }
                throw fail("open", folder.path.appending(entry.name))
            }
            try removeContents(of: OpenFolder(child, folder.path.appending(entry.name)))
            guard unlinkat(folder.fd, entry.name, AT_REMOVEDIR) == 0 || errno == ENOENT else {
                throw fail("rmdir", folder.path.appending(entry.name))
            }
        }
    }

    public func createDirectory(at path: RemotePath) async throws {
        _ = try openFolder(path, creating: true)
    }

    public func download(_ path: RemotePath, toLocalFile destination: URL) async throws {
        let (fd, _) = try openFile(path)
        defer { close(fd) }
        try LocalFiles.writeReplacing(destination, durably: false) { write in
            try LocalFiles.readPieces(of: fd, path: path.description, size: 1 << 20, remote: true) { piece, _ in
                try write(piece)
            }
        }
    }

    /// Reads the remote file itself in pieces: a whole store is checked and unpacked as it is read, with no local copy.
    public func readPieces(of path: RemotePath, size: Int, _ body: (Data) throws -> Void) async throws {
        let (fd, _) = try openFile(path)
        defer { close(fd) }
        try LocalFiles.readPieces(of: fd, path: path.description, size: size, remote: true) { piece, _ in
            try body(piece)
        }
    }

    /// Streams the file into place (temporary, fsync, rename, fsync of the folder): a whole store is never loaded
    /// whole.
    public func upload(fromLocalFile source: URL, to path: RemotePath) async throws {
        try await upload(to: path) { write in
            try LocalFiles.readPieces(of: source, size: 1 << 20) { piece, _ in try write(piece) }
        }
    }

    /// Writes the pieces into place as they come, as ``upload(fromLocalFile:to:)`` writes a file's.
    public func upload(to path: RemotePath, producing produce: (_ write: (Data) throws -> Void) throws -> Void)
        async throws
    {
        let folder = try openFolder(path.parent)
        try withExtendedLifetime(folder) {
            try LocalFiles.writeReplacing(
                in: folder.fd, name: path.name, path: path.description, durably: true, remote: true, produce)
        }
    }
}
