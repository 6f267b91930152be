import Foundation

#if canImport(Glibc)
import Glibc
#endif

#if os(Linux)
extension FileManagerFileSystem: RemoteChangeNotifying {
    /// Watches a folder with inotify. On NFS and some FUSE mounts inotify sees only local writes, which is why
    /// watching also polls.
    public func changedNames(in directory: RemotePath) throws -> AsyncStream<String> {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw LocalFiles.error("inotify_init1", path: directory.description, remote: true) }
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE)
        guard inotify_add_watch(fd, url(for: directory).path, mask) >= 0 else {
            close(fd)
            throw LocalFiles.error("inotify_add_watch", path: directory.description, remote: true)
        }
        let (stream, continuation) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingNewest(64))
        let stopped = Locked(false)
        continuation.onTermination = { _ in stopped.withLock { $0 = true } }
        Thread.detachNewThread {
            defer { close(fd) }
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            // Wake at least every quarter second to notice that the watcher was stopped.
            while !stopped.current {
                guard poll(&poller, 1, 250) > 0 else { continue }
                let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
                guard count > 0 else { continue }
                var offset = 0
                while offset + MemoryLayout<inotify_event>.size <= count {
                    let (length, name) = buffer.withUnsafeBytes { raw -> (Int, String) in
                        let event = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                        let nameStart = offset + MemoryLayout<inotify_event>.size
                        let nameBytes = raw[nameStart..<(nameStart + Int(event.len))].prefix { $0 != 0 }
                        return (Int(event.len), String(decoding: nameBytes, as: UTF8.self))
                    }
                    if !name.isEmpty { continuation.yield(name) }
                    offset += MemoryLayout<inotify_event>.size + length
                }
            }
        }
        return stream
    }
}
#endif
