import FolderSyncTesting
import Foundation
import GRDB
import Testing

@_spi(ModelAdapter) @_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// Devices restored from backups, in the ways the soak found losing writes (the restore schedule's seeds 1800149
/// and 3800005): a store restored to before a sync that published sets but died before writing its marker (nothing
/// on the remote says what the store forgot but the sets themselves: it must not number new sets with their
/// numbers, or every reader that applied the old set skips the new one as applied); a restored store uploading a
/// whole store before it caught up (it must not replace its store on the remote that covers more, which may be
/// the only copy of sets a vacuum removed since).
@Suite("Stores restored from older copies")
struct RestoredStoreTests {
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

    /// Counts the listings of client A's own change-set folder.
    final class OwnListingCounter: ForwardingFileSystem, @unchecked Sendable {
        let listings = Locked(0)

        override func namesOfDirectory(at path: RemotePath) async throws -> [RemoteItem] {
            if path.name == "client-A" { listings.withLock { $0 += 1 } }
            return try await base.namesOfDirectory(at: path)
        }

        override func contentsOfDirectory(at path: RemotePath) async throws -> [RemoteItem] {
            if path.name == "client-A" { listings.withLock { $0 += 1 } }
            return try await base.contentsOfDirectory(at: path)
        }

        /// How many listings `client` makes to write one row and publish it.
        func listings(publishing id: String, from client: TestClient) async throws -> Int {
            let before = listings.current
            try client.execute("INSERT INTO notes(id, title) VALUES ('\(id)', 'a write')")
            #expect(try await client.sync().changeSetsSent == 1)
            return listings.current - before
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
            try FileManager.default.copyItem(
                at: client.document.localLayout.helperDirectory, to: copy.appendingPathComponent("helper"))
        }

        /// The same client, started again from the copy (in a folder of its own: the old one is left as it is).
        mutating func restore() async throws {
            client = try await TestClient.make(remote, name: "A", in: backups)
        }
    }

