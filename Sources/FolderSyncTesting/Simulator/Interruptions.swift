@_spi(ModelAdapter) public import FolderSync
import Foundation

/// Cancels the running task at a chosen request of a remote (``remote(over:)``), to interrupt a sync at a
/// deterministic point.
///
/// Counting requests (rather than waiting for time to pass) makes "cancel
/// during the fifth request" replay exactly. At the chosen request it cancels
/// the current task, then either fails that request with `CancellationError`
/// (as a cancelled network call would) or lets it complete (as a local file
/// operation would), so the engine sees cancellation before, inside and after
/// remote steps.
public final class Interruptions: Sendable {
    private struct State {
        var remaining: Int?
        var failRequest = false
        var fired = false
        var cancel: (@Sendable () -> Void)?
        var observer: (@Sendable () -> Void)?
    }
    private let state = Locked(State())

    /// Nothing armed.
    public init() {}

    /// `base`, each request of which counts towards the armed interruption.
    public func remote(over base: any RemoteFileSystem) -> any RemoteFileSystem {
        ForwardingFileSystem(base) { [self] _, _ in try willForward() }
    }

    /// At the `request`-th request from now, cancels the task making it, or calls `cancel` instead
    /// (to cancel the app's task that awaits the sync rather than the sync's own task).
    public func arm(atRequest request: Int, failing: Bool, cancel: (@Sendable () -> Void)? = nil) {
        state.withLock { state in
            state.remaining = request
            state.failRequest = failing
            state.fired = false
            state.cancel = cancel
        }
    }

    /// Stops interrupting; returns whether the armed interruption happened.
    @discardableResult
    public func disarm() -> Bool {
        state.withLock { state in
            state.remaining = nil
            return state.fired
        }
    }

    /// Calls `body` once, just before the next request reaches the remote: to look at local state at a point
    /// inside an operation that has no callback there (a re-join, after its local reset and before registering).
    public func beforeNextRequest(_ body: @escaping @Sendable () -> Void) {
        state.withLock { $0.observer = body }
    }

    private func willForward() throws {
        let observe = state.withLock { state in
            defer { state.observer = nil }
            return state.observer
        }
        observe?()
        let fail = state.withLock { state -> Bool in
            guard let count = state.remaining else { return false }
            if count > 1 {
                state.remaining = count - 1
                return false
            }
            state.remaining = nil
            state.fired = true
            if let cancel = state.cancel { cancel() } else { withUnsafeCurrentTask { $0?.cancel() } }
            return state.failRequest
        }
        if fail { throw CancellationError() }
    }
}
