/// Where a manager is in its registration, as in TICoreDataSync's manager states.
public enum RegistrationState: Sendable, Hashable {
    /// Not registered yet (perhaps configured, waiting for ``ApplicationSyncManager/registerConfigured()``).
    case notRegistered
    /// Registration is running (perhaps paused on a question to the app).
    case registering
    /// Registered: the manager can run its tasks.
    case ableToSync
    /// The last registration failed with this error; registering again is allowed.
    case failed(FolderSyncError)
}

/// Wakes the tasks that wait for a manager to finish registering.
final class RegistrationGate: Sendable {
    private struct State {
        var state: RegistrationState = .notRegistered
        var waiters: [CheckedContinuation<Void, any Error>] = []
    }

    private let storage = Locked(State())

    var state: RegistrationState { storage.current.state }

    /// Moves to `registering`; refuses when a registration is already running.
    func begin(what: String) throws {
        try storage.withLock { storage in
            if storage.state == .registering {
                throw FolderSyncError(.invalidConfiguration, "\(what) is already registering")
            }
            storage.state = .registering
        }
    }

    func finish(_ result: Result<Void, FolderSyncError>) {
        let waiters = storage.withLock { storage in
            switch result {
            case .success: storage.state = .ableToSync
            case .failure(let error): storage.state = .failed(error)
            }
            defer { storage.waiters = [] }
            return storage.waiters
        }
        for waiter in waiters { waiter.resume(with: result.mapError { $0 as any Error }) }
    }

    /// Returns once registered; throws the registration's error if it fails.
    func wait() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            storage.withLock { storage in
                switch storage.state {
                case .ableToSync: continuation.resume()
                case .failed(let error): continuation.resume(throwing: error)
                case .notRegistered, .registering: storage.waiters.append(continuation)
                }
            }
        }
    }
}

extension FolderSyncError {
    /// Wraps any error thrown inside a task as a ``FolderSyncError``: an error that is not one of FolderSync's is
    /// an internal error naming its cause, never taken for a remote failure.
    static func wrapping(_ error: any Error, _ message: String) -> FolderSyncError {
        if let error = error as? FolderSyncError { return error }
        if error is CancellationError { return FolderSyncError(.cancelled, "\(message): cancelled") }
        return FolderSyncError(.internalError, message, underlying: error)
    }

    /// Whether the error stops the document until ``DocumentSyncManager/rejoin()``: the remote wiped or replaced,
    /// the document or this client deleted, this client's identity shared with another installation.
    package var isReset: Bool {
        [.integrityKeyMismatch, .clientDeleted, .documentDeleted, .clientIdentityShared].contains(code)
    }

    /// The application's folder missing from a shared folder where this client knows it existed: an unmounted share
    /// (an empty mount point) or one that cannot be reached, never taken for a wipe.
    static func applicationFolderAway(_ layout: RemoteLayout) -> FolderSyncError {
        var error = FolderSyncError(
            .remoteUnavailable,
            "the shared folder holds no application \(layout.applicationIdentifier): "
                + "it is not mounted or not reachable", path: layout.formatVersionFile.description)
        error.isApplicationFolderMissing = true
        return error
    }

    /// The error as an app sees it from a sync or a registration: a server that cannot be reached (refused, not
    /// resolved, no answer in time, TLS failing) is ``Code/remoteUnavailable``, like a folder that is not mounted.
    var unavailableIfUnreachable: FolderSyncError {
        guard code == .connectionFailed || code == .tlsFailed else { return self }
        return FolderSyncError(.remoteUnavailable, "the shared folder cannot be reached: \(message)", path: path)
    }
}
