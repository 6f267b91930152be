import FolderSyncTesting
import Foundation
import GRDB
import Testing

@_spi(Tooling) @_spi(ModelAdapter) @testable import FolderSync
@testable import TestSupport

/// Tombstone collection (<doc:TombstoneCollection>): a tombstone goes once every live device applied its delete, this
/// device has everything published before, and every whole store covers it; never earlier.
@Suite("Tombstone collection")
struct TombstoneCollectionTests {
    static func tombstones(_ client: TestClient) throws -> [String] {
        try client.store.database.read {
            try String.fetchAll($0, sql: "SELECT tbl || '/' || sync_id FROM foldersync_tombstones ORDER BY 1")
        }
    }

    static func registers(_ client: TestClient, _ syncID: String) throws -> Int {
        try client.store.database.read {
            try Int.fetchOne($0, sql: "SELECT count(*) FROM foldersync_clocks WHERE sync_id = ?", arguments: [syncID])!
        }
    }

    /// A client whose syncs announce what they applied at once (the default waits ten minutes between such markers).
    static func client(
        _ remote: any RemoteFileSystem, _ name: String, _ directory: TemporaryDirectory,
        deletePolicy: DeletePolicy = .deleteWins
    ) async throws -> TestClient {
        let client = try await TestClient.make(remote, name: name, in: directory, deletePolicy: deletePolicy)
        client.document.policy.acknowledgementDelay = 0
        return client
    }

    /// A, B and C of one document, C having applied everything; A deletes n1, n2 and the deletes reach A and B only.
    static func threeClients(_ directory: TemporaryDirectory, deletePolicy: DeletePolicy = .deleteWins) async throws
        -> (TestClient, TestClient, TestClient)
    {
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let a = try await client(remote, "A", directory, deletePolicy: deletePolicy)
        let b = try await client(remote, "B", directory, deletePolicy: deletePolicy)
        let c = try await client(remote, "C", directory, deletePolicy: deletePolicy)
        for id in ["n1", "n2", "n3"] { try a.execute("INSERT INTO notes(id, title) VALUES (?, 'from A')", [id]) }
        try await converge(a, b, c)
        try a.execute("DELETE FROM notes WHERE id IN ('n1', 'n2')")
        try await a.sync()
        try await b.sync()
        return (a, b, c)
    }

