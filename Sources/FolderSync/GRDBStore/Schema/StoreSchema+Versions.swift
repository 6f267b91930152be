import Foundation
import GRDB
import GRDBSQLite

/// The bookkeeping schema's version: recorded in the store, brought up to date by named, ordered migrations,
/// and never guessed at twice.
///
/// A store records in `foldersync_meta` (key ``bookkeepingVersionKey``) the version of the bookkeeping
/// (`foldersync_…` tables and the BLOBs in them) it was last opened with. Opening a store:
/// 1. reads the recorded version; a version newer than ``currentBookkeepingVersion`` is refused with
///    ``FolderSyncError/Code/unsupportedFormatVersion`` before anything is written, so an older library leaves
///    a newer store exactly as it found it (``refuseNewerBookkeeping(atPath:)``, before the connection opens);
/// 2. a store with no recorded version (written before versions were recorded, or new) is identified once by
///    its shape (``identifyUnversionedBookkeeping(_:)``);
/// 3. runs the migrations above that version, in order, in the store's opening transaction (all or nothing),
///    and records the current version.
///
/// The history (each version is what the library wrote from the commit named until the next version):
///
/// | version | written from | bookkeeping |
/// |---|---|---|
/// | 1 | `e4af2e8` | one `foldersync_clocks` row per register (`col`, `hlc`, `client`); pending changes one row per column, staged ones with their `staged_in` |
/// | 2 | `3188797` | one `foldersync_clocks` row per synced row, its registers packed in `stamps` (no head); pending changes one row per synced row, marks packed |
/// | 3 | `381d80c` | `stamps` carries the newest register's timestamp at its head (``RowRegisters``), same version byte 1 |
/// | 4 | `b47ea05` | staged changes in `foldersync_staged_changes`; the pending table keeps unstaged ones only |
/// | 5 | `4128626` | `foldersync_applied_runs`: each client's run of applied change sets beside the ledger |
/// | 6 | `2d6d128` | registers written in version 2 (ages instead of timestamps, no client byte for this client's: ``RowRegisters``); a new row's pending marks `#created #all` (``PendingMarks``) |
/// | 7 | `700f4f4` | capture triggers call functions named by the message a connection without them gets (``StoreSchema/captureFunction(_:)``); `foldersync_tombstone_sets` for tombstone collection |
/// | 8 | `1602078` | the ledger keyed by client, sequence and change-set identifier (two sets under one number both recorded); what a whole store or a restore covers kept as a run alone, without a row per set |
/// | 9 | this version | a delete of a delete-wins row is its pending marks `#deleted #at=T` alone (9 bytes: a zero byte, `T` big-endian) until it is settled: its tombstone and the removal of its registers follow then (``PendingMarks/deletion(at:)``, `GRDBStore+UnsettledDeletions.swift`) |
///
/// A change to any `foldersync_…` table, or to the bytes of a BLOB kept in one, is a new version: append a
/// migration to ``bookkeepingMigrations`` and a golden store of the old version to
/// `RemoteLayouts/v1/golden/fixtures/local-stores/`.
extension StoreSchema {
    /// The key of the recorded version in `foldersync_meta`.
    static let bookkeepingVersionKey = "bookkeepingVersion"

    /// The bookkeeping version this library writes, and the newest it opens.
    static var currentBookkeepingVersion: Int { bookkeepingMigrations.last!.version }

    /// One step of the bookkeeping's history: it takes a store of `version - 1` to `version`.
    struct BookkeepingMigration: Sendable {
        /// The version the store has once the step ran.
        var version: Int
        /// What the step changes, for logs and tests.
        var name: String
        var run: @Sendable (Database) throws -> Void
    }

    /// Every migration, oldest first; version 1 is the first layout, which needs none.
    static let bookkeepingMigrations: [BookkeepingMigration] = [
        BookkeepingMigration(version: 1, name: "per-column registers (the first layout)", run: { _ in }),
        BookkeepingMigration(
            version: 2, name: "registers and pending marks packed one row per synced row", run: packRegisterRows),
        BookkeepingMigration(
            version: 3, name: "registers carry their newest timestamp at their head", run: addNewestTimestampHeads),
        BookkeepingMigration(version: 4, name: "staged changes in a table of their own", run: splitStagedChanges),
        BookkeepingMigration(version: 5, name: "each client's run of applied change sets", run: addAppliedRuns),
        BookkeepingMigration(
            version: 6, name: "compact registers and marks of every column", run: acceptCompactBookkeeping),
        BookkeepingMigration(
            version: 7, name: "capture functions named by their message, tombstones' change sets",
            run: addTombstoneSets),
        BookkeepingMigration(
            version: 8, name: "the ledger keyed by change-set identifier, covered runs without rows",
            run: keyLedgerByIdentifier),
        BookkeepingMigration(
            version: 9, name: "deletes recorded in one write, settled later", run: acceptUnsettledDeletions),
    ]

    /// The recorded version, or `nil` when none is recorded.
    static func recordedBookkeepingVersion(_ db: Database, path: String? = nil) throws -> Int? {
        guard try db.tableExists(StoreSchema.metaTable) else { return nil }
        guard
            let value = try DatabaseValue.fetchOne(
                db, sql: "SELECT value FROM \(StoreSchema.metaTable) WHERE key = ?",
                arguments: [bookkeepingVersionKey])
        else { return nil }
        guard case .int64(let version) = value.storage, version >= 1, version <= Int64(Int32.max) else {
            throw FolderSyncError(
                .localStoreFailed, "the store's bookkeeping version \(value) is not a version number", path: path)
        }
        return Int(version)
    }

