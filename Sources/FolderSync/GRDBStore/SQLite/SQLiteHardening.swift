import CFileSystem
import Foundation
import GRDB

/// The settings SQLite recommends for a connection to a database file that may come from elsewhere
/// (<https://www.sqlite.org/security.html>), for the app's connection to its store and for every connection
/// FolderSync opens on a downloaded snapshot.
///
/// - `SQLITE_DBCONFIG_DEFENSIVE`: no SQL statement can corrupt the file (`writable_schema`, `journal_mode = OFF`,
///   `schema_version = N`, writes to shadow tables).
/// - `trusted_schema = OFF`: triggers, views, CHECK constraints, defaults, generated columns and expression indexes
///   may call only functions tagged innocuous. FolderSync's own functions are (``StoreFunctions``); an app that
///   calls a function of its own from its schema must register it with `SQLITE_INNOCUOUS`.
/// - No extension loading.
enum SQLiteHardening {
    /// Applies the settings to `db`'s connection.
    /// - Throws: ``FolderSyncError/Code/localStoreFailed`` when SQLite refuses them.
    static func harden(_ db: Database) throws {
        let connection = db.sqliteConnection.map { UnsafeMutableRawPointer($0) }
        let code = foldersync_sqlite_harden(connection)
        guard code == 0 else {
            throw FolderSyncError(
                .localStoreFailed, "cannot put the SQLite connection in defensive mode (code \(code))",
                path: db.description)
        }
    }

    /// Whether `db`'s connection is defensive and does not trust its schema.
    static func isHardened(_ db: Database) -> Bool {
        foldersync_sqlite_is_hardened(db.sqliteConnection.map { UnsafeMutableRawPointer($0) }) == 1
    }

    /// A configuration whose connections are hardened once `prepare` ran (settings such as `journal_mode = OFF`,
    /// which defensive mode refuses, go there).
    static func configuration(readonly: Bool = false, prepare: (@Sendable (Database) throws -> Void)? = nil)
        -> Configuration
    {
        var configuration = Configuration()
        configuration.readonly = readonly
        configuration.prepareDatabase { db in
            try prepare?(db)
            try harden(db)
        }
        return configuration
    }
}
