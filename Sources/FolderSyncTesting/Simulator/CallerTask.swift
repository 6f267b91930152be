@_spi(ModelAdapter) import FolderSync
import Foundation

/// The app's task awaiting a sync, started only once it can be cancelled, so that "cancel the caller at request k"
/// replays exactly.
final class CallerTask: Sendable {
    private let task = Locked<Task<SyncReport, any Error>?>(nil)

    /// Runs `document.synchronize()` in a new task; ``cancel()`` may be called from the sync's remote requests.
    func run(_ document: DocumentSyncManager) async -> Result<SyncReport, any Error> {
        let (gate, open) = AsyncStream<Void>.makeStream()
        let task = Task {
            for await _ in gate { break }
            return try await document.synchronize()
        }
        self.task.withLock { $0 = task }
        open.yield()
        open.finish()
        return await task.result
    }

    func cancel() {
        task.current?.cancel()
    }
}
