import GRDB

/// Stores written by earlier versions are brought to the current bookkeeping once, when opened:
/// - before staged changes had a table of their own, the pending table kept them with their sequence
///   (`staged_in` above 0): they are moved when the staged table is created;
/// - before the ledger kept each client's run (``GRDBStore/appliedRunsTable``), the runs are read from it.
extension StoreSchema {
    /// Creates the bookkeeping tables, and converts what the tables it creates replace. Runs in the store's
    /// opening transaction, so a store is converted whole or not at all.
    static func createBookkeeping(_ db: Database) throws {
        let pending = LocalLayout.unsynchronizedChangesTable, staged = LocalLayout.stagedChangesTable
        let splitsStaged = try db.tableExists(pending) && !db.tableExists(staged)
        let addsRuns = try db.tableExists(LocalLayout.appliedChangeSetsTable) && !db.tableExists(GRDBStore.appliedRunsTable)
        try db.execute(sql: bookkeeping)
        if addsRuns { try GRDBStore.addRuns(db) }
        if splitsStaged {
            try db.execute(sql: "INSERT INTO \(staged)(tbl, sync_id, staged_in, marks) SELECT tbl, sync_id, staged_in, marks FROM \(pending) WHERE staged_in > 0")
            try db.execute(sql: "DELETE FROM \(pending) WHERE staged_in > 0")
        }
    }
}
