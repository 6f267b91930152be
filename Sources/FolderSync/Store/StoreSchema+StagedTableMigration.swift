import GRDB

/// Stores written before staged changes had a table of their own kept them in the pending table with their
/// sequence (`staged_in` above 0): they are moved once, when the staged table is created.
extension StoreSchema {
    /// Creates the bookkeeping tables; when that creates the staged table, moves staged rows into it. Runs in the
    /// store's opening transaction, so a store is converted whole or not at all.
    static func createBookkeeping(_ db: Database) throws {
        let pending = LocalLayout.unsynchronizedChangesTable, staged = LocalLayout.stagedChangesTable
        let splitsStaged = try db.tableExists(pending) && !db.tableExists(staged)
        try db.execute(sql: bookkeeping)
        guard splitsStaged else { return }
        try db.execute(sql: "INSERT INTO \(staged)(tbl, sync_id, staged_in, marks) SELECT tbl, sync_id, staged_in, marks FROM \(pending) WHERE staged_in > 0")
        try db.execute(sql: "DELETE FROM \(pending) WHERE staged_in > 0")
    }
}
