import FolderSyncTesting
import Foundation
import GRDB
import Testing

@_spi(Tooling) @_spi(ModelAdapter) @testable import FolderSync
@testable import TestSupport

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
            try await first(within: limit) { $0.changeSetsApplied > 0 }
        }

        /// The first report from now that matches; `nil` after `limit` (a guard against hanging, not a wait).
        func first(within limit: Duration = .seconds(20), where matches: @escaping @Sendable (SyncReport) -> Bool)
            async throws -> SyncReport?
        {
            try await withThrowingTaskGroup(of: SyncReport?.self) { group in
                group.addTask {
                    for await report in self.reports where matches(report) { return report }
                    return nil
                }
                group.addTask {
                    try await Task.sleep(for: limit)
                    return nil
                }
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

    /// Records when each listing failed (the folder away), for a test to wait for failures without sleeping.
    final class FailedListings: ForwardingFileSystem, @unchecked Sendable {
        let times: AsyncStream<ContinuousClock.Instant>
        private let continuation: AsyncStream<ContinuousClock.Instant>.Continuation

        override init(_ base: any RemoteFileSystem, transfersThroughReadAndWrite: Bool = false) {
            (times, continuation) = AsyncStream.makeStream()
            super.init(base, transfersThroughReadAndWrite: transfersThroughReadAndWrite)
        }

        override func contentsOfDirectory(at path: RemotePath) async throws -> [RemoteItem] {
            do {
                return try await base.contentsOfDirectory(at: path)
            } catch {
                continuation.yield(.now)
                throw error
            }
        }
    }

    @Test(
        "Watching goes on while the folder is away, looking again after doubling waits, and syncs as soon as it is back"
    )
    func watchingAcrossAnOutage() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let b = try await TestClient.launch(FileManagerFileSystem(rootURL: root), name: "B", in: directory)
        // no inotify through the decorator: polling
        let listings = FailedListings(FileManagerFileSystem(rootURL: root))
        let a = try await TestClient.launch(listings, name: "A", in: directory)
        try await converge(a, b)
        let collector = ReportCollector()
        a.document.delegate = collector
        let poll = Duration.milliseconds(20)
        a.document.startWatchingRemote(debounce: .milliseconds(10), pollInterval: poll)
        defer { a.document.stopWatchingRemote() }

        let away = directory.url.appendingPathComponent("away")
        try FileManager.default.moveItem(at: root, to: away)
        var failures: [ContinuousClock.Instant] = []
        for await time in listings.times {
            failures.append(time)
            if failures.count == 4 { break }
        }
        // Each wait doubles: 2, 4, 8 poll intervals (never less; a loaded machine only makes them longer).
        for (index, pair) in zip(failures, failures.dropFirst()).enumerated() {
            #expect(pair.1 - pair.0 >= poll * (2 << index), "wait \(index + 1) was \(pair.1 - pair.0)")
        }
        try a.execute("INSERT INTO notes(id, title) VALUES ('a1', 'written while the folder was away')")
        try b.execute("INSERT INTO notes(id, title) VALUES ('b1', 'also written while away')")

        try FileManager.default.moveItem(at: away, to: root)
        let published = try await collector.first { $0.changeSetsSent > 0 }
        #expect(published != nil, "no sync published A's note once the folder was back")
        try await b.sync()
        #expect(try await collector.firstApplying() != nil, "watching never applied B's note after the outage")
        #expect(try a.value("SELECT title FROM notes WHERE id = 'b1'") == "also written while away")
        #expect(try b.value("SELECT title FROM notes WHERE id = 'a1'") == "written while the folder was away")
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
            let run = runs.withLock {
                $0 += 1
                return $0
            }
            if run == 1 { for await _ in gate.stream { break } }  // the first sync is held until released
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
            if RemoteLayout.parseChangeSetFileName(path.name) != nil,
                downloads.withLock({
                    $0 += 1
                    return $0
                }) == holdAt
            {
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
        // Without the deletion fail-safe, which downloads every set before applying the first, downloads and applies
        // alternate.
        b.document.policy.deletionFailSafe = nil
        for index in 0..<6 {
            try a.execute("INSERT INTO notes(id, title) VALUES (?, 'x')", ["n\(index)"])
            try await a.sync()
        }
        let task = Task { try await b.sync() }
        for await _ in gated.reached.stream { break }  // B is downloading the third change set
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
