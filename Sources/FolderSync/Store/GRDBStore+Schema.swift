import GRDB
import Foundation

/// The bookkeeping tables and change-capture triggers a ``GRDBStore`` keeps in the app's database.
///
/// Everything is named `foldersync_…`. Triggers call SQL functions that only the store's own connection
/// defines (``StoreFunctions``): `foldersync_capturing()` (false while remote changes are applied, so they
/// are not echoed back), `foldersync_stamp(…)` (the row's registers with some columns written now) and
/// `foldersync_mark(…)`. A write through another connection fails with "no such function" rather than going
/// unrecorded.
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

    /// The declaration of each bookkeeping table, as a new store creates it and every migration that creates
    /// the table creates it: the same text, so that a migrated store declares its tables exactly as a new one
    /// (a snapshot's tables are compared by their declarations before a page install).
    static let bookkeepingTables: [(name: String, sql: String)] = [
        (StoreSchema.metaTable, """
            CREATE TABLE IF NOT EXISTS \(StoreSchema.metaTable)(
                key TEXT PRIMARY KEY NOT NULL, value BLOB) WITHOUT ROWID
            """),
        (StoreSchema.clocksTable, """
            CREATE TABLE IF NOT EXISTS \(StoreSchema.clocksTable)(
                tbl TEXT NOT NULL, sync_id TEXT NOT NULL, stamps BLOB NOT NULL,
                PRIMARY KEY(tbl, sync_id)) WITHOUT ROWID
            """),
        (StoreSchema.tombstonesTable, """
            CREATE TABLE IF NOT EXISTS \(StoreSchema.tombstonesTable)(
                tbl TEXT NOT NULL, sync_id TEXT NOT NULL, hlc INTEGER NOT NULL, client TEXT,
                PRIMARY KEY(tbl, sync_id)) WITHOUT ROWID
            """),
        (StoreSchema.pendingChangesTable, """
            CREATE TABLE IF NOT EXISTS \(StoreSchema.pendingChangesTable)(
                tbl TEXT NOT NULL, sync_id TEXT NOT NULL, staged_in INTEGER NOT NULL, marks BLOB NOT NULL,
                PRIMARY KEY(tbl, sync_id, staged_in)) WITHOUT ROWID
            """),
        (StoreSchema.stagedChangesTable, """
            CREATE TABLE IF NOT EXISTS \(StoreSchema.stagedChangesTable)(
                tbl TEXT NOT NULL, sync_id TEXT NOT NULL, staged_in INTEGER NOT NULL, marks BLOB NOT NULL,
                PRIMARY KEY(tbl, sync_id, staged_in)) WITHOUT ROWID
            """),
        (StoreSchema.shadowTable, """
            CREATE TABLE IF NOT EXISTS \(StoreSchema.shadowTable)(
                tbl TEXT NOT NULL, sync_id TEXT NOT NULL, col TEXT NOT NULL, value,
                PRIMARY KEY(tbl, sync_id, col)) WITHOUT ROWID
            """),
        (StoreSchema.appliedChangeSetsTable, """
            CREATE TABLE IF NOT EXISTS \(StoreSchema.appliedChangeSetsTable)(
                client TEXT NOT NULL, sequence INTEGER NOT NULL, change_set_id TEXT NOT NULL,
                PRIMARY KEY(client, sequence)) WITHOUT ROWID
            """),
        (StoreSchema.appliedRunsTable, """
            CREATE TABLE IF NOT EXISTS \(StoreSchema.appliedRunsTable)(
                client TEXT PRIMARY KEY NOT NULL, through INTEGER NOT NULL) WITHOUT ROWID
            """),
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

    /// Whether any local change is unpublished: pending, or staged in a change set not published yet.
    static func holdsUnpublishedChanges(_ db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: """
            SELECT EXISTS (SELECT 1 FROM \(StoreSchema.pendingChangesTable)) OR EXISTS (SELECT 1 FROM \(StoreSchema.stagedChangesTable))
            """) ?? false
    }

    /// Every unpublished change's `tbl, sync_id, marks`: pending ones, then staged ones (a row can have both).
    static let unpublishedChanges = """
        SELECT tbl, sync_id, marks FROM \(StoreSchema.pendingChangesTable)
        UNION ALL SELECT tbl, sync_id, marks FROM \(StoreSchema.stagedChangesTable)
        """

    /// Drops and recreates the three triggers of `table`, so that they follow schema migrations.
    static func installTriggers(_ db: Database, table: SyncedTable, columns: [String]) throws {
        let t = table.name.quotedDatabaseIdentifier
        let name = table.name.replacingOccurrences(of: "\"", with: "")
        let literal = "'" + table.name.replacingOccurrences(of: "'", with: "''") + "'"
        let id = table.syncIDColumn.quotedDatabaseIdentifier
        func lit(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "''") + "'" }
        let pending = StoreSchema.pendingChangesTable
        for kind in ["insert", "update", "delete"] {
            try db.execute(sql: "DROP TRIGGER IF EXISTS \"foldersync_\(name)_\(kind)\"")
        }
        let allColumns = columns.map(lit).joined(separator: ", ")
        // Each changed column's name, NULL for the others (the functions skip NULLs).
        let changedColumns = columns.map {
            "CASE WHEN NEW.\($0.quotedDatabaseIdentifier) IS NOT OLD.\($0.quotedDatabaseIdentifier) THEN \(lit($0)) END"
        }.joined(separator: ", ")
        let anyChanged = columns.map { "NEW.\($0.quotedDatabaseIdentifier) IS NOT OLD.\($0.quotedDatabaseIdentifier)" }
            .joined(separator: " OR ")
        // (A VALUES list referring to OLD does not expose its second column inside a trigger: use SELECTs.)
        let oldValues = columns.map { "SELECT \(lit($0)) AS col, OLD.\($0.quotedDatabaseIdentifier) AS value" }
            .joined(separator: " UNION ALL ")
        // Upserts, not INSERT OR REPLACE: an app's statement with its own conflict clause (an UPSERT, UPDATE OR
        // IGNORE…) overrides the conflict policy of the statements of the triggers it fires, not their upserts.
        // The row not yet staged is the one with staged_in 0.
        let pendingConflict = "ON CONFLICT(tbl, sync_id, staged_in) DO UPDATE SET marks ="
        let lastWriterWins = table.deletePolicy == .lastWriterWins
        // Delete wins: a deleted sync ID is refused. Last writer wins: it may come back, newer than its delete
        // (and the delete not yet staged is forgotten, below).
        let reuseCheck = lastWriterWins
            ? "DELETE FROM \(StoreSchema.shadowTable) WHERE tbl = \(literal) AND sync_id = NEW.\(id);"
            : """
                SELECT RAISE(ABORT, 'FolderSync: this sync ID belongs to a deleted row and cannot be reused')
                    WHERE EXISTS (SELECT 1 FROM \(StoreSchema.tombstonesTable) WHERE tbl = \(literal) AND sync_id = NEW.\(id));
            """
        let createdMarks = lastWriterWins ? "foldersync_unmark(marks, '\(deletedMarker)')" : "marks"
        // Last writer wins keeps a deleted row's registers, so that a newer update can bring the row back whole.
        let forgetRegisters = lastWriterWins
            ? (columns.isEmpty ? "" : """
                INSERT INTO \(StoreSchema.shadowTable)(tbl, sync_id, col, value)
                    SELECT \(literal), OLD.\(id), v.col, v.value FROM (\(oldValues)) AS v WHERE true
                    ON CONFLICT(tbl, sync_id, col) DO UPDATE SET value = excluded.value;
            """)
            : "DELETE FROM \(StoreSchema.clocksTable) WHERE tbl = \(literal) AND sync_id = OLD.\(id);"
        // Delete wins: writes to the row not yet staged die with it. Last writer wins: they travel with the delete.
        let deletedMarks = lastWriterWins ? "foldersync_mark(foldersync_unmark(marks, '\(createdMarker)'), '\(deletedMarker)')" : "excluded.marks"
        let columnArguments = columns.isEmpty ? "" : ", " + allColumns
        // The registers are computed once, from the stored ones (an upsert would evaluate both its VALUES and its
        // DO UPDATE, ticking the clock twice), then stored whether the row had registers or not.
        let storedStamps = "(SELECT stamps FROM \(StoreSchema.clocksTable) WHERE tbl = \(literal) AND sync_id = NEW.\(id))"
        let stampUpsert = "ON CONFLICT(tbl, sync_id) DO UPDATE SET stamps = excluded.stamps"
        let stampColumns = columns.isEmpty ? "" : """
                INSERT INTO \(StoreSchema.clocksTable)(tbl, sync_id, stamps) VALUES (\(literal), NEW.\(id), foldersync_stamp(\(storedStamps), \(allColumns)))
                    \(stampUpsert);
            """
        try db.execute(sql: """
            CREATE TRIGGER "foldersync_\(name)_insert" AFTER INSERT ON \(t) WHEN foldersync_capturing() BEGIN
            \(reuseCheck)
                INSERT INTO \(pending)(tbl, sync_id, staged_in, marks)
                    VALUES (\(literal), NEW.\(id), 0, foldersync_mark(NULL, '\(createdMarker)'\(columnArguments)))
                    \(pendingConflict) foldersync_mark(\(createdMarks), '\(createdMarker)'\(columnArguments));
            \(stampColumns)
            END;
            """)
        if !columns.isEmpty {
            try db.execute(sql: """
                CREATE TRIGGER "foldersync_\(name)_update" AFTER UPDATE ON \(t) WHEN foldersync_capturing() BEGIN
                    SELECT RAISE(ABORT, 'FolderSync: the sync ID of a synced row cannot change') WHERE NEW.\(id) IS NOT OLD.\(id);
                    INSERT INTO \(pending)(tbl, sync_id, staged_in, marks)
                        SELECT \(literal), NEW.\(id), 0, foldersync_mark(NULL, \(changedColumns)) WHERE \(anyChanged)
                        \(pendingConflict) foldersync_mark(marks, \(changedColumns));
                    INSERT INTO \(StoreSchema.clocksTable)(tbl, sync_id, stamps)
                        SELECT \(literal), NEW.\(id), foldersync_stamp(\(storedStamps), \(changedColumns)) WHERE \(anyChanged)
                        \(stampUpsert);
                END;
                """)
        }
        try db.execute(sql: """
            CREATE TRIGGER "foldersync_\(name)_delete" AFTER DELETE ON \(t) WHEN foldersync_capturing() BEGIN
            \(forgetRegisters)
                INSERT INTO \(pending)(tbl, sync_id, staged_in, marks) VALUES (\(literal), OLD.\(id), 0, foldersync_mark(NULL, '\(deletedMarker)'))
                    \(pendingConflict) \(deletedMarks);
                INSERT INTO \(StoreSchema.tombstonesTable)(tbl, sync_id, hlc, client) VALUES (\(literal), OLD.\(id), foldersync_tick(), NULL)
                    ON CONFLICT(tbl, sync_id) DO UPDATE SET hlc = excluded.hlc, client = excluded.client;
            END;
            """)
    }
}
