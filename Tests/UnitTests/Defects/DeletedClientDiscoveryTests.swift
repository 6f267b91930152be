import FolderSyncTesting
import Foundation
import GRDB
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// Safety defects found by reading the code (issue 24, items 2 and 5): a deleted or expired client's last change
/// sets never reached a device that did not know it, and a lagging listing could make a reader forget a client.
@Suite("Clients without a marker")
struct DeletedClientDiscoveryTests {
    @Test(
        "A deleted client's last change sets reach a new device that never knew it; later sets of others never wait for ever"
    )
    func deletedClientsSetsReachNewDevices() async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let a = try await TestClient.make(remote, name: "A", in: directory)
        let c = try await TestClient.make(remote, name: "C", in: directory)
        a.document.policy.wholeStoreUploadAfterChangeSets = nil
        c.document.policy.wholeStoreUploadAfterChangeSets = nil
        try c.execute("INSERT INTO notes(id, title) VALUES ('c1', 'first of C')")
        try await c.sync()
        try await a.sync()
        for index in 1...5 {
            try a.execute("INSERT INTO notes(id, title) VALUES (?, 'from A')", ["a\(index)"])
            try await a.sync()
        }
        // A whole store that covers only C's first set.
        let manifest = try #require(try await a.document.uploadWholeStore())
        #expect(manifest.covers["client-C"] == 1)
        for index in 2...3 {
            try c.execute("INSERT INTO notes(id, title) VALUES (?, 'C again')", ["c\(index)"])
            try await c.sync()
        }
        try await a.sync()
        try await a.document.documentMaintenance().deleteClient("client-C")

        let z = try await TestClient.make(remote, name: "Z", in: directory)
        try await z.sync()
        #expect(
            try z.value("SELECT group_concat(id) FROM (SELECT id FROM notes WHERE id LIKE 'c%' ORDER BY id)")
                == "c1,c2,c3")
        try a.execute("INSERT INTO notes(id, title) VALUES ('a6', 'after the deletion')")
        try await a.sync()
        let report = try await z.sync()
        #expect(!report.warnings.contains { $0.kind == .changeSetWaiting }, "\(report.warnings)")
        #expect(try NotesSchema.dump(z.store) == NotesSchema.dump(a.store))
    }

    @Test("A client deleted before anyone read its last marker is found from what others applied of it")
    func foundFromAcknowledgements() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let a = try await TestClient.make(remote, name: "A", in: directory)
        let b = try await TestClient.make(remote, name: "B", in: directory)
        let c = try await TestClient.make(remote, name: "C", in: directory)
        try await converge(a, b, c)
        try c.execute("INSERT INTO notes(id, title) VALUES ('c1', 'only A saw it')")
        try await c.sync()
        try await a.sync()  // A applies c1 and acknowledges it
        try await a.document.documentMaintenance().deleteClient("client-C")
        let report = try await b.sync()  // B never read C's marker with c1 in it
        #expect(report.changeSetsApplied >= 1)
        #expect(try b.value("SELECT title FROM notes WHERE id = 'c1'") == "only A saw it")
    }

    /// Hides the change sets of one client from listings until released, as NFS attribute caches and eventually
    /// consistent stores do for files written a moment ago.
    final class LaggingListings: ForwardingFileSystem, @unchecked Sendable {
        let hidden = Locked<String?>(nil)
        override func contentsOfDirectory(at path: RemotePath) async throws -> [RemoteItem] {
            let items = try await super.contentsOfDirectory(at: path)
            guard let client = hidden.current, path.name == client else { return items }
            return items.filter { RemoteLayout.parseChangeSetFileName($0.name) == nil }
        }
        override func download(_ path: RemotePath, toLocalFile url: URL) async throws {
            if let client = hidden.current, path.parent.name == client {
                throw FolderSyncError(.remoteItemNotFound, "not visible yet", path: path.description)
            }
            try await super.download(path, toLocalFile: url)
        }
    }

    @Test(
        "A listing that lags behind never makes a reader forget a client whose marker is gone before it applied what it published"
    )
    func laggingListingKeepsVanishedClient() async throws {
        let directory = TemporaryDirectory()
        let base = InMemoryFileSystem()
        let lagging = LaggingListings(base)
        let a = try await TestClient.make(base, name: "A", in: directory)
        let b = try await TestClient.make(lagging, name: "B", in: directory)
        a.document.policy.carriesChangeSetsInMarkers = false  // B needs A's folder for the set
        try await converge(a, b)
        try a.execute("INSERT INTO notes(id, title) VALUES ('a1', 'published, then A was deleted')")
        try await a.sync()
        // B reads A's marker (published 1), but A's folder lags behind: its set is not visible yet. Then A is deleted.
        lagging.hidden.withLock { $0 = "client-A" }
        try await b.sync()
        try await b.document.documentMaintenance().deleteClient("client-A")
        for _ in 0..<3 { try await b.sync() }
        #expect(try b.value("SELECT count(*) FROM notes") == "0")
        lagging.hidden.withLock { $0 = nil }
        try await b.sync()
        #expect(try b.value("SELECT title FROM notes WHERE id = 'a1'") == "published, then A was deleted")
    }
}
