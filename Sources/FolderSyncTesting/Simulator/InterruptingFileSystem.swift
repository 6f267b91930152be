public import Foundation
public import FolderSync

/// A remote that cancels the running task at a chosen request, to interrupt a sync at a deterministic point.
///
/// Counting requests (rather than waiting for time to pass) makes "cancel
/// during the fifth request" replay exactly. At the chosen request it cancels
/// the current task, then either fails that request with `CancellationError`
/// (as a cancelled network call would) or lets it complete (as a local file
/// operation would), so the engine sees cancellation before, inside and after
/// remote steps.
public final class InterruptingFileSystem: RemoteFileSystem, @unchecked Sendable {
    /// The remote that requests are forwarded to.
    public let base: any RemoteFileSystem
    private let lock = NSLock()
    private var remaining: Int?
    private var failRequest = false
    private var fired = false
    private var cancel: (@Sendable () -> Void)?
    private var observer: (@Sendable () -> Void)?

    /// Wraps `base`, unarmed: requests pass through until ``arm(atRequest:failing:cancel:)``.
    public init(_ base: any RemoteFileSystem) { self.base = base }

    /// At the `request`-th request from now, cancels the task making it, or calls `cancel` instead
    /// (to cancel the app's task that awaits the sync rather than the sync's own task).
    public func arm(atRequest request: Int, failing: Bool, cancel: (@Sendable () -> Void)? = nil) {
        lock.lock(); defer { lock.unlock() }
        remaining = request
        failRequest = failing
        fired = false
        self.cancel = cancel
    }

    /// Stops interrupting; returns whether the armed interruption happened.
    @discardableResult
    public func disarm() -> Bool {
        lock.lock(); defer { lock.unlock() }
        remaining = nil
        return fired
    }

    /// Calls `body` once, just before the next request reaches the remote: to look at local state at a point
    /// inside an operation that has no callback there (a re-join, after its local reset and before registering).
    public func beforeNextRequest(_ body: @escaping @Sendable () -> Void) {
        lock.lock(); defer { lock.unlock() }
        observer = body
    }

    private func checkpoint() throws {
        let observe: (@Sendable () -> Void)? = {
            lock.lock(); defer { lock.unlock() }
            defer { observer = nil }
            return observer
        }()
        observe?()
        let fail: Bool = {
            lock.lock(); defer { lock.unlock() }
            guard let count = remaining else { return false }
            if count > 1 { remaining = count - 1; return false }
            remaining = nil
            fired = true
            if let cancel { cancel() } else { withUnsafeCurrentTask { $0?.cancel() } }
            return failRequest
        }()
        if fail { throw CancellationError() }
    }

    public func contentsOfDirectory(at path: RemotePath) async throws -> [RemoteItem] {
        try checkpoint(); return try await base.contentsOfDirectory(at: path)
    }

    public func item(at path: RemotePath) async throws -> RemoteItem? {
        try checkpoint(); return try await base.item(at: path)
    }

    public func read(_ path: RemotePath) async throws -> Data {
        try checkpoint(); return try await base.read(path)
    }

    public func write(_ data: Data, to path: RemotePath) async throws {
        try checkpoint(); try await base.write(data, to: path)
    }

    public func move(from source: RemotePath, to destination: RemotePath, replacing: Bool) async throws {
        try checkpoint(); try await base.move(from: source, to: destination, replacing: replacing)
    }

    public func remove(_ path: RemotePath) async throws {
        try checkpoint(); try await base.remove(path)
    }

    public func createDirectory(at path: RemotePath) async throws {
        try checkpoint(); try await base.createDirectory(at: path)
    }

    public func download(_ path: RemotePath, toLocalFile url: URL) async throws {
        try checkpoint(); try await base.download(path, toLocalFile: url)
    }

    public func upload(fromLocalFile url: URL, to path: RemotePath) async throws {
        try checkpoint(); try await base.upload(fromLocalFile: url, to: path)
    }
}
