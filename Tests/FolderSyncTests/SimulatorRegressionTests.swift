import Foundation
import Testing
@_spi(Tooling) @_spi(ModelAdapter) @testable import FolderSync
import FolderSyncTesting

@Suite("Simulator regressions")
struct SimulatorRegressionTests {
    @Test("Cancelling the task that awaits synchronize() stops the sync (Simulator regression)")
    func callerCancellationReachesTheSync() async throws {
        let directory = TemporaryDirectory()
        let remote = InterruptingFileSystem(InMemoryFileSystem())
        let a = try await TestClient.make(remote, name: "A", in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'Hello')")
        let caller = Locked<Task<SyncReport, any Error>?>(nil)
        remote.arm(atRequest: 1, failing: false, cancel: { caller.current?.cancel() })
        let task = Task { try await a.document.synchronize() }
        caller.withLock { $0 = task }
        let result = await task.result
        #expect(remote.disarm(), "the armed cancellation did not happen")
        #expect(throws: FolderSyncError.self) { try result.get() }
        #expect(try a.store.hasUnpublishedChanges(), "the cancelled sync published anyway")
        try await a.sync()
        #expect(try a.store.hasUnpublishedChanges() == false)
    }
}
