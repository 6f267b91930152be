import Foundation
import GRDB
import GRDBSQLite

/// Opening a store with the app's `DatabaseMigrator`: its pending migrations run where the store stamps their writes,
/// and a database a newer version of the app migrated is refused before a byte of it is written.
extension GRDBStore {
    /// Runs the migrator's pending migrations, after refusing a database it cannot describe.
    static func migrate(
        _ database: any DatabaseWriter, with migrator: DatabaseMigrator, clock: StoreClock,
        path: String
    ) throws {
        guard !migrator.eraseDatabaseOnSchemaChange else {
            throw FolderSyncError(
                .invalidConfiguration,
                "a migrator that erases the database on schema changes would "
                    + "erase its sync bookkeeping: turn eraseDatabaseOnSchemaChange off for a synced store")
        }
        let (applied, heads) = try database.read { db in
            try StoreSchema.checkBookkeepingVersion(db, path: path)
            return (try migrator.appliedIdentifiers(db), try StoreSchema.hasRegisterHeads(db))
        }
        try refuseUnknownMigrations(applied, of: migrator, path: path)
        guard !migrator.migrations.allSatisfy(applied.contains) else { return }
        // Migrations write through the triggers the store's last opening left: stamped after everything the store
        // holds, read (through a connection of its own, at the clock's first use) when one writes a synced row.
        guard heads else { return try migrator.migrate(database) }
        try clock.seedingOnFirstUse(
            { try StoreClock.newestStamp(inDocumentAt: path) },
            during: { try migrator.migrate(database) })
    }

    /// Refuses the file at `path` when a newer version of the app migrated it, reading it without writing a byte,
    /// before the store opens it (as ``StoreSchema/refuseNewerBookkeeping(atPath:)`` does).
    static func refuseUnknownMigrations(atPath path: String, migrator: DatabaseMigrator) throws {
        let applied = StoreSchema.withImmutableConnection(atPath: path) { connection -> Set<String> in
            var statement: OpaquePointer?
            defer { sqlite3_finalize(statement) }
            // No migration table: a new file, or one no migrator ran on.
            guard
                sqlite3_prepare_v2(connection, "SELECT identifier FROM grdb_migrations", -1, &statement, nil)
                    == SQLITE_OK
            else { return [] }
            var identifiers = Set<String>()
            while sqlite3_step(statement) == SQLITE_ROW, let text = sqlite3_column_text(statement, 0) {
                identifiers.insert(String(cString: text))
            }
            return identifiers
        }
        try refuseUnknownMigrations(applied ?? [], of: migrator, path: path)
    }

    /// - Throws: ``FolderSyncError/Code/unsupportedFormatVersion`` when `applied` holds a migration `migrator` lacks.
    private static func refuseUnknownMigrations(
        _ applied: Set<String>, of migrator: DatabaseMigrator,
        path: String
    ) throws {
        let unknown = applied.subtracting(migrator.migrations).sorted()
        guard !unknown.isEmpty else { return }
        throw FolderSyncError(
            .unsupportedFormatVersion,
            "the database was migrated by a newer version of the app (migration "
                + "\(unknown.joined(separator: ", ")) unknown here): update the app", path: path)
    }
}
