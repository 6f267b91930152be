import Foundation
import GRDB

extension GRDBStore {
    @_spi(ModelAdapter) public func stageChanges(
        sequence: Int64, emit: (SyncChange) throws -> Void, seal: () throws -> Int64
    ) throws -> Int {
        try wrap("staging local changes") {
            try database.write { db in
                try settleDeletions(db)
                var count = 0
                // Table by table in name order (bytes, as SQLite orders them), each table's rows in key order.
                for table in tables.sorted(by: { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }) {
                    let names = columns[table.name] ?? []
                    let pending = try pendingRows(db, table, columns: names)
                    defer { pending.reset() }
                    pending.bind(table.name, at: 1)
                    var marks = ParsedMarks(columns: names)
                    while try pending.step() {
                        let syncID = pending.text(at: 0)
                        try marks.read(pending, column: 1)
                        let change =
                            marks.deleted
                            ? try deletion(db, table: table, syncID: syncID, marked: marks.marks)
                            : pending.integer(at: 2) == 0
                                ? try writesToDeletedRow(db, table: table, syncID: syncID, marked: marks.marks)
                                : try change(of: pending, table: table, syncID: syncID, columns: names, marked: marks)
                        guard let change else { continue }
                        try emit(change)
                        count += 1
                    }
                }
                guard count > 0 else {
                    // Marks whose every write another client's newer one superseded carry nothing to publish.
                    try db.execute(sql: "DELETE FROM \(StoreSchema.pendingChangesTable)")
                    return 0
                }
                let last = try seal()
                // Moved to a table of their own, in key order (appended, when no other set waits to be published), and
                // the pending table emptied whole: in one table, copying them under the new key cost 2.8× as much.
                // The sequence is new, so no staged row has its key yet.
                let pendingTable = StoreSchema.pendingChangesTable
                try db.execute(
                    sql: """
                        INSERT INTO \(StoreSchema.stagedChangesTable)(tbl, sync_id, staged_in, marks)
                        SELECT tbl, sync_id, ?, marks FROM \(pendingTable)
                        """, arguments: [last])
                try db.execute(sql: "DELETE FROM \(pendingTable)")
                try updateProgress(db) { $0.nextSequence = last + 1 }
                return count
            }
        }
    }

    /// One pass over a table's pending rows in key order, each joined with the row's
    /// registers and current values: `sync_id, marks, row present, stamps, columns…`. One statement stepped
    /// through, not a lookup per row (SQLite's C API; GRDB's `Row` per staged row was a tenth of a bulk sync's CPU).
    private func pendingRows(_ db: Database, _ table: SyncedTable, columns names: [String]) throws -> SQLiteStatement {
        let id = table.syncIDColumn.quotedDatabaseIdentifier
        let values = names.map { ", t." + $0.quotedDatabaseIdentifier }.joined()
        return try SQLiteStatement(
            db,
            sql: """
                SELECT p.sync_id, p.marks, t.\(id) IS NOT NULL, c.stamps\(values)
                FROM \(StoreSchema.pendingChangesTable) p
                LEFT JOIN \(table.name.quotedDatabaseIdentifier) t ON t.\(id) = p.sync_id
                LEFT JOIN \(StoreSchema.clocksTable) c ON c.tbl = p.tbl AND c.sync_id = p.sync_id
                WHERE p.tbl = ?1
                ORDER BY p.sync_id
                """)
    }

    /// A pending row's marks, parsed once for each run of rows that share them: rows written alike (a bulk insert,
    /// the same columns updated) have the same `marks` bytes, and parsing them for every row was a tenth of staging.
    private struct ParsedMarks {
        let columns: [String]
        private var bytes: [UInt8]?
        private(set) var marks = PendingMarks()
        /// The positions in `columns` of the marked ones.
        private(set) var markedColumns: [Int] = []
        private(set) var created = false
        private(set) var deleted = false

        init(columns: [String]) { self.columns = columns }

        /// Takes the marks of `statement`'s current row from `column`.
        mutating func read(_ statement: SQLiteStatement, column: Int32) throws {
            if let bytes,
                statement.withBytes(
                    at: column,
                    { row in
                        bytes.withUnsafeBytes {
                            $0.count == row.count
                                && ($0.isEmpty || memcmp($0.baseAddress!, row.baseAddress!, row.count) == 0)
                        }
                    })
            {
                return
            }
            let blob = statement.data(at: column)
            marks = try PendingMarks(blob)
            bytes = [UInt8](blob ?? Data())
            markedColumns = columns.indices.filter { marks.contains(columns[$0]) }
            created = marks.contains(StoreSchema.createdMarker)
            deleted = marks.contains(StoreSchema.deletedMarker)
        }
    }

