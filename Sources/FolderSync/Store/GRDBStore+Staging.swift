import Foundation
import GRDB

extension GRDBStore {
    public func stageChanges(sequence: Int64, emit: (SyncChange) throws -> Void, seal: () throws -> Int64) throws -> Int {
        try wrap("staging local changes") {
            try database.write { db in
                // One pending row per synced row not yet staged (staged_in 0), in key order.
                let pending = try SQLiteStatement(db, sql: """
                    SELECT tbl, sync_id, marks FROM \(LocalLayout.unsynchronizedChangesTable) WHERE staged_in = 0 ORDER BY tbl, sync_id
                    """)
                var count = 0
                var reader = StagingReader()
                while try pending.step() {
                    let table = pending.text(at: 0), syncID = pending.text(at: 1)
                    let marks = try PendingMarks(pending.data(at: 2))
                    guard let change = try change(db, table: table, syncID: syncID, marked: marks, reader: &reader) else { continue }
                    try emit(change)
                    count += 1
                }
                pending.reset()
                guard count > 0 else { return 0 }
                let last = try seal()
                // Copied under the new key, then the unstaged rows removed: an UPDATE of a key column moves each row
                // within the B-tree one at a time, 2.7× slower for 100,000 rows (sqlite3 .timer, scenario 1's store).
                // The sequence is new, so no staged row has its key yet.
                let pendingTable = LocalLayout.unsynchronizedChangesTable
                try db.execute(sql: """
                    INSERT INTO \(pendingTable)(tbl, sync_id, staged_in, marks)
                    SELECT tbl, sync_id, ?, marks FROM \(pendingTable) WHERE staged_in = 0
                    """, arguments: [last])
                try db.execute(sql: "DELETE FROM \(pendingTable) WHERE staged_in = 0")
                var state = try loadState(db)
                state.nextSequence = last + 1
                try Self.save(state: try JSONEncoder().encode(state), db)
                return count
            }
        }
    }

    /// Per table, the statement that reads a row's registers and values at once, prepared once per staging and
    /// read through SQLite's C API (GRDB's `Row` per staged row was a tenth of a bulk sync's CPU).
    private struct StagingReader {
        var statements: [String: SQLiteStatement] = [:]
    }

    /// The change that carries a row's marked columns with their current values and local timestamps.
    private func change(_ db: Database, table: String, syncID: String, marked: PendingMarks,
                        reader: inout StagingReader) throws -> SyncChange? {
        guard let synced = tablesByName[table], let names = columns[table] else { return nil }
        if marked.contains(StoreSchema.deletedMarker) {
            guard let stamp = try Int64.fetchOne(db, sql: "SELECT hlc FROM foldersync_tombstones WHERE tbl = ? AND sync_id = ?",
                                                 arguments: [table, syncID]) else { return nil }
            var carried: [ColumnChange] = []
            if synced.deletePolicy == .lastWriterWins {
                // The row's unpublished writes, kept in the shadow table, travel with the delete.
                let registers = try RowRegisters(try Data.fetchOne(db, sql: "SELECT stamps FROM foldersync_clocks WHERE tbl = ? AND sync_id = ?",
                                                                     arguments: [table, syncID]))
                let rows = try Row.fetchAll(db, sql: "SELECT col, value FROM foldersync_shadow WHERE tbl = ? AND sync_id = ? ORDER BY col",
                                            arguments: [table, syncID])
                for row in rows {
                    let column: String = row[0]
                    guard marked.contains(column), let register = registers[column], register.client == nil else { continue }
                    carried.append(ColumnChange(column: column, value: SyncValue(row[1] as DatabaseValue),
                                                timestamp: HybridTimestamp(rawValue: register.timestamp)))
                }
            }
            return SyncChange(kind: .delete, table: table, syncID: syncID, columns: carried,
                              deletionTimestamp: HybridTimestamp(rawValue: UInt64(bitPattern: stamp)))
        }
        let statement: SQLiteStatement
        if let cached = reader.statements[table] {
            statement = cached
        } else {
            let id = synced.syncIDColumn.quotedDatabaseIdentifier
            let select = (["c.stamps"] + names.map { "t." + $0.quotedDatabaseIdentifier }).joined(separator: ", ")
            statement = try SQLiteStatement(db, sql: """
                SELECT \(select) FROM \(table.quotedDatabaseIdentifier) t LEFT JOIN foldersync_clocks c ON c.tbl = ?1 AND c.sync_id = t.\(id)
                WHERE t.\(id) = ?2
                """)
            reader.statements[table] = statement
        }
        defer { statement.reset() }
        statement.bind(table, at: 1)
        statement.bind(syncID, at: 2)
        guard try statement.step() else { return nil }
        let registers = try RowRegisters(statement.data(at: 0))
        var changed: [ColumnChange] = []
        changed.reserveCapacity(names.count)
        for (index, name) in names.enumerated() where marked.contains(name) {
            // A column whose newest write came from another client is no longer this client's change.
            guard let register = registers[name], register.client == nil else { continue }
            changed.append(ColumnChange(column: name, value: statement.value(at: Int32(index + 1)),
                                        timestamp: HybridTimestamp(rawValue: register.timestamp)))
        }
        let created = marked.contains(StoreSchema.createdMarker)
        if changed.isEmpty && !created { return nil }
        return SyncChange(kind: created ? .insert : .update, table: table, syncID: syncID, columns: changed)
    }
}
