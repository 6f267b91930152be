import Foundation
import GRDB

/// Bookkeeping versions 1 → 2 → 3: registers packed one row per synced row, then given their newest timestamp
/// at their head (see ``StoreSchema`` and its version history in `StoreSchema+Versions.swift`).
extension StoreSchema {
    /// Version 1 → 2: `foldersync_clocks` and the pending table go from one row per column to one row per synced
    /// row, registers and marks packed in a BLOB, registers in version 2's encoding (``LegacyRegisters``).
    /// Stores from before the shadow table (version 1 from its first commits) get it, and every other table of
    /// version 1 a store lacks.
    static func packRegisterRows(_ db: Database) throws {
        let pending = StoreSchema.pendingChangesTable
        // Version 1's capture triggers refer to its tables by their columns: renaming a table rewrites them to
        // follow it, and once it is dropped SQLite refuses every later change of the schema ("error in trigger").
        // They go first; the store makes its triggers again once its bookkeeping is current.
        for name in try String.fetchAll(
            db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'foldersync\\_%' ESCAPE '\\'")
        {
            try db.execute(sql: "DROP TRIGGER \(name.quotedDatabaseIdentifier)")
        }
        // Tables version 1 had from its first commits but the shadow table, declared then as now: made if missing.
        for name in [
            StoreSchema.metaTable, StoreSchema.tombstonesTable, StoreSchema.shadowTable,
            StoreSchema.appliedChangeSetsTable,
        ] {
            try createBookkeepingTable(name, db)
        }
        try db.execute(sql: "ALTER TABLE \(StoreSchema.clocksTable) RENAME TO foldersync_clocks_columns")
        try createBookkeepingTable(StoreSchema.clocksTable, db)
        let insert = try db.makeStatement(
            sql: "INSERT INTO \(StoreSchema.clocksTable)(tbl, sync_id, stamps) VALUES (?, ?, ?)")
        var current: (table: String, syncID: String, registers: RowRegisters)?
        func flush() throws {
            guard let row = current else { return }
            try insert.execute(arguments: [row.table, row.syncID, LegacyRegisters.encodedWithoutHead(row.registers)])
        }
        let rows = try Row.fetchCursor(
            db, sql: "SELECT tbl, sync_id, col, hlc, client FROM foldersync_clocks_columns ORDER BY tbl, sync_id")
        while let row = try rows.next() {
            let table: String = row[0]
            let syncID: String = row[1]
            if current?.table != table || current?.syncID != syncID {
                try flush()
                current = (table, syncID, RowRegisters())
            }
            current?.registers.set(row[2], timestamp: UInt64(bitPattern: row[3]), client: row[4])
        }
        try flush()
        try db.execute(sql: "DROP TABLE foldersync_clocks_columns")

        try db.execute(sql: "ALTER TABLE \(pending) RENAME TO foldersync_pending_columns")
        try createBookkeepingTable(pending, db)
        let insertMarks = try db.makeStatement(
            sql: "INSERT INTO \(pending)(tbl, sync_id, staged_in, marks) VALUES (?, ?, ?, ?)")
        var marks: (table: String, syncID: String, stagedIn: Int64, marks: PendingMarks)?
        func flushMarks() throws {
            guard let row = marks else { return }
            try insertMarks.execute(arguments: [row.table, row.syncID, row.stagedIn, row.marks.encoded])
        }
        let pendingRows = try Row.fetchCursor(
            db,
            sql: """
                SELECT tbl, sync_id, ifnull(staged_in, 0) AS staged, col FROM foldersync_pending_columns ORDER BY tbl, sync_id, staged
                """)
        while let row = try pendingRows.next() {
            let table: String = row[0]
            let syncID: String = row[1]
            let stagedIn: Int64 = row[2]
            if marks?.table != table || marks?.syncID != syncID || marks?.stagedIn != stagedIn {
                try flushMarks()
                marks = (table, syncID, stagedIn, PendingMarks())
            }
            marks?.marks.insert(row[3])
        }
        try flushMarks()
        try db.execute(sql: "DROP TABLE foldersync_pending_columns")
    }

    /// Version 2 → 3: every `stamps` value is written again with the newest register's timestamp at its head.
    static func addNewestTimestampHeads(_ db: Database) throws {
        let update = try db.makeStatement(
            sql: "UPDATE \(StoreSchema.clocksTable) SET stamps = ? WHERE tbl = ? AND sync_id = ?")
        // In batches by key, each read whole before it is written: a row is never read again once converted
        // (a table changed under an open cursor may deliver a row twice), and memory does not grow with the store.
        let batch = try db.makeStatement(
            sql: """
                SELECT tbl, sync_id, stamps FROM \(StoreSchema.clocksTable) WHERE (tbl, sync_id) > (?, ?) ORDER BY tbl, sync_id LIMIT 10000
                """)
        var after = ("", "")
        while true {
            let rows = try Row.fetchAll(batch, arguments: [after.0, after.1])
            guard let last = rows.last else { break }
            for row in rows {
                let registers = try LegacyRegisters.decodeWithoutHead(row[2])
                try update.execute(arguments: [registers.encoded, row[0], row[1]])
            }
            after = (last[0], last[1])
        }
    }
}

/// The `stamps` encoding of bookkeeping version 2, which had no head: the version byte (1, the same as
/// version 3's), the client identifiers, then the registers (see ``RowRegisters``).
enum LegacyRegisters {
    static func encodedWithoutHead(_ registers: RowRegisters) -> Data {
        let withHead = registers.snapshotEncoded
        // Version 3 is version 2 with 8 bytes inserted after the version byte.
        return withHead.prefix(1) + withHead.dropFirst(9)
    }

    static func decodeWithoutHead(_ blob: Data?) throws -> RowRegisters {
        guard let blob, !blob.isEmpty else { return RowRegisters() }
        guard blob.first == 1 else {
            throw FolderSyncError(.localStoreFailed, "registers of unknown version \(blob.first!) in a version-2 store")
        }
        // The same bytes with a head in front (its value is not read by the decoder, only skipped).
        do {
            return try RowRegisters(blob.prefix(1) + Data(count: 8) + blob.dropFirst(1))
        } catch let violation as FormatViolation {
            throw FolderSyncError(
                .localStoreFailed, "registers of a version-2 store cannot be read: \(violation.reason)")
        }
    }

    /// Whether `stamps` is in version 2's encoding: it reads as one, and not as version 3's (whose head holds
    /// the newest register's timestamp).
    static func lacksHead(_ stamps: Data) -> Bool {
        if let registers = try? RowRegisters(stamps),
            RowRegisters.newestTimestamp(ofHead: stamps.dropFirst(1).prefix(8)) == registers.newestTimestamp
        {
            return false
        }
        return (try? decodeWithoutHead(stamps)) != nil
    }
}
