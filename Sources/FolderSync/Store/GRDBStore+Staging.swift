import Foundation
import GRDB

extension GRDBStore {
    public func stageChanges(sequence: Int64, emit: (SyncChange) throws -> Void, seal: () throws -> Int64) throws -> Int {
        try wrap("staging local changes") {
            try database.write { db in
                // One pending row per synced row not yet staged (staged_in 0), in key order.
                let pending = try Row.fetchCursor(db, sql: """
                    SELECT tbl, sync_id, marks FROM \(LocalLayout.unsynchronizedChangesTable) WHERE staged_in = 0 ORDER BY tbl, sync_id
                    """)
                var count = 0
                var reader = StagingReader()
                while let row = try pending.next() {
                    let table: String = row[0], syncID: String = row[1]
                    let marks = try PendingMarks(row[2] as Data?)
                    guard let change = try change(db, table: table, syncID: syncID, marked: marks, reader: &reader) else { continue }
                    try emit(change)
                    count += 1
                }
                guard count > 0 else { return 0 }
                let last = try seal()
                try db.execute(sql: "UPDATE \(LocalLayout.unsynchronizedChangesTable) SET staged_in = ? WHERE staged_in = 0",
                               arguments: [last])
                var state = try loadState(db)
                state.nextSequence = last + 1
                try Self.save(state: try JSONEncoder().encode(state), db)
                return count
            }
        }
    }

    /// Per table, the statement that reads a row's values and registers at once, prepared once per staging.
    private struct StagingReader {
        var statements: [String: Statement] = [:]
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
        let statement: Statement
        if let cached = reader.statements[table] {
            statement = cached
        } else {
            let select = (["c.stamps"] + names.map { "t." + $0.quotedDatabaseIdentifier }).joined(separator: ", ")
            statement = try db.makeStatement(sql: """
                SELECT \(select) FROM \(table.quotedDatabaseIdentifier) t LEFT JOIN foldersync_clocks c ON c.tbl = ? AND c.sync_id = t.\(synced.syncIDColumn.quotedDatabaseIdentifier)
                WHERE t.\(synced.syncIDColumn.quotedDatabaseIdentifier) = ?
                """)
            reader.statements[table] = statement
        }
        guard let values = try Row.fetchOne(statement, arguments: [table, syncID]) else { return nil }
        let registers = try RowRegisters(values[0] as Data?)
        var changed: [ColumnChange] = []
        changed.reserveCapacity(names.count)
        for (index, name) in names.enumerated() where marked.contains(name) {
            // A column whose newest write came from another client is no longer this client's change.
            guard let register = registers[name], register.client == nil else { continue }
            changed.append(ColumnChange(column: name, value: SyncValue(values[index + 1] as DatabaseValue),
                                        timestamp: HybridTimestamp(rawValue: register.timestamp)))
        }
        let created = marked.contains(StoreSchema.createdMarker)
        if changed.isEmpty && !created { return nil }
        return SyncChange(kind: created ? .insert : .update, table: table, syncID: syncID, columns: changed)
    }
}
