/// Runs one sync at a time; requests made while one runs share a single follow-up sync.
///
/// A request during a sync cannot be served by that sync (it may have
/// started before the write the caller wants pushed), so it waits for the
/// next one; any number of such requests share that next one. Cancelling a
/// request cancels the sync it waits for.
actor SyncCoalescer {
    private var running: Task<SyncReport, any Error>?
    private var followUp: Task<SyncReport, any Error>?
    /// How many requests wait for the follow-up sync (for tests).
    private(set) var waitingForFollowUp = 0

    func request(_ sync: @escaping @Sendable () async throws -> SyncReport) async throws -> SyncReport {
        if let followUp {
            waitingForFollowUp += 1
            defer { waitingForFollowUp -= 1 }
            return try await Self.value(of: followUp)
        }
        if let current = running {
            let next = Task { [weak self] () async throws -> SyncReport in
                _ = try? await current.value
                await self?.promoteFollowUp()
                return try await sync()
            }
            followUp = next
            waitingForFollowUp += 1
            defer {
                waitingForFollowUp -= 1
                finish(next)
            }
            return try await Self.value(of: next)
        }
        let task = Task { try await sync() }
        running = task
        defer { finish(task) }
        return try await Self.value(of: task)
    }

    private static func value(of task: Task<SyncReport, any Error>) async throws -> SyncReport {
        try await withTaskCancellationHandler { try await task.value } onCancel: { task.cancel() }
    }

    private func promoteFollowUp() {
        running = followUp
        followUp = nil
    }

    private func finish(_ task: Task<SyncReport, any Error>) {
        if running == task { running = nil }
    }
}
