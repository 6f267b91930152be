import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Durable local file operations in POSIX terms, shared by the file-manager
/// backend and the helper folder.
///
/// `Data.write(options: .atomic)` does not fsync the folder, and
/// `FileManager.replaceItemAt` loses data on Linux, so neither is used.
///
/// Modes: what FolderSync writes locally (`remote: false`: the helper folder, downloads, decrypted copies,
/// backups) is the user's alone, folders `0700` and files `0600` (``privateDirectoryMode``, ``privateFileMode``);
/// the shared folder's files keep `0644` and folders `0755`, since other users may share them.
enum LocalFiles {
    /// The mode of a folder FolderSync creates locally.
    static let privateDirectoryMode: mode_t = 0o700
    /// The mode of a file FolderSync writes locally.
    static let privateFileMode: mode_t = 0o600
    /// The modes of what FolderSync writes in a shared folder.
    static let sharedDirectoryMode: mode_t = 0o755
    static let sharedFileMode: mode_t = 0o644

    /// The mode of a new file: private locally, shared on the remote, unless the caller says.
    static func fileMode(_ mode: mode_t?, remote: Bool) -> mode_t {
        mode ?? (remote ? sharedFileMode : privateFileMode)
    }

    /// The error for a failed system call, mapped to the code that names the cause. On the remote, a mount that
    /// stopped answering is a share that cannot be reached (``unreachableCodes``).
    static func error(_ operation: String, path: String, errno code: Int32 = errno, remote: Bool = false)
        -> FolderSyncError
    {
        let reason = String(cString: strerror(code))
        let message = "\(operation) failed: \(reason)"
        if remote, unreachableCodes.contains(code) {
            return FolderSyncError(.remoteUnavailable, "the shared folder cannot be reached: \(message)", path: path)
        }
        switch code {
        case ENOENT, ENOTDIR: return FolderSyncError(.remoteItemNotFound, message, path: path)
        case EEXIST, ENOTEMPTY: return FolderSyncError(.remoteItemExists, message, path: path)
        case EACCES, EPERM, EROFS: return FolderSyncError(.permissionDenied, message, path: path)
        case ENOSPC, EDQUOT: return FolderSyncError(remote ? .remoteFull : .localStoreFull, message, path: path)
        case EFBIG: return FolderSyncError(remote ? .remoteFull : .localStoreFailed, message, path: path)
        default: return FolderSyncError(remote ? .remoteIOFailed : .localStoreFailed, message, path: path)
        }
    }

    /// What a mounted share answers when it is away rather than damaged: a FUSE mount whose daemon died
    /// (`ENOTCONN`), a stale NFS handle, a server that is down or does not answer, a medium taken out.
    static let unreachableCodes: Set<Int32> = {
        var codes: Set<Int32> = [
            ENOTCONN, ESTALE, ETIMEDOUT, EHOSTDOWN, EHOSTUNREACH, ENETDOWN, ENETUNREACH, ECONNREFUSED,
            ECONNRESET, ECONNABORTED, ENODEV, ENXIO,
        ]
        #if os(Linux)
        codes.insert(ENOMEDIUM)
        #endif
        return codes
    }()

    /// Writes `data` to `url` so that after a crash the file holds either its old bytes or all new ones.
    ///
    /// Temporary file in the same folder (`O_EXCL`), fsync, rename, fsync the folder.
    static func writeDurably(_ data: Data, to url: URL, mode: mode_t? = nil, remote: Bool = false) throws {
        try writeReplacing(url, durably: true, mode: mode, remote: remote) { write in try write(data) }
    }

    /// Replaces `url` with the bytes `produce` hands to its `write` function, piece by piece, so large files stream.
    ///
    /// Readers see the old file or the whole new one (temporary in the same folder, then rename). `durably` adds
    /// the fsyncs that make the result survive a crash; scratch files (downloads) skip them.
    static func writeReplacing(
        _ url: URL, durably: Bool, mode: mode_t? = nil, remote: Bool = false,
        _ produce: (_ write: (Data) throws -> Void) throws -> Void
    ) throws {
        let directory = url.deletingLastPathComponent().path
        let folder = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folder >= 0 else { throw error("create", path: url.path, remote: remote) }
        defer { close(folder) }
        try writeReplacing(
            in: folder, name: url.lastPathComponent, path: url.path, durably: durably, mode: mode, remote: remote,
            produce)
    }

