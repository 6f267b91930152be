import Foundation
@_spi(ModelAdapter) public import FolderSync

/// A remote that cancels the running task at a chosen request, to interrupt a sync at a deterministic point.
///
/// Counting requests (rather than waiting for time to pass) makes "cancel
/// during the fifth request" replay exactly. At the chosen request it cancels
/// the current task, then either fails that request with `CancellationError`
/// (as a cancelled network call would) or lets it complete (as a local file
/// operation would), so the engine sees cancellation before, inside and after
/// remote steps.
public final class InterruptingFileSystem: ForwardingFileSystem, @unchecked Sendable {
    private let lock = NSLock()
    private var remaining: Int?
    private var failRequest = false
    private var fired = false
    private var cancel: (@Sendable () -> Void)?
    private var observer: (@Sendable () -> Void)?

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

    public override func willForward(_ request: Request, path: RemotePath) async throws {
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
}
