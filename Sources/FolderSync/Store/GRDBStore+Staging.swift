import Foundation
import GRDB

extension GRDBStore {
    public func stageChanges(sequence: Int64, emit: (SyncChange) throws -> Void, seal: () throws -> Int64) throws -> Int {
        try wrap("staging local changes") {
            try database.write { db in
                let pending = try Row.fetchCursor(db, sql: """
                    SELECT tbl, sync_id, col FROM \(LocalLayout.unsynchronizedChangesTable)
                    WHERE staged_in IS NULL ORDER BY tbl, sync_id
                    """)
                var count = 0
                var current: (table: String, syncID: String, columns: Set<String>)?
                func flush() throws {
                    guard let row = current, let change = try change(db, table: row.table, syncID: row.syncID, marked: row.columns)
                    else { return }
                    try emit(change)
                    count += 1
                }
                while let row = try pending.next() {
                    let table: String = row[0], syncID: String = row[1], column: String = row[2]
                    if current?.table == table && current?.syncID == syncID {
                        current?.columns.insert(column)
                    } else {
                        try flush()
                        current = (table, syncID, [column])
                    }
                }
                try flush()
                guard count > 0 else { return 0 }
                let last = try seal()
                try db.execute(sql: "UPDATE \(LocalLayout.unsynchronizedChangesTable) SET staged_in = ? WHERE staged_in IS NULL",
                               arguments: [last])
                var state = try loadState(db)
                state.nextSequence = last + 1
                try Self.save(state: try JSONEncoder().encode(state), db)
                return count
            }
        }
    }

    /// The change that carries a row's marked columns with their current values and local timestamps.
    private func change(_ db: Database, table: String, syncID: String, marked: Set<String>) throws -> SyncChange? {
        guard let synced = tablesByName[table], let names = columns[table] else { return nil }
        if marked.contains(StoreSchema.deletedMarker) {
            guard let stamp = try Int64.fetchOne(db, sql: "SELECT hlc FROM foldersync_tombstones WHERE tbl = ? AND sync_id = ?",
                                                 arguments: [table, syncID]) else { return nil }
            var carried: [ColumnChange] = []
            if synced.deletePolicy == .lastWriterWins {
                // The row's unpublished writes, kept in the shadow table, travel with the delete.
                let rows = try Row.fetchAll(db, sql: """
                    SELECT s.col, s.value, c.hlc FROM foldersync_shadow s JOIN foldersync_clocks c
                        ON c.tbl = s.tbl AND c.sync_id = s.sync_id AND c.col = s.col AND c.client IS NULL
                    WHERE s.tbl = ? AND s.sync_id = ? ORDER BY s.col
                    """, arguments: [table, syncID])
                carried = rows.filter { marked.contains($0[0] as String) }.map {
                    ColumnChange(column: $0[0], value: SyncValue($0[1] as DatabaseValue), timestamp: HybridTimestamp(rawValue: UInt64(bitPattern: $0[2])))
                }
            }
            return SyncChange(kind: .delete, table: table, syncID: syncID, columns: carried,
                              deletionTimestamp: HybridTimestamp(rawValue: UInt64(bitPattern: stamp)))
        }
        let select = names.isEmpty ? "1" : names.map(\.quotedDatabaseIdentifier).joined(separator: ", ")
        guard let values = try Row.fetchOne(db.cachedStatement(sql: """
            SELECT \(select) FROM \(table.quotedDatabaseIdentifier) WHERE \(synced.syncIDColumn.quotedDatabaseIdentifier) = ?
            """), arguments: [syncID]) else { return nil }
        var localStamps: [String: Int64] = [:]
        let clocks = try Row.fetchCursor(db.cachedStatement(sql: """
            SELECT col, hlc FROM foldersync_clocks WHERE tbl = ? AND sync_id = ? AND client IS NULL
            """), arguments: [table, syncID])
        while let row = try clocks.next() { localStamps[row[0]] = row[1] }
        var changed: [ColumnChange] = []
        for (index, name) in names.enumerated() where marked.contains(name) {
            // A column whose newest write came from another client is no longer this client's change.
            guard let stamp = localStamps[name] else { continue }
            changed.append(ColumnChange(column: name, value: SyncValue(values[index] as DatabaseValue),
                                        timestamp: HybridTimestamp(rawValue: UInt64(bitPattern: stamp))))
        }
        let created = marked.contains(StoreSchema.createdMarker)
        if changed.isEmpty && !created { return nil }
        return SyncChange(kind: created ? .insert : .update, table: table, syncID: syncID, columns: changed)
    }
}
