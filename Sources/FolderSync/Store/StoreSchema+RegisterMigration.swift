import Foundation
import GRDB

/// Stores written before registers were packed one row per synced row: their bookkeeping is converted once.
extension StoreSchema {
    /// Converts `foldersync_clocks` and the pending table from one row per column to one row per synced row,
    /// when they still have a `col` column. Runs in the store's opening transaction, before the triggers are
    /// reinstalled, so a store is either converted whole or not at all.
    static func migrateRegisterRows(_ db: Database) throws {
        let pending = LocalLayout.unsynchronizedChangesTable
        if try db.tableExists("foldersync_clocks"), try db.columns(in: "foldersync_clocks").contains(where: { $0.name == "col" }) {
            try db.execute(sql: "ALTER TABLE foldersync_clocks RENAME TO foldersync_clocks_columns")
            try db.execute(sql: """
                CREATE TABLE foldersync_clocks(tbl TEXT NOT NULL, sync_id TEXT NOT NULL, stamps BLOB NOT NULL,
                    PRIMARY KEY(tbl, sync_id)) WITHOUT ROWID
                """)
            let insert = try db.makeStatement(sql: "INSERT INTO foldersync_clocks(tbl, sync_id, stamps) VALUES (?, ?, ?)")
            var current: (table: String, syncID: String, registers: RowRegisters)?
            func flush() throws {
                guard let row = current else { return }
                try insert.execute(arguments: [row.table, row.syncID, row.registers.encoded])
            }
            let rows = try Row.fetchCursor(db, sql: "SELECT tbl, sync_id, col, hlc, client FROM foldersync_clocks_columns ORDER BY tbl, sync_id")
            while let row = try rows.next() {
                let table: String = row[0], syncID: String = row[1]
                if current?.table != table || current?.syncID != syncID {
                    try flush()
                    current = (table, syncID, RowRegisters())
                }
                current?.registers.set(row[2], timestamp: UInt64(bitPattern: row[3]), client: row[4])
            }
            try flush()
            try db.execute(sql: "DROP TABLE foldersync_clocks_columns")
        }
        if try db.tableExists(pending), try db.columns(in: pending).contains(where: { $0.name == "col" }) {
            try db.execute(sql: "ALTER TABLE \(pending) RENAME TO foldersync_pending_columns")
            try db.execute(sql: """
                CREATE TABLE \(pending)(tbl TEXT NOT NULL, sync_id TEXT NOT NULL, staged_in INTEGER NOT NULL, marks BLOB NOT NULL,
                    PRIMARY KEY(tbl, sync_id, staged_in)) WITHOUT ROWID
                """)
            let insert = try db.makeStatement(sql: "INSERT INTO \(pending)(tbl, sync_id, staged_in, marks) VALUES (?, ?, ?, ?)")
            var current: (table: String, syncID: String, stagedIn: Int64, marks: PendingMarks)?
            func flush() throws {
                guard let row = current else { return }
                try insert.execute(arguments: [row.table, row.syncID, row.stagedIn, row.marks.encoded])
            }
            let rows = try Row.fetchCursor(db, sql: """
                SELECT tbl, sync_id, ifnull(staged_in, 0) AS staged, col FROM foldersync_pending_columns ORDER BY tbl, sync_id, staged
                """)
            while let row = try rows.next() {
                let table: String = row[0], syncID: String = row[1], stagedIn: Int64 = row[2]
                if current?.table != table || current?.syncID != syncID || current?.stagedIn != stagedIn {
                    try flush()
                    current = (table, syncID, stagedIn, PendingMarks())
                }
                current?.marks.insert(row[3])
            }
            try flush()
            try db.execute(sql: "DROP TABLE foldersync_pending_columns")
        }
    }
}
