import FolderSync
import Foundation
import GRDB
import Logging
import Testing

@testable import TestSupport

/// A store opened as a `DatabasePool`: capture, apply and whole-store installs work on it, and the app's reads run
/// while a sync applies, each on the last committed state.
@Suite("GRDBStore on a DatabasePool")
struct DatabasePoolTests {
    @Test("A pool store's database is a DatabasePool; a queue store's a DatabaseQueue; the app's configuration is kept")
    func kinds() throws {
        let directory = TemporaryDirectory()
        var configuration = Configuration()
        configuration.maximumReaderCount = 3
        configuration.foreignKeysEnabled = false
        let pool = try GRDBStore(
            path: directory.url.appendingPathComponent("pool.sqlite").path, tables: [SyncedTable("notes")],
            connection: .pool, configuration: configuration, migrator: AppDevice.migrator)
        let queue = try GRDBStore(
            path: directory.url.appendingPathComponent("queue.sqlite").path, tables: [SyncedTable("notes")],
            migrator: AppDevice.migrator)
        #expect(pool.database is DatabasePool && queue.database is DatabaseQueue)
        #expect(pool.database.configuration.maximumReaderCount == 3)
        #expect(try pool.database.read { try Bool.fetchOne($0, sql: "PRAGMA foreign_keys") } == false)
        #expect(try queue.database.read { try Bool.fetchOne($0, sql: "PRAGMA foreign_keys") } == true)
        #expect(try pool.database.read { try String.fetchOne($0, sql: "PRAGMA journal_mode") } == "wal")
    }

