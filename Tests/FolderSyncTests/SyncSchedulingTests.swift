import Foundation
import Testing
@testable import FolderSync
import FolderSyncTesting

/// Watching, coalescing and cancellation of syncs.
@Suite("Sync scheduling")
struct SyncSchedulingTests {
    /// Collects reports of automatic syncs through the delegate.
    final class ReportCollector: DocumentSyncManagerDelegate, @unchecked Sendable {
        let reports: AsyncStream<SyncReport>
        private let continuation: AsyncStream<SyncReport>.Continuation
        let begun = Locked(0)

        init() { (reports, continuation) = AsyncStream.makeStream() }

        func documentSyncManagerDidBeginSynchronizing(_ manager: DocumentSyncManager) { begun.withLock { $0 += 1 } }
        func documentSyncManager(_ manager: DocumentSyncManager, didFinishSynchronizingWith report: SyncReport) {
            continuation.yield(report)
        }

        /// The first report that applied something; fails after `limit` (a guard against hanging, not a wait).
        func firstApplying(within limit: Duration = .seconds(20)) async throws -> SyncReport? {
            try await withThrowingTaskGroup(of: SyncReport?.self) { group in
                group.addTask { for await report in self.reports where report.changeSetsApplied > 0 { return report }; return nil }
                group.addTask { try await Task.sleep(for: limit); return nil }
                defer { group.cancelAll() }
                return try await group.next() ?? nil
            }
        }
    }

    @Test("Watching a folder with inotify syncs when another client publishes")
    func watchingWithNotifications() async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let (a, b) = try await TestClient.pair(remote, in: directory)
        let collector = ReportCollector()
        a.document.delegate = collector
        a.document.startWatchingRemote(debounce: .milliseconds(20), pollInterval: .seconds(3600))
        defer { a.document.stopWatchingRemote() }
        try b.execute("INSERT INTO notes(id, title) VALUES ('n1', 'pushed by B')")
        try await b.sync()
        let report = try #require(try await collector.firstApplying(), "no automatic sync applied B's change")
        #expect(report.changesApplied == 1)
        #expect(try a.value("SELECT title FROM notes") == "pushed by B")
    }

    @Test("Watching a remote without notifications polls")
    func watchingByPolling() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let (a, b) = try await TestClient.pair(remote, in: directory)
        try await b.sync()
        let collector = ReportCollector()
        a.document.delegate = collector
        a.document.startWatchingRemote(debounce: .milliseconds(10), pollInterval: .milliseconds(50))
        defer { a.document.stopWatchingRemote() }
        try b.execute("INSERT INTO notes(id, title) VALUES ('n1', 'pushed by B')")
        try await b.sync()
        #expect(try await collector.firstApplying() != nil, "polling never noticed B's change")
    }

    @Test("Requests made while a sync runs share one follow-up sync")
    func coalescing() async throws {
        let coalescer = SyncCoalescer()
        let gate = AsyncStream<Void>.makeStream()
        let runs = Locked(0)
        let sync: @Sendable () async throws -> SyncReport = {
            let run = runs.withLock { $0 += 1; return $0 }
            if run == 1 { for await _ in gate.stream { break } } // the first sync is held until released
            return SyncReport()
        }
        let first = Task { try await coalescer.request(sync) }
        while runs.current == 0 { await Task.yield() }
        let followers = (0..<4).map { _ in Task { try await coalescer.request(sync) } }
        while await coalescer.waitingForFollowUp < 4 { await Task.yield() }
        gate.continuation.yield()
        _ = try await first.value
        for follower in followers { _ = try await follower.value }
        #expect(runs.current == 2, "\(runs.current) syncs ran for 5 requests")
    }

    /// Forwards to a remote, holding the download of the `holdAt`-th change set until released.
    final class GatedFileSystem: ForwardingFileSystem, @unchecked Sendable {
        let holdAt: Int
        let downloads = Locked(0)
        let reached = AsyncStream<Void>.makeStream()
        let release = AsyncStream<Void>.makeStream()

        init(base: InMemoryFileSystem, holdAt: Int) {
            self.holdAt = holdAt
            super.init(base, transfersThroughReadAndWrite: true)
        }

        override func read(_ path: RemotePath) async throws -> Data {
            if RemoteLayout.parseChangeSetFileName(path.name) != nil, downloads.withLock({ $0 += 1; return $0 }) == holdAt {
                reached.continuation.yield()
                for await _ in release.stream { break }
            }
            return try await base.read(path)
        }
    }

    @Test("Cancelling a sync between change sets leaves the store consistent, and the next sync finishes the work")
    func cancellation() async throws {
        let directory = TemporaryDirectory()
        let base = InMemoryFileSystem()
        let gated = GatedFileSystem(base: base, holdAt: 3)
        let a = try await TestClient.make(base, name: "A", in: directory)
        let b = try await TestClient.make(gated, name: "B", in: directory)
        // Without the deletion fail-safe, which downloads every set before applying the first, downloads and applies alternate.
        b.document.policy.deletionFailSafe = nil
        for index in 0..<6 {
            try a.execute("INSERT INTO notes(id, title) VALUES (?, 'x')", ["n\(index)"])
            try await a.sync()
        }
        let task = Task { try await b.sync() }
        for await _ in gated.reached.stream { break } // B is downloading the third change set
        task.cancel()
        gated.release.continuation.yield()
        await #expect { try await task.value } throws: { ($0 as? FolderSyncError)?.code == .cancelled }
        let applied = try b.store.appliedChangeSets().sequences(of: "client-A").count
        // The set being downloaded when the task was cancelled is applied; none after it.
        #expect(applied == 3, "applied \(applied) change sets before the cancellation took effect")
        #expect(try b.value("SELECT count(*) FROM notes") == String(applied), "rows and ledger disagree")
        try await b.sync()
        #expect(try NotesSchema.dump(a.store) == NotesSchema.dump(b.store))
    }
}
