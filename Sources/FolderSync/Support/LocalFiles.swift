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
enum LocalFiles {
    /// The error for a failed system call, mapped to the code that names the cause.
    static func error(_ operation: String, path: String, errno code: Int32 = errno, remote: Bool = false) -> FolderSyncError {
        let reason = String(cString: strerror(code))
        let message = "\(operation) failed: \(reason)"
        switch code {
        case ENOENT, ENOTDIR: return FolderSyncError(.remoteItemNotFound, message, path: path)
        case EEXIST, ENOTEMPTY: return FolderSyncError(.remoteItemExists, message, path: path)
        case EACCES, EPERM, EROFS: return FolderSyncError(.permissionDenied, message, path: path)
        case ENOSPC, EDQUOT, EFBIG: return FolderSyncError(.remoteFull, message, path: path)
        default: return FolderSyncError(remote ? .remoteIOFailed : .localStoreFailed, message, path: path)
        }
    }

    /// Writes `data` to `url` so that after a crash the file holds either its old bytes or all new ones.
    ///
    /// Temporary file in the same folder (`O_EXCL`), fsync, rename, fsync the folder.
    static func writeDurably(_ data: Data, to url: URL, remote: Bool = false) throws {
        let directory = url.deletingLastPathComponent().path
        let temporary = directory + "/" + TemporaryName.make(for: url.lastPathComponent)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw error("create", path: url.path, remote: remote) }
        var closed = false
        defer {
            if !closed { close(fd) }
        }
        do {
            try data.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        throw error("write", path: url.path, remote: remote)
                    }
                    offset += written
                }
            }
            guard fsync(fd) == 0 else { throw error("fsync", path: url.path, remote: remote) }
            closed = true
            guard close(fd) == 0 else { throw error("close", path: url.path, remote: remote) }
            guard rename(temporary, url.path) == 0 else { throw error("rename", path: url.path, remote: remote) }
        } catch {
            unlink(temporary)
            throw error
        }
        syncDirectory(directory)
    }

    /// Copies `source` to `url` in chunks, with the guarantees of ``writeDurably(_:to:remote:)``.
    static func copyDurably(from source: URL, to url: URL, remote: Bool = false) throws {
        let input = open(source.path, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw error("open", path: source.path) }
        defer { close(input) }
        let directory = url.deletingLastPathComponent().path
        let temporary = directory + "/" + TemporaryName.make(for: url.lastPathComponent)
        let output = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard output >= 0 else { throw error("create", path: url.path, remote: remote) }
        var closed = false
        defer { if !closed { close(output) } }
        do {
            var chunk = [UInt8](repeating: 0, count: 1 << 20)
            while true {
                let count = chunk.withUnsafeMutableBytes { Glibc.read(input, $0.baseAddress!, $0.count) }
                if count < 0 {
                    if errno == EINTR { continue }
                    throw error("read", path: source.path)
                }
                if count == 0 { break }
                var offset = 0
                while offset < count {
                    let written = chunk.withUnsafeBytes { Glibc.write(output, $0.baseAddress! + offset, count - offset) }
                    if written < 0 {
                        if errno == EINTR { continue }
                        throw error("write", path: url.path, remote: remote)
                    }
                    offset += written
                }
            }
            guard fsync(output) == 0 else { throw error("fsync", path: url.path, remote: remote) }
            closed = true
            guard close(output) == 0 else { throw error("close", path: url.path, remote: remote) }
            guard rename(temporary, url.path) == 0 else { throw error("rename", path: url.path, remote: remote) }
        } catch {
            unlink(temporary)
            throw error
        }
        syncDirectory(directory)
    }

    /// Flushes a folder's entries (a rename or a new name) to disk. Best effort: some file systems refuse.
    static func syncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }

    /// Reads a whole local file, mapping failures to typed errors.
    static func read(_ url: URL, remote: Bool = false) throws -> Data {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw error("open", path: url.path, remote: remote) }
        defer { close(fd) }
        var result = Data()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw error("read", path: url.path, remote: remote)
            }
            if count == 0 { break }
            result.append(contentsOf: chunk[0..<count])
        }
        return result
    }

    /// Creates a folder and its parents; an existing folder is fine.
    static func createDirectory(_ url: URL, remote: Bool = false) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue { return }
        let parent = url.deletingLastPathComponent()
        if parent.path != url.path { try createDirectory(parent, remote: remote) }
        if mkdir(url.path, 0o755) != 0 && errno != EEXIST {
            throw error("mkdir", path: url.path, remote: remote)
        }
        syncDirectory(parent.path)
    }
}