    @Test("A read-only configuration is refused with a typed error")
    func readOnlyRefused() throws {
        let directory = TemporaryDirectory()
        var configuration = Configuration()
        configuration.readonly = true
        #expect {
            try GRDBStore(
                path: directory.url.appendingPathComponent("notes.sqlite").path, tables: [SyncedTable("notes")],
                connection: .pool, configuration: configuration, migrator: AppDevice.migrator)
        } throws: { ($0 as? FolderSyncError)?.code == .invalidConfiguration }
    }

    @Test("A read made while the apply's transaction is open sees the last commit, not the set being applied")
    func readDuringApplySeesLastCommit() async throws {
        let directory = TemporaryDirectory()
        let shared = directory.subdirectory("shared")
        let a = try await AppDevice.make("A", in: directory, shared: shared, connection: .pool)
        let b = try await AppDevice.make("B", in: directory, shared: shared, connection: .pool)
        try a.write("INSERT INTO notes(id, body) VALUES ('n1', 'one')")
        try await a.sync()
        try await b.sync()
        let rows = 2_000
        try await a.store.database.write { db in
            let insert = try db.makeStatement(sql: "INSERT INTO notes(id, body) VALUES (?, ?)")
            for index in 0..<rows { try insert.execute(arguments: ["r\(index)", "row \(index)"]) }
        }
        try await a.sync()
        // While B's apply holds its transaction, all rows written, not committed: a read on another thread.
        let reader = ReadBeforeCommit(b.store.database, table: "notes")
        b.store.database.add(transactionObserver: reader)
        let report = try await b.sync()
        #expect(report.changesApplied == rows)
        #expect(reader.countsSeen == [1], "a read during the apply saw \(reader.countsSeen) rows")
        #expect(try await b.store.database.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM notes") } == rows + 1)
    }

    @Test("Reads running throughout a large apply each see the state before or after it, never part of it")
    func concurrentReadsSeeWholeSets() async throws {
        let directory = TemporaryDirectory()
        let shared = directory.subdirectory("shared")
        let a = try await AppDevice.make("A", in: directory, shared: shared, connection: .pool)
        let b = try await AppDevice.make("B", in: directory, shared: shared, connection: .pool)
        let rows = 20_000
        try await a.store.database.write { db in
            let insert = try db.makeStatement(sql: "INSERT INTO notes(id, body) VALUES (?, ?)")
            for index in 0..<rows { try insert.execute(arguments: ["r\(index)", "row \(index)"]) }
        }
        try await a.sync()
        let counts = Locked<[Int]>([])
        let syncing = Locked(true)
        let database = b.store.database
        let reads = Task.detached {
            while syncing.withLock({ $0 }) {
                let count = try database.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM notes") ?? -1 }
                counts.withLock { $0.append(count) }
            }
        }
        let report = try await b.sync()
        syncing.withLock { $0 = false }
        try await reads.value
        #expect(report.changesApplied == rows)
        let seen = Set(counts.withLock { $0 })
        #expect(!seen.isEmpty && seen.isSubset(of: [0, rows]), "reads saw \(seen.sorted())")
    }

    @Test("A new device opens its store as a pool from the whole store, renamed into place, and syncs on")
    func newDeviceOpensPool() async throws {
        let directory = TemporaryDirectory()
        let shared = directory.subdirectory("shared")
        let a = try await AppDevice.make("A", in: directory, shared: shared, connection: .pool)
        try a.write("INSERT INTO notes(id, body) VALUES ('n1', 'one'), ('n2', 'two')")
        try await a.sync()
        #expect(try await a.document.uploadWholeStore() != nil)
        var environment = SyncEnvironment.live
        environment.logger.logLevel = .error
        let app = ApplicationSyncManager(remote: FileManagerFileSystem(rootURL: shared), environment: environment)
        try await app.register(
            .init(applicationIdentifier: "com.example.notes", clientIdentifier: "client-C", clientDescription: "C"))
        let document = try DocumentSyncManager(
            applicationSyncManager: app,
            configuration: .init(
                documentIdentifier: "notes", documentDescription: "Notes",
                helperDirectory: directory.subdirectory("C-helper")))
        try await document.registerConfigured()
        let store = try await document.openStore(at: directory.url.appendingPathComponent("C.sqlite")) { url in
            try GRDBStore(
                path: url.path, tables: [SyncedTable("notes")], connection: .pool, migrator: AppDevice.migrator)
        }
        #expect(store.database is DatabasePool)
        let c = AppDevice(store: store, app: app, document: document)
        #expect(try c.notes() == ["n1=one", "n2=two"])
        try c.write("UPDATE notes SET body = 'two, from C' WHERE id = 'n2'")
        #expect(try await c.sync().changesSent == 1)
        try await a.sync()
        #expect(try a.notes() == ["n1=one", "n2=two, from C"])
    }

    @Test("On a pool, local writes are captured and published, and an update merges as on a queue")
    func captureAndMerge() async throws {
        let directory = TemporaryDirectory()
        let shared = directory.subdirectory("shared")
        let a = try await AppDevice.make("A", in: directory, shared: shared, connection: .pool)
        let b = try await AppDevice.make("B", in: directory, shared: shared, connection: .queue)
        try a.write("INSERT INTO notes(id, body) VALUES ('n1', 'one'), ('n2', 'two')")
        #expect(try await a.sync().changesSent == 2)
        try await b.sync()
        try b.write("UPDATE notes SET body = 'two, from B' WHERE id = 'n2'")
        try a.write("DELETE FROM notes WHERE id = 'n1'")
        try await b.sync()
        try await a.sync()
        try await b.sync()
        #expect(try a.notes() == ["n2=two, from B"])
        #expect(try b.notes() == a.notes())
    }
}

/// Reads the row count of `table` from another thread while the writer's transaction is about to commit: what a
/// view refreshing at that moment sees.
final class ReadBeforeCommit: TransactionObserver, @unchecked Sendable {
    private let database: any DatabaseWriter
    private let table: String
    private let lock = NSLock()
    private var changed = false
    private var counts: [Int] = []

    init(_ database: any DatabaseWriter, table: String) {
        self.database = database
        self.table = table
    }

    var countsSeen: [Int] { lock.withLock { counts } }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { eventKind.tableName == table }
    func databaseDidChange() { lock.withLock { changed = true } }
    func databaseDidChange(with event: DatabaseEvent) { lock.withLock { changed = true } }

    func databaseWillCommit() throws {
        guard lock.withLock({ changed }) else { return }
        // On a pool a read needs no writer: it runs now, on another thread, while this transaction waits.
        let done = DispatchSemaphore(value: 0)
        let database = database
        let table = table
        let count = Locked(-1)
        DispatchQueue.global().async {
            count.withLock {
                $0 = (try? database.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM \(table)") ?? -1 }) ?? -2
            }
            done.signal()
        }
        done.wait()
        lock.withLock { counts.append(count.withLock { $0 }) }
    }

    func databaseDidCommit(_ db: Database) { lock.withLock { changed = false } }
    func databaseDidRollback(_ db: Database) { lock.withLock { changed = false } }
}
