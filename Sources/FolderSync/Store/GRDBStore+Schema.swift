import GRDB

/// The bookkeeping tables and change-capture triggers a ``GRDBStore`` keeps in the app's database.
///
/// Everything is named `foldersync_…`. Triggers call two SQL functions that
/// only the store's own connection defines: `foldersync_capturing()` (false
/// while remote changes are applied, so they are not echoed back) and
/// `foldersync_tick()` (the next hybrid-logical-clock timestamp). A write
/// through another connection fails with "no such function" rather than going
/// unrecorded.
enum StoreSchema {
    static let bookkeeping = """
        CREATE TABLE IF NOT EXISTS foldersync_meta(
            key TEXT PRIMARY KEY NOT NULL, value BLOB) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS foldersync_clocks(
            tbl TEXT NOT NULL, sync_id TEXT NOT NULL, col TEXT NOT NULL,
            hlc INTEGER NOT NULL, client TEXT,
            PRIMARY KEY(tbl, sync_id, col)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS foldersync_tombstones(
            tbl TEXT NOT NULL, sync_id TEXT NOT NULL, hlc INTEGER NOT NULL, client TEXT,
            PRIMARY KEY(tbl, sync_id)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS \(LocalLayout.unsynchronizedChangesTable)(
            tbl TEXT NOT NULL, sync_id TEXT NOT NULL, col TEXT NOT NULL, staged_in INTEGER,
            PRIMARY KEY(tbl, sync_id, col)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS foldersync_shadow(
            tbl TEXT NOT NULL, sync_id TEXT NOT NULL, col TEXT NOT NULL, value,
            PRIMARY KEY(tbl, sync_id, col)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS \(LocalLayout.appliedChangeSetsTable)(
            client TEXT NOT NULL, sequence INTEGER NOT NULL, change_set_id TEXT NOT NULL,
            PRIMARY KEY(client, sequence)) WITHOUT ROWID;
        """

    /// Marks in the pending table's `col` for whole-row events (real column names never start with `#`).
    static let createdMarker = "#created"
    static let deletedMarker = "#deleted"

