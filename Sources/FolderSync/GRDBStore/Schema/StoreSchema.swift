import Foundation
import GRDB

/// The bookkeeping tables and change-capture triggers a ``GRDBStore`` keeps in the app's database.
///
/// Every table and trigger is named `foldersync_…`. Triggers call SQL functions that only the store's own connection
/// defines (``StoreFunctions``), one per event (``captureFunction(_:)``), which write the row's registers, pending
/// marks and tombstone (``CaptureWriter``), and do nothing while remote changes are applied, so that they are not
/// echoed back. A write through another connection (the `sqlite3` shell, a database browser, a script) fails rather
/// than going unrecorded, and the function's name is its message: SQLite says "no such function: FolderSync tracks
/// this table (insert): write through the app that syncs it, or detach the file first: foldersync store detach".
///
/// One bookkeeping row per synced row, not per column: `foldersync_clocks` holds a row's last-writer-wins
/// registers packed in one BLOB (``RowRegisters``), and the pending table one row per changed synced row with
/// its marked columns packed in one BLOB (``PendingMarks``). Staging moves those rows to the staged table, with
/// the sequence they were staged in (`staged_in`). The pending table keeps a `staged_in` column, always 0,
/// from the layout before the staged table. The bookkeeping is versioned: see `StoreSchema+Versions.swift`
/// for its history and the migrations that bring older stores up to date.
enum StoreSchema {
    // The bookkeeping tables' names, each written once: SQL elsewhere interpolates them.
    /// Store-wide values: the sync state, the bookkeeping version.
    static let metaTable = "foldersync_meta"
    /// One row per synced row: its columns' last-writer-wins registers, packed (``RowRegisters``).
    static let clocksTable = "foldersync_clocks"
    /// One row per deleted synced row: when and by whom it was deleted.
    static let tombstonesTable = "foldersync_tombstones"
    /// Under last writer wins, the values of a deleted row's columns, kept until a newer write revives it.
    static let shadowTable = "foldersync_shadow"
    /// Local changes neither published nor staged (TICoreDataSync's "unsynchronized sync changes"): one row per
    /// changed synced row, its marked columns packed (``PendingMarks``).
    static let pendingChangesTable = "foldersync_pending_changes"
    /// Local changes staged into a change set not published yet: the same rows, with the set's sequence, removed
    /// once the set is published.
    static let stagedChangesTable = "foldersync_staged_changes"
    /// The ledger of change sets applied (TICoreDataSync's "applied sync changes").
    static let appliedChangeSetsTable = "foldersync_applied_change_sets"
    /// The ledger's runs: per client, the sequence up to which every set is applied.
    static let appliedRunsTable = "foldersync_applied_runs"
    /// Per tombstone, the highest sequence the change set that carried its delete can have: what tombstone
    /// collection compares with every client's acknowledgement (``TombstoneCollection``). Local: snapshots leave it.
    static let tombstoneSetsTable = "foldersync_tombstone_sets"

