import FolderSync
import Foundation

/// Counts the remote operations a sync makes, and how many of them read a change set.
final class CountingFileSystem: RemoteFileSystem, @unchecked Sendable {
    struct Counts: Sendable {
        var requests = 0
        var changeSetReads = 0
    }

    let base: any RemoteFileSystem
    private let lock = NSLock()
    private var counts = Counts()
    /// For profiling (`FOLDERSYNC_BENCH_REQUESTS=1`): each operation's start and end on standard error, in ms since
    /// this object was made, to see which round trips follow one another.
    private let traceStart: ContinuousClock.Instant? =
        ProcessInfo.processInfo.environment["FOLDERSYNC_BENCH_REQUESTS"] != nil ? .now : nil

    init(_ base: any RemoteFileSystem) { self.base = base }

    private func traced<T>(_ operation: String, _ path: RemotePath, _ body: () async throws -> T) async rethrows -> T {
        guard let traceStart else { return try await body() }
        let started = (ContinuousClock.now - traceStart).seconds * 1000
        defer {
            let ended = (ContinuousClock.now - traceStart).seconds * 1000
            FileHandle.standardError.write(
                Data(String(format: "request %8.1f %8.1f ms %@ %@\n", started, ended, operation, path.description).utf8)
            )
        }
        return try await body()
    }

    /// The counts so far, and starts again from zero.
    func take() -> Counts {
        lock.lock()
        defer { lock.unlock() }
        let taken = counts
        counts = Counts()
        return taken
    }

    private func count(reading path: RemotePath? = nil) {
        lock.lock()
        counts.requests += 1
        if path?.name.hasSuffix(".syncchg") == true { counts.changeSetReads += 1 }
        lock.unlock()
    }

    func contentsOfDirectory(at path: RemotePath) async throws -> [RemoteItem] {
        count()
        return try await traced("list", path) { try await base.contentsOfDirectory(at: path) }
    }

    func namesOfDirectory(at path: RemotePath) async throws -> [RemoteItem] {
        count()
        return try await traced("list", path) { try await base.namesOfDirectory(at: path) }
    }

    func item(at path: RemotePath) async throws -> RemoteItem? {
        count()
        return try await traced("item", path) { try await base.item(at: path) }
    }

    func read(_ path: RemotePath) async throws -> Data {
        count(reading: path)
        return try await traced("read", path) { try await base.read(path) }
    }

    /// Forwarded, not left to the protocol's default, which asks for the size first: one request more than the
    /// backend makes (WebDAV refuses a large file by its `Content-Length` in the same GET).
    func read(_ path: RemotePath, maximumSize: Int) async throws -> Data {
        count(reading: path)
        return try await traced("read", path) { try await base.read(path, maximumSize: maximumSize) }
    }

    func write(_ data: Data, to path: RemotePath) async throws {
        count()
        try await traced("write", path) { try await base.write(data, to: path) }
    }

    func move(from source: RemotePath, to destination: RemotePath, replacing: Bool) async throws {
        count()
        try await traced("move", destination) {
            try await base.move(from: source, to: destination, replacing: replacing)
        }
    }

    /// The base's move aside (one rename locally, one `MOVE` over WebDAV), so that a vacuum's moves are what is timed.
    func moveAside(_ source: RemotePath, to destination: RemotePath) async throws {
        count()
        try await traced("moveAside", destination) { try await base.moveAside(source, to: destination) }
    }

    /// How far ahead of the base's clock this tells the folder's time: a vacuum run "days later", to purge.
    var folderClockAhead: TimeInterval = 0

    /// The base's clock (one request counted), `folderClockAhead` later.
    func recordedTime(in folder: RemotePath) async throws -> Date? {
        count()
        return try await traced("clock", folder) { try await base.recordedTime(in: folder) }?.addingTimeInterval(
            folderClockAhead)
    }

    func remove(_ path: RemotePath) async throws {
        count()
        try await traced("remove", path) { try await base.remove(path) }
    }

    func createDirectory(at path: RemotePath) async throws {
        count()
        try await traced("mkdir", path) { try await base.createDirectory(at: path) }
    }

    func download(_ path: RemotePath, toLocalFile url: URL) async throws {
        count(reading: path)
        try await traced("download", path) { try await base.download(path, toLocalFile: url) }
    }

    func readPieces(of path: RemotePath, size: Int, _ body: (Data) throws -> Void) async throws {
        count(reading: path)
        try await traced("readPieces", path) { try await base.readPieces(of: path, size: size, body) }
    }

    func upload(fromLocalFile url: URL, to path: RemotePath) async throws {
        count()
        try await traced("upload", path) { try await base.upload(fromLocalFile: url, to: path) }
    }

    func upload(to path: RemotePath, producing produce: (_ write: (Data) throws -> Void) throws -> Void) async throws {
        count()
        try await traced("upload", path) { try await base.upload(to: path, producing: produce) }
    }
}
