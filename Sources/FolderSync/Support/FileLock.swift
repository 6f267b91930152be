import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// An exclusive `flock(2)` on a file, so two processes never sync one document at once.
///
/// `flock` (not `fcntl`) because POSIX record locks are dropped by any
/// unrelated `close()` of the same file in the process. A lock held by another
/// process is waited for on a thread of its own, never on Swift's cooperative pool.
final class FileLock: Sendable {
    private let descriptor: Int32

    private init(descriptor: Int32) { self.descriptor = descriptor }

    /// Waits until the lock on `url` is ours.
    static func acquire(_ url: URL) async throws -> FileLock {
        let fd = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, LocalFiles.privateFileMode)
        guard fd >= 0 else { throw LocalFiles.error("open lock", path: url.path) }
        // Mostly free: taken at once, without a thread (starting one was a tenth of a millisecond of every sync).
        if flock(fd, LOCK_EX | LOCK_NB) == 0 { return FileLock(descriptor: fd) }
        return try await wait(fd, path: url.path)
    }

    /// Waits for the lock another holder has. Not inlined into ``acquire(_:)``: its continuation's type is made when
    /// the function starts, and a process's first `CheckedContinuation<_, Never>` costs a conformance lookup across
    /// every loaded image (0.3 M instructions of a sync that never waits).
    @inline(never)
    private static func wait(_ fd: Int32, path: String) async throws -> FileLock {
        let result: Int32 = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var status: Int32
                repeat { status = flock(fd, LOCK_EX) } while status != 0 && errno == EINTR
                continuation.resume(returning: status == 0 ? 0 : errno)
            }
        }
        guard result == 0 else {
            close(fd)
            throw LocalFiles.error("lock", path: path, errno: result)
        }
        return FileLock(descriptor: fd)
    }

    /// Releases the lock (closing the descriptor releases it too, even if the process dies).
    func release() {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