    /// The declaration of each bookkeeping table, as a new store creates it and every migration that creates
    /// the table creates it: the same text, so that a migrated store declares its tables exactly as a new one
    /// (a snapshot's tables are compared by their declarations before a page install).
    static let bookkeepingTables: [(name: String, sql: String)] = [
        (
            StoreSchema.metaTable,
            """
            CREATE TABLE IF NOT EXISTS \(StoreSchema.metaTable)(
                key TEXT PRIMARY KEY NOT NULL, value BLOB) WITHOUT ROWID
            """
        ),
        (
            StoreSchema.clocksTable,
            """
            CREATE TABLE IF NOT EXISTS \(StoreSchema.clocksTable)(
                tbl TEXT NOT NULL, sync_id TEXT NOT NULL, stamps BLOB NOT NULL,
                PRIMARY KEY(tbl, sync_id)) WITHOUT ROWID
            """
        ),
        (
            StoreSchema.tombstonesTable,
            """
            CREATE TABLE IF NOT EXISTS \(StoreSchema.tombstonesTable)(
                tbl TEXT NOT NULL, sync_id TEXT NOT NULL, hlc INTEGER NOT NULL, client TEXT,
                PRIMARY KEY(tbl, sync_id)) WITHOUT ROWID
            """
        ),
        (
            StoreSchema.pendingChangesTable,
            """
            CREATE TABLE IF NOT EXISTS \(StoreSchema.pendingChangesTable)(
                tbl TEXT NOT NULL, sync_id TEXT NOT NULL, staged_in INTEGER NOT NULL, marks BLOB NOT NULL,
                PRIMARY KEY(tbl, sync_id, staged_in)) WITHOUT ROWID
            """
        ),
        (
            StoreSchema.stagedChangesTable,
            """
            CREATE TABLE IF NOT EXISTS \(StoreSchema.stagedChangesTable)(
                tbl TEXT NOT NULL, sync_id TEXT NOT NULL, staged_in INTEGER NOT NULL, marks BLOB NOT NULL,
                PRIMARY KEY(tbl, sync_id, staged_in)) WITHOUT ROWID
            """
        ),
        (
            StoreSchema.shadowTable,
            """
            CREATE TABLE IF NOT EXISTS \(StoreSchema.shadowTable)(
                tbl TEXT NOT NULL, sync_id TEXT NOT NULL, col TEXT NOT NULL, value,
                PRIMARY KEY(tbl, sync_id, col)) WITHOUT ROWID
            """
        ),
        (
            StoreSchema.appliedChangeSetsTable,
            """
            CREATE TABLE IF NOT EXISTS \(StoreSchema.appliedChangeSetsTable)(
                client TEXT NOT NULL, sequence INTEGER NOT NULL, change_set_id TEXT NOT NULL,
                PRIMARY KEY(client, sequence, change_set_id)) WITHOUT ROWID
            """
        ),
        (
            StoreSchema.appliedRunsTable,
            """
            CREATE TABLE IF NOT EXISTS \(StoreSchema.appliedRunsTable)(
                client TEXT PRIMARY KEY NOT NULL, through INTEGER NOT NULL) WITHOUT ROWID
            """
        ),
        (
            StoreSchema.tombstoneSetsTable,
            """
            CREATE TABLE IF NOT EXISTS \(StoreSchema.tombstoneSetsTable)(
                tbl TEXT NOT NULL, sync_id TEXT NOT NULL, hlc INTEGER NOT NULL, client TEXT, through INTEGER NOT NULL,
                PRIMARY KEY(tbl, sync_id)) WITHOUT ROWID
            """
        ),
    ]

    /// Every bookkeeping table of the current version (``currentBookkeepingVersion``), for a new store.
    static var bookkeeping: String { bookkeepingTables.map(\.sql).joined(separator: ";\n") }

    /// Creates the bookkeeping table `name` as the current version declares it (nothing if it exists).
    static func createBookkeepingTable(_ name: String, _ db: Database) throws {
        guard let table = bookkeepingTables.first(where: { $0.name == name }) else {
            preconditionFailure("\(name) is not a bookkeeping table")
        }
        try db.execute(sql: table.sql)
    }

    /// Marks in the pending table's `marks` for whole-row events (real column names never start with `#`).
    static let createdMarker = "#created"
    static let deletedMarker = "#deleted"
    /// The mark of every column of the row's table (``PendingMarks``; bookkeeping version 6).
    static let allColumnsMarker = "#all"
    /// Begins the mark that carries the time of a delete not yet settled, in decimal where marks are names
    /// (``PendingMarks/deletion(at:)``, which stores it in binary; bookkeeping version 9).
    static let deletionTimeMarker = "#at="

    /// Whether a name in the pending marks is one of the marks above rather than a column's.
    static func isMarker(_ name: String) -> Bool { name.hasPrefix("#") }

    /// Whether any local change is unpublished: pending, or staged in a change set not published yet.
    static func holdsUnpublishedChanges(_ db: Database) throws -> Bool {
        try Bool.fetchOne(
            db,
            sql: """
                SELECT EXISTS (SELECT 1 FROM \(StoreSchema.pendingChangesTable)) OR EXISTS (SELECT 1 FROM \(StoreSchema.stagedChangesTable))
                """) ?? false
    }

    /// Every unpublished change's `tbl, sync_id, marks`: pending ones, then staged ones (a row can have both).
    static let unpublishedChanges = """
        SELECT tbl, sync_id, marks FROM \(StoreSchema.pendingChangesTable)
        UNION ALL SELECT tbl, sync_id, marks FROM \(StoreSchema.stagedChangesTable)
        """

    /// The events a synced table has a change-capture trigger for.
    static let captureTriggerKinds = ["insert", "update", "delete"]

    /// The SQL function the change-capture trigger of `kind` calls (bookkeeping version 7 on), named by what a
    /// connection without it is told: SQLite reports a missing function by its name, when the write is prepared.
    static func captureFunction(_ kind: String) -> String {
        "FolderSync tracks this table (\(kind)): write through the app that syncs it, or detach the file first: "
            + "foldersync store detach"
    }