    /// Refuses a store whose bookkeeping is newer than this library's, before anything is written to it.
    ///
    /// - Throws: ``FolderSyncError/Code/unsupportedFormatVersion`` naming both versions.
    static func checkBookkeepingVersion(_ db: Database, path: String? = nil) throws {
        guard let version = try recordedBookkeepingVersion(db, path: path) else { return }
        try refuse(version: version, path: path)
    }

    /// Refuses the file at `path` when a newer FolderSync wrote its bookkeeping, reading it without writing a
    /// byte, before the store opens it (opening it for writing changes the file: GRDB's WAL set-up writes to it).
    ///
    /// The file is read as immutable (no lock, no log, no shared memory: nothing is created) when nothing but
    /// the file holds its contents: no `-journal`, no `-wal` holding frames. Otherwise the check inside the
    /// opening transaction (``openBookkeeping(_:path:)``) refuses it as well, before anything is written; closing
    /// that connection may then checkpoint the log into the file, which keeps its contents.
    ///
    /// - Throws: ``FolderSyncError/Code/unsupportedFormatVersion`` naming both versions;
    ///   ``FolderSyncError/Code/localStoreFailed`` for a recorded version that is not a number.
    static func refuseNewerBookkeeping(atPath path: String) throws {
        try withImmutableConnection(atPath: path) { connection in
            var statement: OpaquePointer?
            defer { sqlite3_finalize(statement) }
            // No foldersync_meta (a new or foreign file), or not a database: nothing recorded.
            guard
                sqlite3_prepare_v2(
                    connection, "SELECT value FROM \(StoreSchema.metaTable) WHERE key = ?", -1, &statement, nil)
                    == SQLITE_OK
            else { return }
            let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
            sqlite3_bind_text(statement, 1, bookkeepingVersionKey, -1, transient)
            guard sqlite3_step(statement) == SQLITE_ROW else { return }
            guard sqlite3_column_type(statement, 0) == SQLITE_INTEGER else {
                throw FolderSyncError(
                    .localStoreFailed, "the store's bookkeeping version is not a version number", path: path)
            }
            try refuse(version: Int(sqlite3_column_int64(statement, 0)), path: path)
        }
    }

    /// Runs `body` on a read-only connection to the file at `path` that writes nothing, not even a lock, a log or
    /// shared memory (`immutable=1`), when nothing but the file holds its contents: no `-journal`, no `-wal` holding
    /// frames; otherwise, or when SQLite cannot open it, does nothing and returns `nil`.
    static func withImmutableConnection<T>(atPath path: String, _ body: (OpaquePointer?) throws -> T) rethrows -> T? {
        let files = FileManager.default
        guard files.fileExists(atPath: path), !files.fileExists(atPath: path + "-journal"),
            ((try? files.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0) == 0,
            let encoded = path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed)
        else { return nil }
        var connection: OpaquePointer?
        defer { sqlite3_close_v2(connection) }
        guard
            sqlite3_open_v2("file:\(encoded)?immutable=1", &connection, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nil)
                == SQLITE_OK
        else {
            return nil  // not something SQLite opens: the store's own opening says what it is
        }
        return try body(connection)
    }

    private static func refuse(version: Int, path: String?) throws {
        guard version > currentBookkeepingVersion else { return }
        throw FolderSyncError(
            .unsupportedFormatVersion,
            "the store's bookkeeping is version \(version), newer than version \(currentBookkeepingVersion), "
                + "the newest this version of FolderSync opens; open it with a newer FolderSync",
            path: path)
    }

    /// Brings the bookkeeping to the current version and records it; creates it in a new store. Runs in the
    /// store's opening transaction, so a store is migrated whole or not at all. Returns whether it created it.
    @discardableResult
    static func openBookkeeping(_ db: Database, path: String? = nil) throws -> Bool {
        try checkBookkeepingVersion(db, path: path)
        let recorded = try recordedBookkeepingVersion(db, path: path)
        let version = try recorded ?? identifyUnversionedBookkeeping(db)
        if let version {
            for migration in bookkeepingMigrations where migration.version > version { try migration.run(db) }
        } else {
            try db.execute(sql: bookkeeping)
        }
        if recorded != currentBookkeepingVersion {
            try db.execute(
                sql: "INSERT OR REPLACE INTO \(StoreSchema.metaTable)(key, value) VALUES (?, ?)",
                arguments: [bookkeepingVersionKey, currentBookkeepingVersion])
        }
        return version == nil
    }

    /// Whether the store's registers carry their newest timestamp at their head (bookkeeping version 3 and later), so
    /// that ``StoreClock/newestStamp(_:)`` reads the newest of them; false for a new store.
    static func hasRegisterHeads(_ db: Database) throws -> Bool {
        guard let version = try recordedBookkeepingVersion(db) ?? identifyUnversionedBookkeeping(db) else {
            return false
        }
        return version >= 3
    }

    /// The version of a store that records none, told by the shape of its tables (once: it is recorded after);
    /// `nil` for a store with no bookkeeping yet.
    static func identifyUnversionedBookkeeping(_ db: Database) throws -> Int? {
        guard try db.tableExists(StoreSchema.clocksTable) else { return nil }
        if try db.columns(in: StoreSchema.clocksTable).contains(where: { $0.name == "col" }) { return 1 }
        if let stamps = try Data.fetchOne(db, sql: "SELECT stamps FROM \(StoreSchema.clocksTable) LIMIT 1"),
            LegacyRegisters.lacksHead(stamps)
        {
            return 2
        }
        if try !db.tableExists(StoreSchema.stagedChangesTable) { return 3 }
        if try !db.tableExists(StoreSchema.appliedRunsTable) { return 4 }
        return 5
    }
}
