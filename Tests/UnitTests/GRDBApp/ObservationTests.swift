import FolderSync
import Foundation
import GRDB
import Testing

@testable import TestSupport

/// Every change a sync makes reaches GRDB's observers (`ValueObservation`, `DatabaseRegionObservation`, an app's
/// `TransactionObserver`) like a local write, in the transaction that made it: applied change sets, whole-store
/// installs (pages copied or rows merged) and re-joins; an observation of a table that does not sync is not woken.
@Suite("GRDB observation of syncs")
struct ObservationTests {
    static let connections: [GRDBStore.Connection] = [.queue, .pool]

    @Test(
        "An observation on B sees A's insert, update and delete after B's sync, each in the commit that made it",
        arguments: connections)
    func applySeen(_ connection: GRDBStore.Connection) async throws {
        let directory = TemporaryDirectory()
        let shared = directory.subdirectory("shared")
        let a = try await AppDevice.make("A", in: directory, shared: shared, connection: connection)
        let b = try await AppDevice.make("B", in: directory, shared: shared, connection: connection)
        let notes = TableObserver("notes")
        let settings = TableObserver("settings")
        b.store.database.add(transactionObserver: notes)
        b.store.database.add(transactionObserver: settings)
        let regionChanges = Counter()
        let region = DatabaseRegionObservation(tracking: Table("notes"))
            .start(in: b.store.database, onError: { Issue.record($0) }, onChange: { _ in regionChanges.increment() })
        defer { region.cancel() }
        let unsyncedChanges = Counter()
        let unsynced = DatabaseRegionObservation(tracking: Table("settings"))
            .start(in: b.store.database, onError: { Issue.record($0) }, onChange: { _ in unsyncedChanges.increment() })
        defer { unsynced.cancel() }
        let listed = ObservedValues(
            ValueObservation.tracking { db in
                try Row.fetchAll(db, sql: "SELECT id, body FROM notes ORDER BY id").map {
                    "\($0["id"] as String)=\($0["body"] as String)"
                }
            }, in: b.store.database)

        try a.write("INSERT INTO notes(id, body) VALUES ('n1', 'one'), ('n2', 'two')")
        try await a.sync()
        let inserted = try await b.sync()
        #expect(inserted.changesApplied == 2)
        // One commit, which held both rows when observers heard of it.
        #expect(notes.rowCountsAtCommits == [2])
        #expect(regionChanges.value == 1)
        _ = try await listed.value { $0 == ["n1=one", "n2=two"] }

        try a.write("UPDATE notes SET body = 'one, edited' WHERE id = 'n1'")
        try a.write("DELETE FROM notes WHERE id = 'n2'")
        try await a.sync()
        try await b.sync()
        #expect(notes.rowCountsAtCommits == [2, 1])
        #expect(regionChanges.value == 2)
        _ = try await listed.value { $0 == ["n1=one, edited"] }
        #expect(
            settings.rowCountsAtCommits.isEmpty && unsyncedChanges.value == 0,
            "an unsynced table's observers were woken")
    }

    @Test(
        "A new device's first sync installs the whole store page by page into its open, empty store: observers hear of it once",
        arguments: connections)
    func pageInstallSeen(_ connection: GRDBStore.Connection) async throws {
        let directory = TemporaryDirectory()
        let c = try await Self.newDevice(
            connection, in: directory, after: "('n1', 'one'), ('n2', 'two'), ('n3', 'three')")
        let notes = TableObserver("notes")
        let settings = TableObserver("settings")
        c.store.database.add(transactionObserver: notes)
        c.store.database.add(transactionObserver: settings)
        let listed = ObservedValues(
            ValueObservation.tracking { db in try String.fetchAll(db, sql: "SELECT id FROM notes ORDER BY id") },
            in: c.store.database)
        let joined = try await c.sync()
        #expect(joined.installedWholeStore != nil)
        #expect(notes.rowCountsAtCommits == [3])
        #expect(settings.rowCountsAtCommits.isEmpty)
        _ = try await listed.value { $0 == ["n1", "n2", "n3"] }
        #expect(try c.notes() == ["n1=one", "n2=two", "n3=three"])
    }

    @Test(
        "A whole store merged row by row into a store with local notes: observers hear of it once",
        arguments: connections)
    func rowInstallSeen(_ connection: GRDBStore.Connection) async throws {
        let directory = TemporaryDirectory()
        let c = try await Self.newDevice(connection, in: directory, after: "('n1', 'one'), ('n2', 'two')")
        try c.write("INSERT INTO notes(id, body) VALUES ('c1', 'written on C before its first sync')")
        let notes = TableObserver("notes")
        c.store.database.add(transactionObserver: notes)
        let joined = try await c.sync()
        #expect(joined.installedWholeStore != nil)
        // The install, with C's own note put back on top, in one transaction.
        #expect(notes.rowCountsAtCommits == [3])
        #expect(try c.notes() == ["c1=written on C before its first sync", "n1=one", "n2=two"])
    }

    /// A new device C, registered (not synced yet) once A wrote the notes `values` and uploaded a whole store.
    static func newDevice(_ connection: GRDBStore.Connection, in directory: TemporaryDirectory, after values: String)
        async throws -> AppDevice
    {
        let shared = directory.subdirectory("shared")
        let a = try await AppDevice.make("A", in: directory, shared: shared, connection: .queue)
        try a.write("INSERT INTO notes(id, body) VALUES " + values)
        try await a.sync()
        #expect(try await a.document.uploadWholeStore() != nil)
        return try await AppDevice.make("C", in: directory, shared: shared, connection: connection)
    }

    @Test(
        "A re-join after this client was deleted installs the whole store: observers hear of it once",
        arguments: connections)
    func rejoinSeen(_ connection: GRDBStore.Connection) async throws {
        let directory = TemporaryDirectory()
        let shared = directory.subdirectory("shared")
        let a = try await AppDevice.make("A", in: directory, shared: shared, connection: .queue)
        let b = try await AppDevice.make("B", in: directory, shared: shared, connection: connection)
        try a.write("INSERT INTO notes(id, body) VALUES ('n1', 'one')")
        try await a.sync()
        try await b.sync()
        try a.write("INSERT INTO notes(id, body) VALUES ('n2', 'two')")
        try await a.sync()
        #expect(try await a.document.uploadWholeStore() != nil)
        _ = try await a.document.deleteClient("client-B")
        let notes = TableObserver("notes")
        b.store.database.add(transactionObserver: notes)
        await #expect(throws: FolderSyncError.self) { try await b.sync() }
        #expect(notes.rowCountsAtCommits.isEmpty)
        try await b.document.rejoin()
        #expect(notes.rowCountsAtCommits == [2])
        #expect(try b.notes() == ["n1=one", "n2=two"])
    }
}

/// A count shared with observation callbacks.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func increment() { lock.withLock { count += 1 } }
}
