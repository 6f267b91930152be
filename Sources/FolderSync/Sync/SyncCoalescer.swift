/// Runs one sync at a time; requests made while one runs share a single follow-up sync.
///
/// A request during a sync cannot be served by that sync (it may have
/// started before the write the caller wants pushed), so it waits for the
/// next one; any number of such requests share that next one.
actor SyncCoalescer {
    private var running: Task<SyncReport, any Error>?
    private var followUp: Task<SyncReport, any Error>?

    func request(_ sync: @escaping @Sendable () async throws -> SyncReport) async throws -> SyncReport {
        if let followUp { return try await followUp.value }
        if let current = running {
            let next = Task { [weak self] () async throws -> SyncReport in
                _ = try? await current.value
                await self?.promoteFollowUp()
                return try await sync()
            }
            followUp = next
            defer { Task { await self.finish(next) } }
            return try await next.value
        }
        let task = Task { try await sync() }
        running = task
        defer { finish(task) }
        return try await task.value
    }

    private func promoteFollowUp() {
        running = followUp
        followUp = nil
    }

    private func finish(_ task: Task<SyncReport, any Error>) {
        if running == task { running = nil }
    }
}
