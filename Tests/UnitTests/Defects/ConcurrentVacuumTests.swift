import FolderSyncTesting
import Foundation
import GRDB
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// Safety defect found by reading the code (issue 24, item 3): a vacuum planned from one snapshot of the manifests
/// and removed a dominated store by its folder name, so two vacuums at once could delete every whole store with
/// the change sets it covered.
@Suite("Concurrent vacuums")
struct ConcurrentVacuumTests {
    /// Holds the first change a vacuum makes (a move or a removal) until the test releases it: the vacuum has planned
    /// and is about to act, while others run.
    final class HeldBeforeRemoving: ForwardingFileSystem, @unchecked Sendable {
        private let state = Locked<
            (held: CheckedContinuation<Void, Never>?, reached: CheckedContinuation<Void, Never>?, done: Bool)
        >((nil, nil, false))

        override func willForward(_ request: Request, path: RemotePath) async throws {
            guard request == .move || request == .remove, !state.current.done else { return }
            await withCheckedContinuation { continuation in
                let reached = state.withLock { state -> CheckedContinuation<Void, Never>? in
                    state.done = true
                    state.held = continuation
                    defer { state.reached = nil }
                    return state.reached
                }
                reached?.resume()
            }
        }

        /// Returns once the vacuum is held.
        func waitUntilHeld() async {
            await withCheckedContinuation { continuation in
                let already = state.withLock { state -> Bool in
                    if state.held != nil { return true }
                    state.reached = continuation
                    return false
                }
                if already { continuation.resume() }
            }
        }

        func release() {
            state.withLock { state in
                defer { state.held = nil }
                return state.held
            }?.resume()
        }
    }

    private func add(_ client: TestClient, _ id: String) async throws {
        try client.execute("INSERT INTO notes(id, title) VALUES (?, 'note')", [id])
        try await client.sync()
    }

    @Test(
        "A vacuum held between planning and removing while another client uploads a newer store and vacuums: a whole store remains, and a new device gets every write"
    )
    func heldVacuum() async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let a = try await TestClient.make(remote, name: "A", in: directory)
        let b = try await TestClient.make(remote, name: "B", in: directory)
        for client in [a, b] {
            client.document.policy.wholeStoreUploadAfterChangeSets = nil
            client.document.policy.vacuumsAfterWholeStoreUpload = false
        }
        try await add(a, "a1")
        try await add(b, "b1")
        try await converge(a, b)
        _ = try #require(try await a.document.uploadWholeStore())
        try await add(b, "b2")
        try await converge(a, b)
        _ = try #require(try await b.document.uploadWholeStore())  // B's store dominates A's

        // V1 plans (keep B's store, remove A's, remove the change sets B's store covers), then is held.
        let held = HeldBeforeRemoving(remote)
        let maintenance = try DocumentMaintenance(
            context: DocumentOperationContext(
                fileSystem: held, layout: a.document.layout,
                documentIdentifier: "DOC", clientIdentifier: "operator", environment: Fixture.quietEnvironment()))
        let first = Task { try await maintenance.vacuum() }
        await held.waitUntilHeld()

        // Meanwhile A uploads a newer store, which dominates B's, and B vacuums: B's store and what A's covers go.
        try await add(a, "a2")
        try await converge(a, b)
        _ = try #require(try await a.document.uploadWholeStore())
        let second = try await b.document.vacuum()
        #expect(second.removed.contains { $0.reason == .dominatedWholeStore })
        held.release()
        let report = try await first.value
        #expect(report.failures.isEmpty, "\(report.failures)")

        let stores = try await remote.contentsOfDirectoryIfPresent(
            at: a.document.relativePathToThisDocumentWholeStoreDirectory)
        #expect(!stores.isEmpty, "no whole store is left")
        let doctor = try RemoteTreeDoctor(fileSystem: remote, applicationIdentifier: Fixture.application)
        let findings = try await doctor.examine().findings.filter { $0.severity == .error }
        #expect(findings.isEmpty, "\(findings)")
        let z = try await TestClient.make(remote, name: "Z", in: directory)
        try await z.sync()
        #expect(try z.value("SELECT group_concat(id) FROM (SELECT id FROM notes ORDER BY id)") == "a1,a2,b1,b2")
    }
}
