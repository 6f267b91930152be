import FolderSyncTesting
import Foundation
import Testing

@testable import FolderSync
@testable import TestSupport

/// Requests a sync makes at once rather than one after another: over a wide-area link each request in a row is a
/// round trip (benchmark scenario 9). Each test holds the requests it expects together until all of them have
/// arrived: made one after another, the first would wait for ever, and the test fails on its time limit.
@Suite("Round trips of a sync", .timeLimit(.minutes(1)))
struct RoundTripTests {
    @Test("An idle sync lists IntegrityKey/ and RecentSyncs/ at once")
    func idleListings() async throws {
        let directory = TemporaryDirectory()
        let remote = Rendezvous(InMemoryFileSystem())
        let (a, b) = try await TestClient.pair(remote, in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'Hello')")
        try await a.sync()
        try await b.sync()
        try await a.sync()
        try await b.sync()
        remote.hold(2) { request, path in request == .list && ["IntegrityKey", "RecentSyncs"].contains(path.name) }
        let idle = try await b.sync()
        #expect(idle.isIdle && idle.remoteRequests == 2)
        #expect(remote.held == 2)
    }

    @Test("The markers that changed are read at once")
    func markerReads() async throws {
        let directory = TemporaryDirectory()
        let remote = Rendezvous(InMemoryFileSystem())
        let (a, b) = try await TestClient.pair(remote, in: directory)
        let c = try await TestClient.make(remote, name: "C", in: directory)
        try await a.sync()
        try await b.sync()
        try await c.sync()
        try await a.sync()
        try b.execute("INSERT INTO notes(id, title) VALUES ('n1', 'from B')")
        try c.execute("INSERT INTO notes(id, title) VALUES ('n2', 'from C')")
        try await b.sync()
        try await c.sync()
        remote.hold(2) { request, path in request == .read && path.name.hasSuffix(".recentsync") }
        let report = try await a.sync()
        #expect(report.changesApplied == 2)
        #expect(remote.held == 2)
    }

    @Test(
        "A sync that publishes a small set writes the set and its marker at once; the next sync reads the marker back with its listings"
    )
    func publishing() async throws {
        let directory = TemporaryDirectory()
        let remote = Rendezvous(InMemoryFileSystem())
        let (a, b) = try await TestClient.pair(remote, in: directory)
        try await a.sync()
        try await b.sync()
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'Hello')")
        remote.hold(2) { request, path in
            (request == .upload && path.name.hasSuffix(".syncchg"))
                || (request == .write && path.name == "client-A.recentsync")
        }
        let published = try await a.sync()
        #expect(published.changeSetsSent == 1 && remote.held == 2)
        remote.hold(3) { request, path in
            (request == .list && ["IntegrityKey", "RecentSyncs"].contains(path.name))
                || (request == .read && path.name == "client-A.recentsync")
        }
        let next = try await a.sync()
        #expect(next.isIdle && next.remoteRequests == 3 && remote.held == 3)
        #expect(try await a.sync().remoteRequests == 2, "once read back, an idle sync is two listings")
    }

    @Test("A document's registration reads its three files at once and makes the client's three folders at once")
    func registration() async throws {
        let directory = TemporaryDirectory()
        let remote = Rendezvous(InMemoryFileSystem())
        _ = try await TestClient.make(remote, name: "A", in: directory)
        remote.hold(3) { request, path in
            (request == .read || request == .stat)
                && ["documentInfo.plist", "DOC.plist", "client-B.plist"].contains(path.name)
        }
        _ = try await TestClient.make(remote, name: "B", in: directory)
        #expect(remote.held == 3)
        remote.hold(3) { request, path in
            request == .createDirectory && path.name == "client-C"
                && ["SyncChanges", "SyncCommands", "WholeStore"].contains(path.parent.name)
        }
        _ = try await TestClient.make(remote, name: "C", in: directory)
        #expect(remote.held == 3)
    }
}

/// A remote that, once told which requests to expect, holds each of them until `count` have arrived, then lets all
/// through; other requests pass at once. A held request of a cancelled test (its time limit) fails.
final class Rendezvous: ForwardingFileSystem, @unchecked Sendable {
    private struct State {
        var expected = 0
        var matches: (@Sendable (Request, RemotePath) -> Bool)?
        var waiting: [UUID: CheckedContinuation<Void, Never>] = [:]
        var held = 0
    }

    private let state = Locked(State())

    /// Requests held so far.
    var held: Int { state.withLock { $0.held } }

    /// Holds the next `count` requests that `matches` until all of them have arrived.
    func hold(_ count: Int, matching matches: @escaping @Sendable (Request, RemotePath) -> Bool) {
        state.withLock { $0 = State(expected: count, matches: matches) }
    }

    override func willForward(_ request: Request, path: RemotePath) async throws {
        let id = UUID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let released: [CheckedContinuation<Void, Never>] = state.withLock { state in
                    guard let matches = state.matches, state.held < state.expected, matches(request, path) else {
                        return [continuation]
                    }
                    state.held += 1
                    // Checked under the lock that the cancellation handler takes: a cancellation is never missed.
                    if Task.isCancelled { return [continuation] }
                    state.waiting[id] = continuation
                    guard state.held == state.expected else { return [] }
                    defer { state.waiting = [:] }
                    return Array(state.waiting.values)
                }
                for waiting in released { waiting.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiting.removeValue(forKey: id) }?.resume()
        }
        try Task.checkCancellation()
    }
}