    @Test("A tombstone stays while a live device has not applied its delete, and goes once every device has")
    func collectedOnceEveryDeviceApplied() async throws {
        let directory = TemporaryDirectory()
        let (a, b, c) = try await Self.threeClients(directory)
        #expect(try await a.document.collectTombstones() == 0, "C has not applied the deletes")
        #expect(try Self.tombstones(a) == ["notes/n1", "notes/n2"])
        try await converge(c, a, b)  // C applies them and says so; A and B read C's marker
        #expect(try await a.document.collectTombstones() == 2)
        #expect(try await b.document.collectTombstones() == 2)
        #expect(try await c.document.collectTombstones() == 2)
        for client in [a, b, c] { #expect(try Self.tombstones(client).isEmpty) }
        // The rows stay gone everywhere, and the replicas converge as before.
        try await converge(a, b, c)
        #expect(try NotesSchema.dump(a.store) == (try NotesSchema.dump(c.store)))
        #expect(try a.value("SELECT group_concat(id) FROM notes") == "n3")
    }

    @Test("A late update from a live device that had not seen the delete still meets the tombstone (delete wins)")
    func lateUpdateOfALiveDevice() async throws {
        let directory = TemporaryDirectory()
        let (a, b, c) = try await Self.threeClients(directory)
        try c.execute("UPDATE notes SET title = 'edited by C, unaware' WHERE id = 'n1'")
        #expect(try await a.document.collectTombstones() == 0)
        try await converge(c, a, b)
        #expect(try await a.document.collectTombstones() == 2)
        try await converge(a, b, c)
        for client in [a, b, c] { #expect(try client.value("SELECT count(*) FROM notes WHERE id = 'n1'") == "0") }
    }

    @Test(
        "Last writer wins: a collected delete takes the row's kept registers and values; a row brought back keeps its registers"
    )
    func lastWriterWinsKeepsNothingOfADeletedRow() async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let a = try await Self.client(remote, "A", directory, deletePolicy: .lastWriterWins)
        let b = try await Self.client(remote, "B", directory, deletePolicy: .lastWriterWins)
        for id in ["n1", "n2"] { try a.execute("INSERT INTO notes(id, title) VALUES (?, 'from A')", [id]) }
        try await converge(a, b)
        try a.execute("DELETE FROM notes WHERE id IN ('n1', 'n2')")
        try await converge(a, b)
        try b.execute("INSERT INTO notes(id, title) VALUES ('n2', 'back')")  // a newer write brings n2 back
        try await converge(b, a)
        #expect(try Self.registers(a, "n1") == 1)
        #expect(try await a.document.collectTombstones() == 2)
        #expect(try Self.tombstones(a).isEmpty)
        #expect(try Self.registers(a, "n1") == 0 && Self.registers(a, "n2") == 1)
        #expect(
            try await a.store.database.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM foldersync_shadow")! }
                == 0)
        // Inserting n1 again later is a newer write everywhere, with or without the tombstone.
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'again')")
        try await converge(a, b)
        #expect(try b.value("SELECT title FROM notes WHERE id = 'n1'") == "again")
        #expect(try NotesSchema.dump(a.store) == (try NotesSchema.dump(b.store)))
    }

    @Test(
        "A whole store that does not cover the delete holds collection back; one uploaded later carries no collectable tombstone"
    )
    func wholeStoresCoverTheDelete() async throws {
        let directory = TemporaryDirectory()
        let (a, b, c) = try await Self.threeClients(directory)
        _ = try await c.document.uploadWholeStore()  // C's store has n1 and n2, from before the deletes
        try await converge(c, a, b)
        #expect(
            try await a.document.collectTombstones() == 0,
            "C's whole store brings n1 and n2 back to whoever installs it")
        _ = try await c.document.uploadWholeStore()
        #expect(try await a.document.collectTombstones() == 2)
        _ = try await a.document.uploadWholeStore()
        let snapshot = directory.url.appendingPathComponent("check.sqlite")
        let layout = a.document.layout
        let file = layout.wholeStoreFile(a.document.documentIdentifier, client: a.document.clientIdentifier)
        let url = directory.url.appendingPathComponent("remote").appendingPathComponent(file.description)
        let reader = try WholeStoreReader(snapshot: snapshot, path: file.description)
        try reader.consume(try Data(contentsOf: url))
        _ = try reader.finish()
        #expect(
            try await DatabaseQueue(path: snapshot.path).read {
                try Int.fetchOne($0, sql: "SELECT count(*) FROM foldersync_tombstones")!
            } == 0)
    }

    @Test(
        "A deleted device that comes back drops its unpublished update of a row whose delete every other device forgot")
    func returningDeviceAfterCollection() async throws {
        let directory = TemporaryDirectory()
        let (a, b, c) = try await Self.threeClients(directory)
        try c.execute("UPDATE notes SET title = 'edited by C, unaware' WHERE id = 'n1'")
        try await a.document.deleteClient("client-C")  // C is expired: it holds nothing back any more
        try await converge(a, b)
        #expect(try await a.document.collectTombstones() == 2)
        #expect(try await b.document.collectTombstones() == 2)
        _ = try await a.document.uploadWholeStore()  // without n1 and without its tombstone: what C re-joins from
        await #expect { try await c.sync() } throws: { ($0 as? FolderSyncError)?.code == .clientDeleted }
        try await c.document.rejoin()
        try await converge(a, b, c)
        for client in [a, b, c] { #expect(try client.value("SELECT count(*) FROM notes WHERE id = 'n1'") == "0") }
        #expect(try NotesSchema.dump(a.store) == (try NotesSchema.dump(c.store)))
    }

    @Test(
        "A store that covers every set of a device holds its own rows, or their collected deletes: none comes back at install",
        arguments: [DeletePolicy.deleteWins, .lastWriterWins])
    func installDropsOwnRowWhoseDeleteWasCollected(deletePolicy: DeletePolicy) async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let a = try await Self.client(remote, "A", directory, deletePolicy: deletePolicy)
        let b = try await Self.client(remote, "B", directory, deletePolicy: deletePolicy)
        let c = try await Self.client(remote, "C", directory, deletePolicy: deletePolicy)
        try c.execute("INSERT INTO notes(id, title) VALUES ('c1', 'from C'), ('c2', 'from C')")
        try await converge(c, a, b)
        try await a.document.deleteClient("client-C")  // C holds nothing back any more
        try b.execute("DELETE FROM notes WHERE id = 'c1'")
        try await converge(b, a)
        #expect(try await a.document.collectTombstones() == 1)
        // A's store, as a whole store carries it: C's set covered, neither c1 nor its tombstone.
        let snapshot = directory.url.appendingPathComponent("a-snapshot.sqlite")
        let covers = try #require(try a.store.writeSnapshot(to: snapshot, localClient: "client-A"))
        #expect(covers["client-C"] == 1)
        try c.store.restoreSnapshot(from: snapshot, covers: covers, localClient: "client-C")
        #expect(try c.value("SELECT group_concat(id) FROM notes") == "c2")
    }

    @Test(
        "A deleted device that comes back keeps its unpublished update of a row the installed store lacks, every column written again"
    )
    func returningDeviceKeepsAnUpdateTheStoreLacks() async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let a = try await Self.client(remote, "A", directory)
        let c = try await Self.client(remote, "C", directory)
        try await converge(a, c)
        _ = try await a.document.uploadWholeStore()  // what C re-joins from: it never has t1
        try c.execute("INSERT INTO tags(id, name) VALUES ('t1', 'first')")
        try await c.sync()
        // Every column of t1 written again here: no register of the row tells any more which set created it.
        try c.execute("UPDATE tags SET name = 'second' WHERE id = 't1'")
        try await a.document.deleteClient("client-C")
        await #expect { try await c.sync() } throws: { ($0 as? FolderSyncError)?.code == .clientDeleted }
        try await c.document.rejoin()
        try await converge(a, c)
        for client in [a, c] { #expect(try client.value("SELECT name FROM tags WHERE id = 't1'") == "second") }
    }

    /// Wipes the document's folder; each of `clients` then finds it and re-joins, in turn.
    static func wipe(_ remote: any RemoteFileSystem, rejoining clients: TestClient...) async throws {
        try await remote.remove(clients[0].document.layout.documentDirectory("DOC"))
        for client in clients {
            await #expect { try await client.sync() } throws: {
                ($0 as? FolderSyncError)?.code == .integrityKeyMismatch
            }
            try await client.document.rejoin()
        }
    }

    /// What `client`'s marker awaits (``RecentSync/awaiting``).
    static func awaiting(_ client: TestClient, _ remote: any RemoteFileSystem) async throws -> [String]? {
        let path = client.document.layout.recentSyncFile("DOC", client: client.document.clientIdentifier)
        return try PropertyListFile.decode(RecentSync.self, from: try await remote.read(path), path: "marker").awaiting
    }

    @Test(
        "After a wipe, a whole store keeps this epoch's tombstones: the old epoch's horizon numbered other sets",
        arguments: [DeletePolicy.deleteWins, .lastWriterWins])
    func oldEpochHorizonCollectsNothing(deletePolicy: DeletePolicy) async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let a = try await Self.client(remote, "A", directory, deletePolicy: deletePolicy)
        let b = try await Self.client(remote, "B", directory, deletePolicy: deletePolicy)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'from A'), ('n2', 'from A')")
        for title in ["one", "two", "three"] {
            try b.execute("UPDATE notes SET title = ? WHERE id = 'n2'", [title])
            try await converge(b, a)
        }
        _ = try await a.document.collectTombstones()  // saves a horizon: B's sets stable through 3
        try await Self.wipe(remote, rejoining: a)
        try b.execute("DELETE FROM notes WHERE id = 'n1'")
        await #expect { try await b.sync() } throws: { ($0 as? FolderSyncError)?.code == .integrityKeyMismatch }
        try await b.document.rejoin()  // the delete travels as B's set 1 of the new epoch
        try await a.sync()
        #expect(try Self.tombstones(a) == ["notes/n1"])
        _ = try await a.document.uploadWholeStore()
        #expect(try Self.tombstones(a) == ["notes/n1"], "the old epoch's horizon collected the new epoch's delete")
    }

    @Test(
        "After a wipe, no tombstone is collected until every device of the old epoch re-joined; markers say whom they await",
        arguments: [DeletePolicy.deleteWins, .lastWriterWins])
    func awaitsTheOldEpochsDevices(deletePolicy: DeletePolicy) async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let a = try await Self.client(remote, "A", directory, deletePolicy: deletePolicy)
        let b = try await Self.client(remote, "B", directory, deletePolicy: deletePolicy)
        let c = try await Self.client(remote, "C", directory, deletePolicy: deletePolicy)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'from A'), ('n2', 'from A')")
        try await converge(a, b, c)
        #expect(try await Self.awaiting(a, remote) == nil)
        try await Self.wipe(remote, rejoining: a, b)
        try await converge(a, b)
        #expect(try await Self.awaiting(a, remote) == ["client-C"])
        #expect(try await Self.awaiting(b, remote) == ["client-C"])
        try a.execute("DELETE FROM notes WHERE id = 'n1'")
        try await converge(a, b)
        // C still holds n1 as the old epoch left it, and records it as new when it re-joins: only the tombstone
        // keeps it deleted.
        #expect(try await a.document.collectTombstones() == 0, "C has not re-joined")
        #expect(try await b.document.collectTombstones() == 0)
        await #expect { try await c.sync() } throws: { ($0 as? FolderSyncError)?.code == .integrityKeyMismatch }
        try await c.document.rejoin()
        try await converge(a, b, c)
        for client in [a, b, c] { #expect(try client.value("SELECT count(*) FROM notes WHERE id = 'n1'") == "0") }
        #expect(try await Self.awaiting(a, remote) == nil, "C registered: A's marker awaits nobody")
        #expect(try await a.document.collectTombstones() == 1)
    }

    @Test("Delete-wins tables whose sync IDs are reused keep their tombstones, so a deleted ID stays refused")
    func reusedIDsKeepTheirTombstones() async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let a = try await Self.client(remote, "A", directory)
        let b = try await Self.client(remote, "B", directory)
        try a.execute("INSERT INTO folders(id, name) VALUES ('folder:Work', 'Work')")
        try await converge(a, b)
        try a.execute("DELETE FROM folders WHERE id = 'folder:Work'")
        try await converge(a, b)
        #expect(try await a.document.collectTombstones() == 0)
        #expect(throws: DatabaseError.self) {
            try a.execute("INSERT INTO folders(id, name) VALUES ('folder:Work', 'Work')")
        }
    }
}
