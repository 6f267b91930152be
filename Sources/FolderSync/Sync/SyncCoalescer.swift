/// Runs one sync at a time; requests made while one runs share a single follow-up sync.
///
/// A request during a sync cannot be served by that sync (it may have
/// started before the write the caller wants pushed), so it waits for the
/// next one; any number of such requests share that next one.
///
/// Syncs run in tasks of their own, so cancelling a caller does not cancel
/// them by itself: a sync is cancelled when every caller waiting for it has
/// been cancelled (one caller's cancellation never fails another caller's sync).
actor SyncCoalescer {
    private var running: SharedSync?
    private var followUp: SharedSync?

    /// How many callers wait for the follow-up sync (for tests).
    var waitingForFollowUp: Int { followUp?.waiters ?? 0 }

    func request(_ sync: @escaping @Sendable () async throws -> SyncReport) async throws -> SyncReport {
        let shared: SharedSync
        if let followUp, followUp.join() {
            shared = followUp
        } else if let previous = followUp ?? running {
            // A follow-up whose callers all gave up is cancelled: queue a new one behind it.
            let next = SharedSync()
            next.start { [weak self] in
                _ = try? await previous.result()
                await self?.promote(next)
                return try await sync()
            }
            _ = next.join()
            followUp = next
            shared = next
        } else {
            shared = SharedSync()
            shared.start(sync)
            _ = shared.join()
            running = shared
        }
        defer { finish(shared) }
        return try await shared.wait()
    }

    private func promote(_ next: SharedSync) {
        if followUp === next { followUp = nil }
        running = next
    }

    private func finish(_ shared: SharedSync) {
        if running === shared { running = nil }
    }
}

/// One sync task and how many callers still wait for it.
private final class SharedSync: Sendable {
    private struct State {
        var task: Task<SyncReport, any Error>?
        var waiters = 0
        var abandoned = false
    }

    private let state = Locked(State())

    var waiters: Int { state.current.waiters }

    func start(_ body: @escaping @Sendable () async throws -> SyncReport) {
        let task = Task(operation: body)
        state.withLock { $0.task = task }
    }

    /// Counts one more caller; `false` when every earlier caller was cancelled (the sync is being cancelled).
    func join() -> Bool {
        state.withLock { state in
            guard !state.abandoned else { return false }
            state.waiters += 1
            return true
        }
    }

    /// Waits for the sync; if the caller is cancelled and was the last one waiting, cancels the sync.
    func wait() async throws -> SyncReport {
        try await withTaskCancellationHandler {
            try await result()
        } onCancel: {
            let abandoned = state.withLock { state -> Task<SyncReport, any Error>? in
                state.waiters -= 1
                guard state.waiters == 0 else { return nil }
                state.abandoned = true
                return state.task
            }
            abandoned?.cancel()
        }
    }

    func result() async throws -> SyncReport {
        guard let task = state.current.task else { throw CancellationError() }
        return try await task.value
    }
}