    /// The change that carries a row's marked columns with their current values and local timestamps, read from
    /// the current row of `pending`; `nil` when no marked column is this client's write (an insert too, unless its
    /// table has no column: the values of a row whose every column another client wrote later travel in that
    /// client's set, and a replica that met this insert first would hold the row with none of them).
    private func change(
        of pending: SQLiteStatement, table: SyncedTable, syncID: String, columns names: [String],
        marked: ParsedMarks
    ) throws -> SyncChange? {
        let registers = try RowRegisters(pending.data(at: 3))
        var changed: [ColumnChange] = []
        changed.reserveCapacity(marked.markedColumns.count)
        for index in marked.markedColumns {
            // A column whose newest write came from another client is no longer this client's change.
            let name = names[index]
            guard let register = registers[name], register.client == nil else { continue }
            changed.append(
                ColumnChange(
                    column: name, value: pending.value(at: Int32(index + 4)),
                    timestamp: HybridTimestamp(rawValue: register.timestamp)))
        }
        let created = marked.created
        if changed.isEmpty && (!created || !names.isEmpty) { return nil }
        return SyncChange(kind: created ? .insert : .update, table: table.name, syncID: syncID, columns: changed)
    }

    /// The delete of a row, with its tombstone's timestamp and, under last-writer-wins, its unpublished writes.
    /// A delete another client made later than this one (applied before staging) supersedes it: only the writes go.
    private func deletion(_ db: Database, table synced: SyncedTable, syncID: String, marked: PendingMarks) throws
        -> SyncChange?
    {
        let table = synced.name
        guard
            let tombstone = try Row.fetchOne(
                db, sql: "SELECT hlc, client FROM \(StoreSchema.tombstonesTable) WHERE tbl = ? AND sync_id = ?",
                arguments: [table, syncID])
        else { return nil }
        guard (tombstone[1] as String?) == nil else {
            return try writesToDeletedRow(db, table: synced, syncID: syncID, marked: marked)
        }
        let carried = try localWritesOfDeletedRow(db, table: synced, syncID: syncID, marked: marked)
        return SyncChange(
            kind: .delete, table: table, syncID: syncID, columns: carried,
            deletionTimestamp: HybridTimestamp(rawValue: UInt64(bitPattern: tombstone[0] as Int64)))
    }

    /// This client's unpublished writes to a row another client's newer delete removed (applied before staging):
    /// under last-writer-wins they still travel, as writes to the deleted row, so that every replica keeps them in
    /// its shadow and a later write that brings the row back shows them. `nil` under delete-wins (they were
    /// dropped and reported) or when there is none.
    private func writesToDeletedRow(_ db: Database, table: SyncedTable, syncID: String, marked: PendingMarks) throws
        -> SyncChange?
    {
        let writes = try localWritesOfDeletedRow(db, table: table, syncID: syncID, marked: marked)
        return writes.isEmpty ? nil : SyncChange(kind: .update, table: table.name, syncID: syncID, columns: writes)
    }

    /// The marked columns of a deleted row that this client wrote last, with their values (last-writer-wins tables
    /// only): from the shadow table, or from the row when another client's newer write brought it back.
    private func localWritesOfDeletedRow(_ db: Database, table: SyncedTable, syncID: String, marked: PendingMarks)
        throws -> [ColumnChange]
    {
        guard table.deletePolicy == .lastWriterWins else { return [] }
        let registers = try RowRegisters(
            try Data.fetchOne(
                db, sql: "SELECT stamps FROM \(StoreSchema.clocksTable) WHERE tbl = ? AND sync_id = ?",
                arguments: [table.name, syncID]))
        let local = (columns[table.name] ?? []).filter {
            marked.contains($0) && (registers[$0].map { $0.client == nil } ?? false)
        }
        // as SQLite orders names: the bytes of a set stay the same
        .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        guard !local.isEmpty else { return [] }
        var values: [String: DatabaseValue] = [:]
        let id = table.syncIDColumn.quotedDatabaseIdentifier
        if let row = try Row.fetchOne(
            db,
            sql:
                "SELECT \(local.map(\.quotedDatabaseIdentifier).joined(separator: ", ")) FROM \(table.name.quotedDatabaseIdentifier) WHERE \(id) = ?",
            arguments: [syncID])
        {
            for (index, column) in local.enumerated() { values[column] = row[index] }
        } else {
            for row in try Row.fetchAll(
                db, sql: "SELECT col, value FROM \(StoreSchema.shadowTable) WHERE tbl = ? AND sync_id = ?",
                arguments: [table.name, syncID])
            {
                values[row[0]] = row[1] as DatabaseValue
            }
        }
        return local.compactMap { column in
            values[column].map {
                ColumnChange(
                    column: column, value: SyncValue($0),
                    timestamp: HybridTimestamp(rawValue: registers[column]!.timestamp))
            }
        }
    }
}
