import FolderSyncTesting
import Foundation
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// Defects the simulator found under injected faults (SimulatorFaultTests), each reproduced on its own.
@Suite("Defects found under injected faults")
struct FaultRegressionTests {
    /// Once armed (`failed` set to false), fails the next write of a recent-sync marker, as a full remote does.
    final class FailingMarkerFileSystem: ForwardingFileSystem, @unchecked Sendable {
        let failed = Locked(true)

        override func write(_ data: Data, to path: RemotePath) async throws {
            if path.name.hasSuffix(".recentsync"),
                failed.withLock({
                    let first = !$0
                    $0 = true
                    return first
                })
            {
                throw FolderSyncError(.remoteFull, "no space left", path: path.description)
            }
            try await base.write(data, to: path)
        }
    }

    @Test("A change set published by a sync that failed to write its marker is announced by the next sync")
    func unannouncedChangeSet() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let failing = FailingMarkerFileSystem(remote)
        let b = try await TestClient.make(remote, name: "B", in: directory)
        let a = try await TestClient.make(failing, name: "A", in: directory)
        try await a.sync()  // A's marker exists
        failing.failed.withLock { $0 = false }
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'one')")
        await #expect(throws: FolderSyncError.self) { try await a.sync() }  // published, marker not written
        let again = try await a.sync()
        #expect(again.changeSetsSent == 0)
        try await b.sync()
        #expect(try b.value("SELECT title FROM notes WHERE id = 'n1'") == "one", "B never learnt of A's change set")
        try await a.sync()  // reads B's new marker
        let idle = try await a.sync()
        #expect(idle.remoteRequests == 2, "an idle sync writes the marker again: \(idle.remoteRequests) requests")
    }

    /// Leaves out of every listing of `IntegrityKey/` the key file, as a listing lagging behind the folder does.
    final class LaggingKeyListingFileSystem: ForwardingFileSystem, @unchecked Sendable {
        override func contentsOfDirectory(at path: RemotePath) async throws -> [RemoteItem] {
            let items = try await base.contentsOfDirectory(at: path)
            return path.name == "IntegrityKey" ? [] : items
        }
    }

    @Test("A listing of IntegrityKey/ that lags behind the folder is not taken for a wiped remote")
    func laggingIntegrityKeyListing() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let a = try await TestClient.make(remote, name: "A", in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'one')")
        try await a.sync()
        let b = try await TestClient.make(LaggingKeyListingFileSystem(remote), name: "B", in: directory)
        try await b.sync()
        #expect(try b.value("SELECT title FROM notes WHERE id = 'n1'") == "one")
        try await remote.remove(a.document.layout.integrityKeyDirectory("DOC"))
        await #expect { try await b.sync() } throws: { ($0 as? FolderSyncError)?.code == .integrityKeyMismatch }
    }
}
