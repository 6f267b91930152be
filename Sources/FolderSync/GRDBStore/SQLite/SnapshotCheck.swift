import Foundation
import GRDBSQLite

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a downloaded snapshot may hold: the synced tables with the columns the app declares, FolderSync's merge
/// metadata with its exact columns, indexes of those tables, and nothing else.
///
/// A whole store comes from another device, through a folder someone else runs: its SQLite file is untrusted.
/// A trigger in it would run inside the app's database after a page install, a view would answer the app's
/// queries, an unknown table would land in the app's file. ``SnapshotCheck`` refuses every such file before any of
/// it is installed.
struct SnapshotSchema: Sendable, Hashable {
    /// The columns a table must have, and those it may have.
    struct Table: Sendable, Hashable {
        var required: Set<String>
        var allowed: Set<String>
        /// Generated columns the local table has; any other generated or hidden column is refused.
        var generated: Set<String> = []
    }

    /// Every table a snapshot must hold, by name.
    var tables: [String: Table]
    /// Views the local store declares, by name and SQL. Snapshots written before FolderSync dropped views carry the
    /// app's own views; one identical to the local view of that name is accepted, any other view is refused.
    var views: [String: String] = [:]
}

/// Checks an untrusted SQLite snapshot (a downloaded whole store) before anything reads or installs it.
///
/// One place for every path that installs a snapshot: ``WholeStoreReader/finish()`` runs the checks that need no
/// schema (while the download is verified, so that a damaged store is skipped for the next candidate), and each
/// install (page install, rename of a completed snapshot, row merge) runs them all with the store's schema.
///
/// The file is opened read-only, without following a symbolic link, with `trusted_schema = OFF` (no function of
/// the file's schema can run but SQLite's innocuous built-ins) and `cell_size_check = ON`. What is refused:
/// - a file that is not a SQLite database in rollback-journal mode with UTF-8 text;
/// - any trigger or virtual table (no honest snapshot has one: the writer drops triggers, and a store with
///   virtual tables never travels);
/// - with a schema: any view but the app's own, any table that is not a synced or metadata table (SQLite's own
///   `sqlite_sequence` and `sqlite_stat1`/`sqlite_stat4` aside), an index of any other table, a synced or
///   metadata table missing, a column the local table does not have, a generated or hidden column, a metadata
///   table without its exact columns, a synced table without its sync-ID column;
/// - a file that fails `PRAGMA quick_check` (or `integrity_check`): malformed pages, bad B-trees, wrong counts.
///
/// Columns the local table has and the snapshot lacks are accepted: a store of an older schema version (which the
/// download accepts) lacks the columns added since, and the row merge leaves them at their defaults.
///
/// Each refusal is ``FolderSyncError/Code/corruptFile`` naming the whole store and what was found in it.
enum SnapshotCheck {
    /// How much of SQLite's own consistency check runs.
    enum Integrity: Sendable {
        /// None: the caller checked the file already.
        case none
        /// `PRAGMA quick_check`: every page and B-tree, not the agreement of indexes with their tables.
        case quick
        /// `PRAGMA integrity_check`: also every index against its table.
        case full
    }

    /// SQLite's internal tables a honest snapshot may hold.
    static let internalTables: Set<String> = ["sqlite_sequence", "sqlite_stat1", "sqlite_stat4"]

    /// Checks the snapshot at `url`; errors name `path` (the remote whole store), or the remote path the same file
    /// was verified under while it was downloaded.
    ///
    /// With `integrity` other than `.none`, a file that already passed that check since it was written (same
    /// device, inode, size and change time: ``WholeStoreReader`` checks while the download is verified) is not
    /// read a second time.
    static func verify(at url: URL, path: String, schema: SnapshotSchema?, integrity: Integrity = .quick) throws {
        let identity = FileIdentity(url.path)
        let earlier = identity.flatMap { identity in verified.withLock { $0[identity] } }
        let path = earlier?.path ?? path
        let connection = try open(url, path: path)
        defer { sqlite3_close_v2(connection) }
        try checkStructure(connection, path: path, schema: schema)
        let needed: Integrity
        switch integrity {
        case .none: needed = .none
        case .quick: needed = earlier == nil ? .quick : .none
        case .full: needed = earlier?.integrity == .full ? .none : .full
        }
        try checkIntegrity(connection, path: path, integrity: needed)
        if needed != .none, let identity {
            verified.withLock { table in
                if table.count >= 64 { table.removeAll() }  // scratch files: only the last few matter
                table[identity] = (path, needed)
            }
        }
    }