    /// The capture functions' names before bookkeeping version 7: the triggers a store keeps until it is opened
    /// call them, and the app's migration, which runs first, writes through them.
    static func legacyCaptureFunction(_ kind: String) -> String { "foldersync_captured_\(kind)" }

    /// The name of the change-capture trigger of `table` for `kind` (one of ``captureTriggerKinds``).
    static func triggerName(_ table: String, _ kind: String) -> String {
        "foldersync_\(table.replacingOccurrences(of: "\"", with: ""))_\(kind)"
    }

    /// Whether every trigger of the database (temporary ones included) is one of the change-capture triggers of
    /// `tables`: then writes that are not captured need no trigger at all (``GRDBStore/writeWithoutCapture(_:)``).
    static func holdsOnlyCaptureTriggers(_ db: Database, tables: [SyncedTable]) throws -> Bool {
        let own = Set(tables.flatMap { table in captureTriggerKinds.map { triggerName(table.name, $0) } })
        return try String.fetchAll(
            db,
            sql: """
                SELECT name FROM sqlite_master WHERE type = 'trigger' UNION ALL SELECT name FROM sqlite_temp_master WHERE type = 'trigger'
                """
        ).allSatisfy(own.contains)
    }

    /// Drops and recreates the three triggers of `table`, so that they follow schema migrations.
    ///
    /// Each trigger makes one call, to the function that writes the row's bookkeeping (``CaptureWriter``), and holds
    /// nothing else: SQLite compiles a table's triggers into every statement prepared on it, and a trigger of one call
    /// compiles at almost no cost (preparing an app's insert through GRDB took 16 µs when its trigger also asked
    /// `foldersync_capturing()` and looked for a tombstone, 9 µs without, 4 µs with no trigger at all). The
    /// function also refuses what the triggers' SQL refused (a reused sync ID under delete wins, a changed sync ID),
    /// with the same message and result code (``CaptureRefusal``); it does nothing while remote changes are applied.
    /// When the function fails, SQLite takes back the app's whole statement (`CaptureWriterTests`).
    static func installTriggers(_ db: Database, table: SyncedTable, columns: [String]) throws {
        let t = table.name.quotedDatabaseIdentifier
        func lit(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "''") + "'" }
        let literal = lit(table.name)
        let id = table.syncIDColumn.quotedDatabaseIdentifier
        for kind in captureTriggerKinds {
            try db.execute(sql: "DROP TRIGGER IF EXISTS \"\(triggerName(table.name, kind))\"")
        }
        let lastWriterWins = table.deletePolicy == .lastWriterWins
        let policy = lastWriterWins ? "1" : "0"  // the capture functions' `last writer wins` argument
        // The call that records the change.
        func capture(_ kind: String, _ arguments: [String]) -> String {
            "SELECT \(captureFunction(kind).quotedDatabaseIdentifier)("
                + ([literal] + arguments).joined(separator: ", ") + ");"
        }
        try db.execute(
            sql: """
                CREATE TRIGGER "\(triggerName(table.name, "insert"))" AFTER INSERT ON \(t) BEGIN
                    \(capture("insert", ["NEW.\(id)", policy] + columns.map(lit)))
                END;
                """)
        if !columns.isEmpty {
            // Whether the sync ID changed, then each column's name and whether its value changed (as SQL compares
            // them, with the column's collation).
            let changed =
                ["NEW.\(id) IS NOT OLD.\(id)"]
                + columns.map {
                    "\(lit($0)), NEW.\($0.quotedDatabaseIdentifier) IS NOT OLD.\($0.quotedDatabaseIdentifier)"
                }
            try db.execute(
                sql: """
                    CREATE TRIGGER "\(triggerName(table.name, "update"))" AFTER UPDATE ON \(t) BEGIN
                        \(capture("update", ["NEW.\(id)"] + changed))
                    END;
                    """)
        }
        // Last writer wins keeps a deleted row's values, so that a newer update can bring the row back whole.
        let oldValues = lastWriterWins ? columns.map { "\(lit($0)), OLD.\($0.quotedDatabaseIdentifier)" } : []
        try db.execute(
            sql: """
                CREATE TRIGGER "\(triggerName(table.name, "delete"))" AFTER DELETE ON \(t) BEGIN
                    \(capture("delete", ["OLD.\(id)", policy] + oldValues))
                END;
                """)
    }
}