    /// Every change set of client A on the remote, by sequence: two files under one number fail the test.
    func sequences(_ remote: InMemoryFileSystem, _ a: TestClient) async throws -> [Int64] {
        let listing = try await remote.contentsOfDirectory(
            at: a.document.layout.syncChangesDirectory("DOC", client: "client-A"))
        let numbers = listing.compactMap { RemoteLayout.parseChangeSetFileName($0.name)?.sequence }.sorted()
        #expect(
            Set(numbers).count == numbers.count, "a sequence number published twice: \(listing.map(\.name).sorted())")
        return numbers
    }

    @Test(
        "A store restored to before a published but unannounced set continues after it: the new set gets a new number, readers get both writes"
    )
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

    @Test(
        "Sets published but unannounced with a gap between them (uploads run four at a time): the gap is filled, so readers go on past it"
    )
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
        let first = try #require(
            try await remote.contentsOfDirectory(at: folder).first {
                RemoteLayout.parseChangeSetFileName($0.name)?.sequence == 1
            })
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

    @Test(
        "A restored store does not replace its whole store on the remote that covers more; once it caught up, it does")
    func restoredStoreKeepsTheRemoteStore() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        var a = try await Restorable(remote, in: directory)
        try await a.client.sync()
        try a.backUp()
        try a.client.execute("INSERT INTO notes(id, title) VALUES ('n1', 'one')")
        try await a.client.sync()
        let published = try #require(try await a.client.document.uploadWholeStore())
        #expect(published.covers["client-A"] == 1)

        try await a.restore()
        #expect(
            try await a.client.document.uploadWholeStore() == nil,
            "the restored store replaced the one that covers more")
        let manifest = a.client.document.layout.appliedSyncChangeSetsFile("DOC", client: "client-A")
        let kept = try PropertyListFile.decode(
            WholeStoreManifest.self, from: try await remote.read(manifest), path: manifest.description)
        #expect(kept.wholeStoreIdentifier == published.wholeStoreIdentifier)

        let report = try await a.client.sync()
        #expect(report.warnings.contains { $0.kind == .restoredStore })
        #expect(try a.client.value("SELECT title FROM notes WHERE id = 'n1'") == "one")
        let replaced = try #require(try await a.client.document.uploadWholeStore())
        #expect(replaced.covers["client-A"] == 1 && replaced.wholeStoreIdentifier != published.wholeStoreIdentifier)
    }

    @Test(
        "A store restored while its marker was gone learns it from another client's acknowledgement: its own writes come back at its next sync, and its next set gets a new number"
    )
    func restoredWithoutMarker() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let b = try await TestClient.make(remote, name: "B", in: directory)
        b.document.policy.acknowledgementDelay = 0
        var a = try await Restorable(remote, in: directory)
        try await a.client.sync()
        try await b.sync()
        try a.backUp()
        try a.client.execute("INSERT INTO notes(id, title) VALUES ('n1', 'published, then the store went back')")
        try await a.client.sync()
        try await b.sync()  // B applies A's set and acknowledges it
        // as an expiry does
        try await remote.remove(a.client.document.layout.recentSyncFile("DOC", client: "client-A"))

        try await a.restore()
        let report = try await a.client.sync()
        #expect(report.warnings.contains { $0.kind == .restoredStore }, "\(report.warnings)")
        #expect(try a.client.value("SELECT title FROM notes WHERE id = 'n1'") == "published, then the store went back")
        try a.client.execute("INSERT INTO notes(id, title) VALUES ('n2', 'after the restore')")
        try await converge(a.client, b)
        #expect(try await sequences(remote, a.client) == [1, 2])
        #expect(try NotesSchema.dump(b.store) == NotesSchema.dump(a.client.store))
    }

    @Test(
        "A change a restored store brings back as unpublished, though it was published and overwritten since, does not undo the newer write when a whole store is installed"
    )
    func resurrectedChangeLosesToNewerOwnWrite() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        var a = try await Restorable(remote, in: directory)
        let b = try await TestClient.make(remote, name: "B", in: directory)
        try await a.client.sync()
        try a.client.execute("INSERT INTO notes(id, title) VALUES ('n1', 'first')")
        try a.backUp()  // n1 unpublished in the copy
        try await a.client.sync()
        try a.client.execute("UPDATE notes SET title = 'second' WHERE id = 'n1'")
        try await a.client.sync()
        _ = try #require(try await a.client.document.uploadWholeStore())

        try await a.restore()
        _ = try #require(try await a.client.document.downloadWholeStore())
        #expect(try a.client.value("SELECT title FROM notes WHERE id = 'n1'") == "second")
        try await converge(a.client, b)
        #expect(try b.value("SELECT title FROM notes WHERE id = 'n1'") == "second")
        #expect(try NotesSchema.dump(b.store) == NotesSchema.dump(a.client.store))
    }

    @Test(
        "A launch lists its own change sets before the first set it numbers (its store may have been put back while closed); later syncs of the launch do not, until one fails"
    )
    func ownSetsListedOncePerLaunch() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let counter = OwnListingCounter(remote)
        let markers = MarkerLessFileSystem(counter)
        var a = try await Restorable(markers, in: directory)
        func publish(_ id: String) async throws -> Int { try await counter.listings(publishing: id, from: a.client) }
        try await a.client.sync()
        try a.backUp()
        #expect(try await publish("n1") == 1, "the launch's first set")
        #expect(try await publish("n2") == 0)
        #expect(try await publish("n3") == 0)
        try a.client.execute("INSERT INTO notes(id, title) VALUES ('n4', 'published, never announced')")
        markers.failing.withLock { $0 = true }
        await #expect(throws: FolderSyncError.self) { try await a.client.sync() }
        markers.failing.withLock { $0 = false }
        #expect(try await publish("n5") >= 1, "after a failed sync")
        #expect(try await publish("n6") == 0)

        // The copy, launched: its first set is numbered after the six the folder holds, not as the first, and gets them
        // back.
        try await a.restore()
        #expect(try await publish("n7") >= 1)
        #expect(try await sequences(remote, a.client) == [1, 2, 3, 4, 5, 6, 7])
        #expect(
            try a.client.value("SELECT group_concat(id) FROM (SELECT id FROM notes ORDER BY id)")
                == "n1,n2,n3,n4,n5,n6,n7")
    }

    @Test(
        "A store the app copies a backup into while it is open goes back in sequence too: its next sync lists its own change sets again and numbers after them"
    )
    func backupCopiedIntoOpenStore() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let counter = OwnListingCounter(remote)
        let a = try await Restorable(counter, in: directory)
        let b = try await TestClient.make(remote, name: "B", in: directory)
        func publish(_ id: String) async throws -> Int { try await counter.listings(publishing: id, from: a.client) }
        try await a.client.sync()
        try a.backUp()
        #expect(try await publish("n1") == 1)
        #expect(try await publish("n2") == 0)

        // The app's own "restore from backup": the copy's pages written into the open store, the same GRDBStore.
        let copy = try DatabaseQueue(path: a.backups.subdirectory("A").appendingPathComponent("notes.sqlite").path)
        try copy.backup(to: a.client.store.database)
        try copy.close()
        #expect(try a.client.value("SELECT count(*) FROM notes") == "0")
        #expect(try await publish("n3") >= 1)
        #expect(try await sequences(remote, a.client) == [1, 2, 3])
        try await converge(a.client, b)
        for client in [a.client, b] {
            #expect(try client.value("SELECT group_concat(id) FROM (SELECT id FROM notes ORDER BY id)") == "n1,n2,n3")
        }
    }
}