    /// ``writeReplacing(_:durably:mode:remote:_:)`` of the file `name` in the open folder `folder`, whose path is
    /// not walked again (the file-manager backend opens each folder of a remote path without following links).
    /// Errors name `path`.
    static func writeReplacing(
        in folder: Int32, name: String, path: String, durably: Bool, mode: mode_t? = nil, remote: Bool = false,
        _ produce: (_ write: (Data) throws -> Void) throws -> Void
    ) throws {
        let temporary = TemporaryName.make(for: name)
        let fd = openat(
            folder, temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, fileMode(mode, remote: remote))
        guard fd >= 0 else { throw error("create", path: path, remote: remote) }
        var closed = false
        defer {
            if !closed { close(fd) }
        }
        do {
            try produce { data in
                try data.withUnsafeBytes { buffer in
                    var offset = 0
                    while offset < buffer.count {
                        let written = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                        if written < 0 {
                            if errno == EINTR { continue }
                            throw error("write", path: path, remote: remote)
                        }
                        offset += written
                    }
                }
            }
            if durably { guard fsync(fd) == 0 else { throw error("fsync", path: path, remote: remote) } }
            closed = true
            guard close(fd) == 0 else { throw error("close", path: path, remote: remote) }
            guard renameat(folder, temporary, folder, name) == 0 else {
                throw error("rename", path: path, remote: remote)
            }
        } catch {
            unlinkat(folder, temporary, 0)
            throw error
        }
        if durably { _ = fsync(folder) }
    }

    /// Copies `source` to `url` in 1 MiB pieces, never holding the file whole, through a temporary renamed into
    /// place. `durably` also fsyncs the file and the folder (a publish); a download into a scratch folder, verified
    /// before use, does without. `remote` says which side's failures are remote ones in the thrown error.
    static func copy(_ source: URL, to url: URL, durably: Bool, remote: Bool = false) throws {
        try writeReplacing(url, durably: durably, remote: remote) { write in
            try readPieces(of: source, size: 1 << 20, remote: remote) { piece, _ in try write(piece) }
        }
    }