    /// Drops and recreates the three triggers of `table`, so that they follow schema migrations.
    static func installTriggers(_ db: Database, table: SyncedTable, columns: [String]) throws {
        let t = table.name.quotedDatabaseIdentifier
        let name = table.name.replacingOccurrences(of: "\"", with: "")
        let literal = "'" + table.name.replacingOccurrences(of: "'", with: "''") + "'"
        let id = table.syncIDColumn.quotedDatabaseIdentifier
        func lit(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "''") + "'" }
        let pending = LocalLayout.unsynchronizedChangesTable
        for kind in ["insert", "update", "delete"] {
            try db.execute(sql: "DROP TRIGGER IF EXISTS \"foldersync_\(name)_\(kind)\"")
        }
        let allColumns = columns.map { "(\(lit($0)))" }.joined(separator: ", ")
        let changedColumns = columns.map { "(\(lit($0)), NEW.\($0.quotedDatabaseIdentifier) IS NOT OLD.\($0.quotedDatabaseIdentifier))" }
            .joined(separator: ", ")
        // (A VALUES list referring to OLD does not expose its second column inside a trigger: use SELECTs.)
        let oldValues = columns.map { "SELECT \(lit($0)) AS col, OLD.\($0.quotedDatabaseIdentifier) AS value" }
            .joined(separator: " UNION ALL ")
        // Upserts, not INSERT OR REPLACE: an app's statement with its own conflict clause (an UPSERT, UPDATE OR
        // IGNORE…) overrides the conflict policy of the statements of the triggers it fires, not their upserts.
        let pendingUpsert = "ON CONFLICT(tbl, sync_id, col) DO UPDATE SET staged_in = NULL"
        let clockUpsert = "ON CONFLICT(tbl, sync_id, col) DO UPDATE SET hlc = excluded.hlc, client = excluded.client"
        let lastWriterWins = table.deletePolicy == .lastWriterWins
        // Delete wins: a deleted sync ID is refused. Last writer wins: it may come back, newer than its delete.
        let reuseCheck = lastWriterWins
            ? """
                DELETE FROM foldersync_shadow WHERE tbl = \(literal) AND sync_id = NEW.\(id);
                DELETE FROM \(pending) WHERE tbl = \(literal) AND sync_id = NEW.\(id) AND col = '\(deletedMarker)' AND staged_in IS NULL;
            """
            : """
                SELECT RAISE(ABORT, 'FolderSync: this sync ID belongs to a deleted row and cannot be reused')
                    WHERE EXISTS (SELECT 1 FROM foldersync_tombstones WHERE tbl = \(literal) AND sync_id = NEW.\(id));
            """
        // Last writer wins keeps a deleted row's registers, so that a newer update can bring the row back whole.
        let forgetRegisters = lastWriterWins
            ? (columns.isEmpty ? "" : """
                INSERT INTO foldersync_shadow(tbl, sync_id, col, value)
                    SELECT \(literal), OLD.\(id), v.col, v.value FROM (\(oldValues)) AS v WHERE true
                    ON CONFLICT(tbl, sync_id, col) DO UPDATE SET value = excluded.value;
            """)
            : "DELETE FROM foldersync_clocks WHERE tbl = \(literal) AND sync_id = OLD.\(id);"
        // Delete wins: writes to the row not yet published die with it. Last writer wins: they travel with the delete.
        let dropUnpublishedWrites = lastWriterWins
            ? "DELETE FROM \(pending) WHERE tbl = \(literal) AND sync_id = OLD.\(id) AND col = '\(createdMarker)' AND staged_in IS NULL;"
            : "DELETE FROM \(pending) WHERE tbl = \(literal) AND sync_id = OLD.\(id) AND staged_in IS NULL;"
        let columnInserts = columns.isEmpty ? "" : """
                INSERT INTO \(pending)(tbl, sync_id, col, staged_in)
                    SELECT \(literal), NEW.\(id), v.column1, NULL FROM (VALUES \(allColumns)) AS v WHERE true \(pendingUpsert);
                INSERT INTO foldersync_clocks(tbl, sync_id, col, hlc, client)
                    SELECT \(literal), NEW.\(id), v.column1, foldersync_tick(), NULL FROM (VALUES \(allColumns)) AS v WHERE true
                    \(clockUpsert);
            """
        try db.execute(sql: """
            CREATE TRIGGER "foldersync_\(name)_insert" AFTER INSERT ON \(t) WHEN foldersync_capturing() BEGIN
            \(reuseCheck)
                INSERT INTO \(pending)(tbl, sync_id, col, staged_in) VALUES (\(literal), NEW.\(id), '\(createdMarker)', NULL) \(pendingUpsert);
            \(columnInserts)
            END;
            """)
        if !columns.isEmpty {
            try db.execute(sql: """
                CREATE TRIGGER "foldersync_\(name)_update" AFTER UPDATE ON \(t) WHEN foldersync_capturing() BEGIN
                    SELECT RAISE(ABORT, 'FolderSync: the sync ID of a synced row cannot change') WHERE NEW.\(id) IS NOT OLD.\(id);
                    INSERT INTO \(pending)(tbl, sync_id, col, staged_in)
                        SELECT \(literal), NEW.\(id), v.column1, NULL FROM (VALUES \(changedColumns)) AS v WHERE v.column2 \(pendingUpsert);
                    INSERT INTO foldersync_clocks(tbl, sync_id, col, hlc, client)
                        SELECT \(literal), NEW.\(id), v.column1, foldersync_tick(), NULL FROM (VALUES \(changedColumns)) AS v WHERE v.column2
                        \(clockUpsert);
                END;
                """)
        }
        try db.execute(sql: """
            CREATE TRIGGER "foldersync_\(name)_delete" AFTER DELETE ON \(t) WHEN foldersync_capturing() BEGIN
            \(dropUnpublishedWrites)
            \(forgetRegisters)
                INSERT INTO \(pending)(tbl, sync_id, col, staged_in) VALUES (\(literal), OLD.\(id), '\(deletedMarker)', NULL) \(pendingUpsert);
                INSERT INTO foldersync_tombstones(tbl, sync_id, hlc, client) VALUES (\(literal), OLD.\(id), foldersync_tick(), NULL)
                    ON CONFLICT(tbl, sync_id) DO UPDATE SET hlc = excluded.hlc, client = excluded.client;
            END;
            """)
    }
}