    // MARK: Opening

    private static func open(_ url: URL, path: String) throws -> OpaquePointer {
        try checkHeader(url, path: path)
        var connection: OpaquePointer?
        let flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW
        let code = sqlite3_open_v2(url.path, &connection, flags, nil)
        guard code == SQLITE_OK, let connection else {
            let message = connection.map { String(cString: sqlite3_errmsg($0)) } ?? "code \(code)"
            sqlite3_close_v2(connection)
            throw corrupt("cannot be opened as a SQLite database (\(message))", path: path)
        }
        // Functions of the file's schema must be innocuous; corrupt cells are caught as they are read; no mapping.
        for pragma in ["PRAGMA trusted_schema = OFF", "PRAGMA cell_size_check = ON", "PRAGMA mmap_size = 0"] {
            guard sqlite3_exec(connection, pragma, nil, nil, nil) == SQLITE_OK else {
                let message = String(cString: sqlite3_errmsg(connection))
                sqlite3_close_v2(connection)
                throw corrupt("cannot be opened as a SQLite database (\(message))", path: path)
            }
        }
        return connection
    }

    /// The 100-byte header: SQLite's magic and rollback-journal mode (a snapshot is written by `VACUUM INTO`, never
    /// in WAL mode). An empty file is an empty database; its missing tables are what the schema check refuses.
    private static func checkHeader(_ url: URL, path: String) throws {
        let fd = Glibc.open(url.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            throw FolderSyncError(
                .localStoreFailed, "cannot open the snapshot: \(String(cString: strerror(errno)))", path: url.path)
        }
        defer { close(fd) }
        var header = [UInt8](repeating: 0, count: 100)
        let count = header.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, 100) }
        guard count != 0 else { return }
        guard count == 100, header.prefix(16).elementsEqual(Array("SQLite format 3".utf8) + [0]) else {
            throw corrupt("is not a SQLite database", path: path)
        }
        guard header[18] == 1, header[19] == 1 else {
            throw corrupt("is not a rollback-journal SQLite database (WAL header)", path: path)
        }
    }

    // MARK: Structure

    private static func checkStructure(_ db: OpaquePointer, path: String, schema: SnapshotSchema?) throws {
        let encoding = try rows(db, "PRAGMA encoding", path: path).first?.first ?? nil
        guard encoding == "UTF-8" else {
            throw corrupt("does not hold UTF-8 text", path: path)
        }
        var tables = Set<String>()
        let entries = try rows(db, "SELECT type, name, tbl_name, sql FROM sqlite_master", path: path)
        for entry in entries {
            let type = entry[0] ?? ""
            let name = entry[1] ?? ""
            let table = entry[2] ?? ""
            let sql = entry[3] ?? ""
            switch type {
            case "trigger":
                throw corrupt(
                    "holds a trigger, \(quoted(name)) on \(quoted(table)); a whole store never carries triggers",
                    path: path)
            case "view":
                // Without a schema (while downloading) a view is not judged: the app's own views are allowed.
                guard let schema else { continue }
                guard schema.views[name] == sql else {
                    throw corrupt("holds a view, \(quoted(name)), that the app does not declare", path: path)
                }
            case "table":
                if sql.uppercased().hasPrefix("CREATE VIRTUAL") {
                    throw corrupt("holds a virtual table, \(quoted(name))", path: path)
                }
                if name.lowercased().hasPrefix("sqlite_") {
                    guard internalTables.contains(name.lowercased()) else {
                        throw corrupt("holds SQLite table \(quoted(name))", path: path)
                    }
                } else if let schema, schema.tables[name] == nil {
                    throw corrupt("holds a table that is neither synced nor FolderSync's, \(quoted(name))", path: path)
                }
                tables.insert(name)
            case "index":
                continue
            default:
                throw corrupt("holds a schema entry of kind \(quoted(type)), \(quoted(name))", path: path)
            }
        }
        for entry in entries where entry[0] == "index" {
            let name = entry[1] ?? ""
            let table = entry[2] ?? ""
            guard tables.contains(table), !internalTables.contains(table.lowercased()) else {
                throw corrupt(
                    "holds an index, \(quoted(name)), of a table it may not hold, \(quoted(table))", path: path)
            }
        }
        guard let schema else { return }
        for (name, expected) in schema.tables.sorted(by: { $0.key < $1.key }) {
            guard tables.contains(name) else { throw corrupt("has no table \(quoted(name))", path: path) }
            var columns = Set<String>()
            for column in try rows(db, "PRAGMA table_xinfo(\(quoted(name)))", path: path) {
                let columnName = column[1] ?? ""
                guard column[6] == "0" || expected.generated.contains(columnName) else {
                    throw corrupt(
                        "has a generated or hidden column, \(quoted(columnName)), in \(quoted(name))", path: path)
                }
                guard expected.allowed.contains(columnName) else {
                    throw corrupt(
                        "has a column that the app does not declare, \(quoted(columnName)), in \(quoted(name))",
                        path: path)
                }
                columns.insert(columnName)
            }
            let missing = expected.required.subtracting(columns)
            guard missing.isEmpty else {
                throw corrupt(
                    "lacks column \(missing.sorted().map(quoted).joined(separator: ", ")) of \(quoted(name))",
                    path: path)
            }
        }
    }

    // MARK: Integrity

    private static func checkIntegrity(_ db: OpaquePointer, path: String, integrity: Integrity) throws {
        let pragma: String
        switch integrity {
        case .none: return
        case .quick: pragma = "PRAGMA quick_check(1)"
        case .full: pragma = "PRAGMA integrity_check(1)"
        }
        let result = try rows(db, pragma, path: path).first?.first ?? nil
        guard result == "ok" else {
            throw corrupt(
                "fails SQLite's \(integrity == .full ? "integrity" : "quick") check: \(result ?? "no answer")",
                path: path)
        }
    }

    // MARK: Helpers

    /// Every row of `sql`, each column as text (or `nil` for NULL). A SQLite error on a hostile file is corruption.
    private static func rows(_ db: OpaquePointer, _ sql: String, path: String) throws -> [[String?]] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw corrupt("is not a readable SQLite database (\(String(cString: sqlite3_errmsg(db))))", path: path)
        }
        defer { sqlite3_finalize(statement) }
        var result: [[String?]] = []
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_DONE { return result }
            guard code == SQLITE_ROW else {
                throw corrupt("is not a readable SQLite database (\(String(cString: sqlite3_errmsg(db))))", path: path)
            }
            result.append(
                (0..<sqlite3_column_count(statement)).map { index in
                    sqlite3_column_text(statement, index).map { String(cString: $0) }
                })
        }
    }

    private static func quoted(_ name: String) -> String {
        "\"" + String(name.unicodeScalars.prefix(200).map { $0.value < 0x20 || $0 == "\"" ? "?" : Character($0) })
            + "\""
    }

    private static func corrupt(_ what: String, path: String) -> FolderSyncError {
        FolderSyncError(.corruptFile, "whole store \(what)", path: path)
    }

    // MARK: Files already checked

    /// A file's identity: it changes when anything writes the file (its change time moves).
    private struct FileIdentity: Hashable {
        var device: UInt64, inode: UInt64, size: Int64, seconds: Int, nanoseconds: Int

        init?(_ path: String) {
            var info = stat()
            guard lstat(path, &info) == 0 else { return nil }
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            seconds = Int(info.st_ctim.tv_sec)
            nanoseconds = Int(info.st_ctim.tv_nsec)
        }
    }

    /// Scratch files that passed the integrity check, with the remote path they were verified under.
    private static let verified = Locked<[FileIdentity: (path: String, integrity: Integrity)]>([:])
}
