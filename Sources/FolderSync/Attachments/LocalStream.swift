import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A local file read or written in chunks, with failures mapped to ``FolderSyncError``: attachments of any
/// size pass through a fixed buffer, never whole in memory.
final class LocalStream {
    private let handle: FileHandle
    private let path: String

    init(reading url: URL) throws {
        path = url.path
        do { handle = try FileHandle(forReadingFrom: url) } catch { throw Self.failure("open", url.path, error) }
    }

    /// Creates (or truncates) `url`, a file of this user's alone (``LocalFiles/privateFileMode``).
    init(writing url: URL) throws {
        path = url.path
        let fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, LocalFiles.privateFileMode)
        guard fd >= 0 else { throw LocalFiles.error("create", path: url.path) }
        handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
    }

    deinit { try? handle.close() }

    /// Up to `count` bytes; empty at the end of the file.
    func read(_ count: Int) throws -> Data {
        do { return try handle.read(upToCount: count) ?? Data() } catch { throw Self.failure("read", path, error) }
    }

    func write(_ data: Data) throws {
        do { try handle.write(contentsOf: data) } catch { throw Self.failure("write", path, error) }
    }

    /// Closes the file, first flushing it to disk unless it is a scratch file (`durably: false`) that is read once
    /// and removed: its fsync made the disk write what nobody reads after a crash.
    func close(durably: Bool = true) throws {
        do {
            if durably { try handle.synchronize() }
            try handle.close()
        } catch { throw Self.failure("close", path, error) }
    }

    private static func failure(_ operation: String, _ path: String, _ error: any Error) -> FolderSyncError {
        FolderSyncError(.localStoreFailed, "\(operation) failed", path: path, underlying: error)
    }
}