    /// Reads a local file in pieces of `size` bytes (the last one shorter, none for an empty file), so large files
    /// stream.
    ///
    /// `body` gets each piece and whether it is the last one.
    static func readPieces(
        of url: URL, size: Int, skipping offset: Int = 0, remote: Bool = false,
        _ body: (Data, _ isLast: Bool) throws -> Void
    ) throws {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw error("open", path: url.path, remote: remote) }
        defer { close(fd) }
        try readPieces(of: fd, path: url.path, size: size, skipping: offset, remote: remote, body)
    }

    /// ``readPieces(of:size:skipping:remote:_:)`` of an open file; errors name `path`.
    static func readPieces(
        of fd: Int32, path: String, size: Int, skipping offset: Int = 0, remote: Bool = false,
        _ body: (Data, _ isLast: Bool) throws -> Void
    ) throws {
        let url = URL(fileURLWithPath: path)
        guard lseek(fd, off_t(offset), SEEK_SET) >= 0 else { throw error("seek", path: url.path, remote: remote) }
        func next() throws -> Data {
            // Not `Data(count:)`, which zero-fills every piece before the read overwrites it.
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
            var filled = 0
            do {
                while filled < size {
                    let count = Glibc.read(fd, buffer + filled, size - filled)
                    if count < 0 {
                        if errno == EINTR { continue }
                        throw error("read", path: url.path, remote: remote)
                    }
                    if count == 0 { break }
                    filled += count
                }
            } catch {
                buffer.deallocate()
                throw error
            }
            return Data(bytesNoCopy: buffer, count: filled, deallocator: .custom { pointer, _ in pointer.deallocate() })
        }
        var current = try next()
        while !current.isEmpty {
            let following = current.count == size ? try next() : Data()
            try body(current, following.isEmpty)
            current = following
        }
    }

    /// Puts the finished file `source` at `url` for good: fsyncs it, gives it the new name without ever
    /// replacing a file already there (a hard link, then the old name removed), and fsyncs the folder.
    /// - Throws: ``FolderSyncError/Code/localStoreFailed`` naming `url` when a file is already there.
    static func placeDurably(_ source: URL, at url: URL) throws {
        let fd = open(source.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw error("open", path: source.path) }
        let synced = fsync(fd) == 0
        close(fd)
        guard synced else { throw error("fsync", path: source.path) }
        guard link(source.path, url.path) == 0 else {
            if errno == EEXIST {
                throw FolderSyncError(
                    .localStoreFailed, "a file is already there; it was left as it is", path: url.path)
            }
            throw error("link", path: url.path)
        }
        unlink(source.path)
        syncDirectory(url.deletingLastPathComponent().path)
    }

    /// ``syncDirectory(_:)`` on another thread, while the caller fsyncs what the folder holds; wait for the group
    /// before counting the folder durable (waiting more than once is fine).
    static func syncDirectoryInBackground(_ path: String) -> DispatchGroup {
        let done = DispatchGroup()
        DispatchQueue.global(qos: .userInitiated).async(group: done) { syncDirectory(path) }
        return done
    }

    /// Flushes a folder's entries (a rename or a new name) to disk. Best effort: some file systems refuse.
    static func syncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }

    /// The size of a local file, `nil` when it cannot be asked (`stat`, without Foundation's attribute dictionary).
    static func size(of url: URL) -> Int64? {
        var info = stat()
        guard stat(url.path, &info) == 0 else { return nil }
        return Int64(info.st_size)
    }

    /// The first `count` bytes of a local file (fewer when it is shorter).
    static func readPrefix(of url: URL, count: Int, remote: Bool = false) throws -> Data {
        guard let handle = FileHandle(forReadingAtPath: url.path) else {
            throw error("open", path: url.path, remote: remote)
        }
        defer { try? handle.close() }
        do {
            return try handle.read(upToCount: count) ?? Data()
        } catch {
            throw FolderSyncError(
                remote ? .remoteIOFailed : .localStoreFailed, "read failed", path: url.path, underlying: error)
        }
    }

    /// Reads a whole local file, mapping failures to typed errors.
    static func read(_ url: URL, remote: Bool = false) throws -> Data {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw error("open", path: url.path, remote: remote) }
        defer { close(fd) }
        return try read(fd, path: url.path, remote: remote)
    }

    /// Reads an open file to its end, or at most `maximumSize` bytes: a file found longer throws
    /// ``FolderSyncError/Code/corruptFile`` naming `path` (what grows while it is read, as well as what is too large).
    static func read(_ fd: Int32, path: String, maximumSize: Int? = nil, remote: Bool = false) throws -> Data {
        var result = Data()
        // Not zeroed: filling 64 KiB with zeros cost more than reading the small files a sync reads.
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
        defer { chunk.deallocate() }
        while true {
            let count = Glibc.read(fd, chunk.baseAddress!, chunk.count)
            if count < 0 {
                if errno == EINTR { continue }
                throw error("read", path: path, remote: remote)
            }
            if count == 0 { break }
            result.append(chunk.baseAddress!.assumingMemoryBound(to: UInt8.self), count: count)
            if let maximumSize {
                try FolderSyncError.checkSize(Int64(result.count), maximumSize: maximumSize, path: path)
            }
        }
        return result
    }

    /// The bytes an unprivileged writer may still use on the volume holding `directory`, and the volume's size;
    /// `nil` when the system does not say.
    static func volumeSpace(of directory: URL) -> (available: UInt64, total: UInt64)? {
        var info = statvfs()
        guard statvfs(directory.path, &info) == 0 else { return nil }
        let unit = UInt64(info.f_frsize == 0 ? info.f_bsize : info.f_frsize)
        return (UInt64(info.f_bavail) &* unit, UInt64(info.f_blocks) &* unit)
    }

    /// The free space a download must leave on the local disk: 5% of the volume, at most 1 GiB.
    static func reserve(ofVolumeBytes total: UInt64) -> UInt64 { min(total / 20, 1 << 30) }

    /// Refuses to write a file of `byteCount` bytes (the size a downloaded file claims) into `directory` when the
    /// disk would be left with less than its reserve (``reserve(ofVolumeBytes:)``): a remote file that claims more
    /// than the disk holds must not fill it. Checked before the first byte is written.
    /// - Throws: ``FolderSyncError/Code/localStoreFailed`` naming `path` (the remote file).
    static func checkFreeSpace(for byteCount: UInt64, in directory: URL, path: String) throws {
        // Unknown: the writes themselves fail when full.
        guard let (available, total) = volumeSpace(of: directory) else { return }
        let reserve = reserve(ofVolumeBytes: total)
        guard byteCount > available || available - byteCount < reserve else { return }
        throw FolderSyncError(
            .localStoreFailed,
            """
            says it holds \(byteCount) bytes, more than the local disk can take (\(available) bytes free, \(reserve) kept free); not written
            """, path: path)
    }

    /// Creates a folder and its parents; an existing folder is fine. Local folders are created private (`0700`),
    /// remote ones `0755`.
    static func createDirectory(_ url: URL, remote: Bool = false) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue { return }
        let parent = url.deletingLastPathComponent()
        if parent.path != url.path { try createDirectory(parent, remote: remote) }
        if mkdir(url.path, remote ? sharedDirectoryMode : privateDirectoryMode) != 0 && errno != EEXIST {
            throw error("mkdir", path: url.path, remote: remote)
        }
        syncDirectory(parent.path)
    }

    /// Creates the helper folder `url` (and its parents) private to this user, and makes an existing one private:
    /// it holds the registration, staged change sets, downloads, decrypted copies and backups. A folder owned by
    /// another user is left as it is.
    static func createPrivateDirectory(_ url: URL) throws {
        try createDirectory(url)
        var info = stat()
        guard lstat(url.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR, info.st_uid == getuid(),
            info.st_mode & 0o077 != 0
        else { return }
        guard chmod(url.path, info.st_mode & 0o700) == 0 else { throw error("chmod", path: url.path) }
    }

    /// A new folder of this user's alone for scratch files (decrypted copies, downloads being checked):
    /// `foldersync-<uid>-<random>` in `parent` (by default the system's temporary folder), mode `0700`, made with
    /// `mkdtemp`. The caller removes it.
    static func privateScratchDirectory(in parent: URL? = nil) throws -> URL {
        let base = (parent ?? FileManager.default.temporaryDirectory).standardizedFileURL
        var template = Array((base.path + "/foldersync-\(getuid())-XXXXXX").utf8CString)
        // mkdtemp makes it 0700 whatever the umask.
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!).map { String(cString: $0) } }
        guard let made else { throw error("mkdtemp", path: base.path) }
        return URL(fileURLWithPath: made, isDirectory: true)
    }
}
