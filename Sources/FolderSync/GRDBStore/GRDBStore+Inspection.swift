import Foundation
import GRDB

/// Read-only views of the merge registers, so tests and the simulator can check that no committed write was lost.
extension GRDBStore {
    /// The last-writer-wins stamp of one column, or `nil` when the column has none (row absent or deleted).
    ///
    /// Local writes are stored without a client; they are reported as `localClient`'s.
    @_spi(Testing) public func stamp(of key: ColumnKey, localClient: String) throws -> ChangeStamp? {
        try wrap("reading a column stamp") {
            try database.read { db in
                // A delete not settled yet leaves the registers it removes when it is.
                guard try StoreSchema.unsettledDeletion(db, table: key.table, syncID: key.syncID) == nil else {
                    return nil
                }
                return try registers(db, table: key.table, syncID: key.syncID)?.stamp(
                    of: key.column, localClient: localClient)
            }
        }
    }

    /// The stamp of the delete that removed a row for good, or `nil` when the row was never deleted.
    @_spi(Testing) public func deletionStamp(table: String, syncID: String, localClient: String) throws -> ChangeStamp?
    {
        try wrap("reading a tombstone") {
            try database.read { db in
                if let unsettled = try StoreSchema.unsettledDeletion(db, table: table, syncID: syncID) {
                    return ChangeStamp(timestamp: HybridTimestamp(rawValue: unsettled), clientIdentifier: localClient)
                }
                return try Row.fetchOne(
                    db, sql: "SELECT hlc, client FROM \(StoreSchema.tombstonesTable) WHERE tbl = ? AND sync_id = ?",
                    arguments: [table, syncID]
                )
                .map {
                    ChangeStamp(
                        timestamp: HybridTimestamp(rawValue: UInt64(bitPattern: $0[0])),
                        clientIdentifier: $0[1] ?? localClient)
                }
            }
        }
    }
}
