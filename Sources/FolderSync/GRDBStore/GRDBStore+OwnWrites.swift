import Foundation
import GRDB

/// Installing a whole store that covers less than this client published: its own published writes stay.
///
/// Such a store lacks this client's latest published change sets; they come back from the remote at the next
/// sync (``LocalSyncState/Progress/ownChangeSetsToReapplyAfter``). Until then the app must not see its own committed
/// writes vanish: a delete or update made in that window would hit a missing row and be lost. So this client's own
/// registers and deletes that are newer than the store's are kept, with their stamps: not new changes, since their
/// change sets are published, and applying those sets again changes nothing.
extension GRDBStore {
    struct OwnWrites {
        struct Column {
            var syncID: String
            var column: String
            var stamp: Int64
            var value: DatabaseValue
        }
        /// Per table, this client's column registers (published, on rows with no unpublished change).
        var columns: [String: [Column]] = [:]
        /// Per table, this client's deletes: sync ID and stamp.
        var deletes: [String: [(syncID: String, stamp: Int64)]] = [:]
    }

    /// Reads this client's published registers and deletes, before a whole store replaces them.
    func ownPublishedWrites(_ db: Database) throws -> OwnWrites {
        var writes = OwnWrites()
        let pending = StoreSchema.pendingChangesTable
        let staged = StoreSchema.stagedChangesTable
        for table in tables {
            let quoted = table.name.quotedDatabaseIdentifier
            let id = table.syncIDColumn.quotedDatabaseIdentifier
            let names = columns[table.name] ?? []
            if !names.isEmpty {
                let rows = try Row.fetchCursor(
                    db,
                    sql: """
                        SELECT c.sync_id, c.stamps, \(names.map { "t." + $0.quotedDatabaseIdentifier }.joined(separator: ", "))
                        FROM \(StoreSchema.clocksTable) c JOIN \(quoted) t ON t.\(id) = c.sync_id
                        WHERE c.tbl = ? AND NOT EXISTS (SELECT 1 FROM \(pending) p WHERE p.tbl = c.tbl AND p.sync_id = c.sync_id)
                          AND NOT EXISTS (SELECT 1 FROM \(staged) s WHERE s.tbl = c.tbl AND s.sync_id = c.sync_id)
                        """, arguments: [table.name])
                while let row = try rows.next() {
                    let syncID: String = row[0]
                    let registers = try RowRegisters(row[1] as Data?)
                    for (index, name) in names.enumerated() {
                        guard let register = registers[name], register.client == nil else { continue }
                        writes.columns[table.name, default: []].append(
                            .init(
                                syncID: syncID, column: name, stamp: Int64(bitPattern: register.timestamp),
                                value: row[index + 2]))
                    }
                }
            }
            guard table.deletePolicy == .deleteWins else { continue }  // last writer wins keeps deleted rows' registers
            writes.deletes[table.name] = try Row.fetchAll(
                db,
                sql: """
                    SELECT d.sync_id, d.hlc FROM \(StoreSchema.tombstonesTable) d WHERE d.tbl = ? AND d.client IS NULL
                      AND NOT EXISTS (SELECT 1 FROM \(pending) p WHERE p.tbl = d.tbl AND p.sync_id = d.sync_id)
                      AND NOT EXISTS (SELECT 1 FROM \(staged) s WHERE s.tbl = d.tbl AND s.sync_id = d.sync_id)
                    """, arguments: [table.name]
            ).map { ($0[0], $0[1]) }
        }
        return writes
    }

    /// After the store's data replaced the local data (change capture off): puts back each of `writes` that is
    /// newer than what the store has, by the merge rules (a deleted row stays deleted).
    func keepNewer(_ writes: OwnWrites, localClient: String, _ db: Database) throws {
        /// One of this client's own stamps, as the store keeps them (no client named).
        func own(_ raw: Int64) -> ChangeStamp {
            ChangeStamp(timestamp: HybridTimestamp(rawValue: UInt64(bitPattern: raw)), clientIdentifier: localClient)
        }
        for table in tables {
            let quoted = table.name.quotedDatabaseIdentifier
            let id = table.syncIDColumn.quotedDatabaseIdentifier
            for (syncID, raw) in writes.deletes[table.name] ?? [] {
                guard MergeRule.isNewer(own(raw), than: try tombstone(db, table.name, syncID, localClient: localClient))
                else { continue }
                try db.execute(sql: "DELETE FROM \(quoted) WHERE \(id) = ?", arguments: [syncID])
                try db.execute(
                    sql: "DELETE FROM \(StoreSchema.clocksTable) WHERE tbl = ? AND sync_id = ?",
                    arguments: [table.name, syncID])
                try db.execute(
                    sql: """
                        INSERT INTO \(StoreSchema.tombstonesTable)(tbl, sync_id, hlc, client) VALUES (?, ?, ?, NULL)
                        ON CONFLICT(tbl, sync_id) DO UPDATE SET hlc = excluded.hlc, client = NULL
                        """, arguments: [table.name, syncID, raw])
            }
            for write in writes.columns[table.name] ?? [] {
                var registers = try self.registers(db, table: table.name, syncID: write.syncID) ?? RowRegisters()
                guard
                    MergeRule.isNewer(
                        own(write.stamp), than: registers.stamp(of: write.column, localClient: localClient))
                else { continue }
                if try rowExists(db, table: table, syncID: write.syncID) {
                    try db.execute(
                        sql: "UPDATE \(quoted) SET \(write.column.quotedDatabaseIdentifier) = ? WHERE \(id) = ?",
                        arguments: [write.value, write.syncID])
                } else if try tombstone(db, table.name, write.syncID, localClient: localClient) == nil {
                    try db.execute(
                        sql: "INSERT INTO \(quoted)(\(id), \(write.column.quotedDatabaseIdentifier)) VALUES (?, ?)",
                        arguments: [write.syncID, write.value])
                } else {
                    continue  // deleted in the store: the delete wins
                }
                registers.set(write.column, timestamp: UInt64(bitPattern: write.stamp), client: nil)
                try saveRegisters(db, registers, table: table.name, syncID: write.syncID)
            }
        }
    }
}
