import Foundation
@_spi(ModelAdapter) import FolderSync

/// The app's task awaiting a sync, started only once it can be cancelled, so that "cancel the caller at request k" replays exactly.
final class CallerTask: @unchecked Sendable {
    private let lock = NSLock()
    private var task: Task<SyncReport, any Error>?

    /// Runs `document.synchronize()` in a new task; ``cancel()`` may be called from the sync's remote requests.
    func run(_ document: DocumentSyncManager) async -> Result<SyncReport, any Error> {
        let (gate, open) = AsyncStream<Void>.makeStream()
        let task = Task {
            for await _ in gate { break }
            return try await document.synchronize()
        }
        lock.withLock { self.task = task }
        open.yield()
        open.finish()
        return await task.result
    }

    func cancel() {
        lock.withLock { task }?.cancel()
    }
}
