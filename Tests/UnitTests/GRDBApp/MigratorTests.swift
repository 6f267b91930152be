import FolderSync
import Foundation
import GRDB
import Testing

@testable import TestSupport

/// A store opened with the app's `DatabaseMigrator`: pending migrations run, their writes are captured and stamped
/// after everything the store holds, and a database migrated further than the app knows is refused.
@Suite("GRDBStore with a DatabaseMigrator")
struct MigratorTests {
    /// The app's migrator at version 2: version 1 plus `pinned`, and a migration that writes synced rows.
    static var secondVersion: DatabaseMigrator {
        var migrator = AppDevice.migrator
        migrator.registerMigration("pinned") { db in
            try db.alter(table: "notes") { t in t.add(column: "pinned", .boolean).notNull().defaults(to: false) }
            try db.execute(sql: "UPDATE notes SET pinned = 1, body = body || ' (pinned)' WHERE body LIKE '!%'")
        }
        return migrator
    }

    @Test(
        "Pending migrations run as the store opens; a migration's write to a synced row is captured and wins over the older write it replaces, even when that write's clock ran ahead"
    )
    func migrationWritesStamped() async throws {
        let directory = TemporaryDirectory()
        let shared = directory.subdirectory("shared")
        // A's clock runs an hour ahead: its writes carry stamps B's wall clock has not reached.
        let aFolder = directory.subdirectory("A")
        let aStore = try GRDBStore(
            path: aFolder.appendingPathComponent("notes.sqlite").path, tables: [SyncedTable("notes")],
            now: { Date().addingTimeInterval(3600) }, migrator: AppDevice.migrator)
        let a = try await AppDevice.register(
            "A", store: aStore, helper: aFolder.appendingPathComponent("helper"), shared: shared)
        let bFolder = directory.subdirectory("B")
        let bPath = bFolder.appendingPathComponent("notes.sqlite").path
        var b = try await AppDevice.register(
            "B", store: try GRDBStore(path: bPath, tables: [SyncedTable("notes")], migrator: AppDevice.migrator),
            helper: bFolder.appendingPathComponent("helper"), shared: shared)
        try a.write("INSERT INTO notes(id, body) VALUES ('n1', '!call Ann'), ('n2', 'buy milk')")
        try await a.sync()
        try await b.sync()
        try b.store.database.close()

        // B's app is updated: the store opens with the second migration pending, which rewrites n1.
        let updated = try GRDBStore(
            path: bPath, tables: [SyncedTable("notes")], schemaVersion: 2, migrator: Self.secondVersion)
        #expect(try await updated.database.read(Self.secondVersion.hasCompletedMigrations))
        b = try await AppDevice.register(
            "B", store: updated, helper: bFolder.appendingPathComponent("helper"), shared: shared)
        #expect(try b.notes() == ["n1=!call Ann (pinned)", "n2=buy milk"])
        let published = try await b.sync()
        #expect(published.changesSent == 1, "the migration's write is a local change of B's")
        // A, still at version 1, parks B's version-2 set.
        #expect(try await a.sync().parkedChangeSets.count == 1)
        // A new device at version 2 gets A's write and B's migration write: B's is the newer, A's clock not
        // withstanding.
        let c = try await AppDevice.make(
            "C", in: directory, shared: shared, connection: .pool,
            migrator: Self.secondVersion, schemaVersion: 2)
        try await c.sync()
        #expect(try c.notes() == ["n1=!call Ann (pinned)", "n2=buy milk"])
    }

    @Test("A database migrated further than the app knows is refused with unsupportedFormatVersion, and left as it was")
    func supersededRefused() throws {
        let directory = TemporaryDirectory()
        let path = directory.url.appendingPathComponent("notes.sqlite").path
        let newer = try GRDBStore(
            path: path, tables: [SyncedTable("notes")], schemaVersion: 2, migrator: Self.secondVersion)
        try newer.database.write { try $0.execute(sql: "INSERT INTO notes(id, body) VALUES ('n1', 'kept')") }
        try newer.database.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect {
            try GRDBStore(path: path, tables: [SyncedTable("notes")], migrator: AppDevice.migrator)
        } throws: { error in
            guard let error = error as? FolderSyncError else { return false }
            return error.code == .unsupportedFormatVersion && error.message.contains("pinned") && error.path == path
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        let reopened = try GRDBStore(
            path: path, tables: [SyncedTable("notes")], schemaVersion: 2, migrator: Self.secondVersion)
        #expect(try reopened.database.read { try String.fetchOne($0, sql: "SELECT body FROM notes") } == "kept")
    }

    @Test("A migrator that erases the database on schema changes is refused: it would erase the sync bookkeeping")
    func erasingMigratorRefused() throws {
        let directory = TemporaryDirectory()
        var migrator = AppDevice.migrator
        migrator.eraseDatabaseOnSchemaChange = true
        #expect {
            try GRDBStore(
                path: directory.url.appendingPathComponent("notes.sqlite").path, tables: [SyncedTable("notes")],
                migrator: migrator)
        } throws: { ($0 as? FolderSyncError)?.code == .invalidConfiguration }
    }
}
