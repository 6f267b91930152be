import Foundation
import Testing
@_spi(ModelAdapter) @testable import FolderSync
import FolderSyncTesting
import GRDB

/// A device restored from a backup taken before a sync that published change sets but died before writing its
/// marker (found by the soak: seed 1800149 of the restore schedule). Nothing on the remote says what the store
/// forgot but the change sets themselves: the store must not number new sets with numbers those hold, or every
/// reader that applied the old set skips the new one as applied (a write lost).
@Suite("Restored stores and sets published but never announced")
struct RestoredNumberingTests {
    /// Fails every marker write while `failing` is set, as a sync that dies before announcing does.
    final class MarkerLessFileSystem: ForwardingFileSystem, @unchecked Sendable {
        let failing = Locked(false)

        override func write(_ data: Data, to path: RemotePath) async throws {
            if path.name.hasSuffix(".recentsync"), failing.current {
                throw FolderSyncError(.remoteFull, "no space left", path: path.description)
            }
            try await base.write(data, to: path)
        }
    }

    /// Client A on `remote`, with a copy of its store and helper folder taken now, put back by `restore()`.
    struct Restorable {
        let directory: TemporaryDirectory
        let backups = TemporaryDirectory("backups")
        let remote: any RemoteFileSystem
        var client: TestClient

        init(_ remote: any RemoteFileSystem, in directory: TemporaryDirectory) async throws {
            self.directory = directory
            self.remote = remote
            client = try await TestClient.make(remote, name: "A", in: directory)
        }

        func backUp() throws {
            let copy = backups.subdirectory("A")
            try client.store.backup(to: copy.appendingPathComponent("notes.sqlite"))
            try FileManager.default.copyItem(at: client.document.localLayout.helperDirectory, to: copy.appendingPathComponent("helper"))
        }

        /// The same client, started again from the copy (in a folder of its own: the old one is left as it is).
        mutating func restore() async throws {
            client = try await TestClient.make(remote, name: "A", in: backups)
        }
    }

    /// Every change set of client A on the remote, by sequence: two files under one number fail the test.
    func sequences(_ remote: InMemoryFileSystem, _ a: TestClient) async throws -> [Int64] {
        let listing = try await remote.contentsOfDirectory(at: a.document.layout.syncChangesDirectory("DOC", client: "client-A"))
        let numbers = listing.compactMap { RemoteLayout.parseChangeSetFileName($0.name)?.sequence }.sorted()
        #expect(Set(numbers).count == numbers.count, "a sequence number published twice: \(listing.map(\.name).sorted())")
        return numbers
    }

    @Test("A store restored to before a published but unannounced set continues after it: the new set gets a new number, readers get both writes")
    func unannouncedSetKeepsItsNumber() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let markers = MarkerLessFileSystem(remote)
        let b = try await TestClient.make(remote, name: "B", in: directory)
        var a = try await Restorable(markers, in: directory)
        try await a.client.sync()
        try a.backUp()
        try a.client.execute("INSERT INTO notes(id, title) VALUES ('n1', 'published, never announced')")
        markers.failing.withLock { $0 = true }
        await #expect(throws: FolderSyncError.self) { try await a.client.sync() }
        markers.failing.withLock { $0 = false }
        try await b.sync()

        try await a.restore()
        try a.client.execute("INSERT INTO notes(id, title) VALUES ('n2', 'after the restore')")
        let report = try await a.client.sync()
        #expect(report.warnings.contains { $0.kind == .restoredStore }, "\(report.warnings)")
        try await converge(a.client, b)
        #expect(try await sequences(remote, a.client) == [1, 2])
        for client in [a.client, b] {
            #expect(try client.value("SELECT group_concat(id) FROM (SELECT id FROM notes ORDER BY id)") == "n1,n2")
        }
    }

    @Test("Sets published but unannounced with a gap between them (uploads run four at a time): the gap is filled, so readers go on past it")
    func gapIsFilled() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let markers = MarkerLessFileSystem(remote)
        let b = try await TestClient.make(remote, name: "B", in: directory)
        var a = try await Restorable(markers, in: directory)
        try await a.client.sync()
        try a.backUp()
        markers.failing.withLock { $0 = true }
        for note in ["n1", "n2"] {
            try a.client.execute("INSERT INTO notes(id, title) VALUES (?, 'never announced')", [note])
            await #expect(throws: FolderSyncError.self) { try await a.client.sync() }
        }
        markers.failing.withLock { $0 = false }
        // Set 1's upload never happened; set 2's did.
        let folder = a.client.document.layout.syncChangesDirectory("DOC", client: "client-A")
        let first = try #require(try await remote.contentsOfDirectory(at: folder).first { RemoteLayout.parseChangeSetFileName($0.name)?.sequence == 1 })
        try await remote.remove(folder.appending(first.name))

        try await a.restore()
        try a.client.execute("INSERT INTO notes(id, title) VALUES ('n3', 'after the restore')")
        try await a.client.sync()
        try await converge(a.client, b)
        #expect(try await sequences(remote, a.client) == [1, 2, 3])
        for client in [a.client, b] {
            #expect(try client.value("SELECT group_concat(id) FROM (SELECT id FROM notes ORDER BY id)") == "n2,n3")
        }
    }
}
