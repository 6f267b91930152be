import GRDB

/// Bookkeeping versions 3 → 4 → … → 9 (see the version history in `StoreSchema+Versions.swift`):
/// - before staged changes had a table of their own, the pending table kept them with their sequence
///   (`staged_in` above 0): they are moved when the staged table is created;
/// - before the ledger kept each client's run (``StoreSchema/appliedRunsTable``), the runs are read from it;
/// - before registers were written in version 2 and new rows marked `#all`, they were written in version 1 and
///   marked column by column: both stay as they are.
extension StoreSchema {
    /// Version 3 → 4: staged changes move from the pending table to `foldersync_staged_changes`.
    static func splitStagedChanges(_ db: Database) throws {
        let pending = StoreSchema.pendingChangesTable
        let staged = StoreSchema.stagedChangesTable
        try createBookkeepingTable(staged, db)
        try db.execute(
            sql:
                "INSERT INTO \(staged)(tbl, sync_id, staged_in, marks) SELECT tbl, sync_id, staged_in, marks FROM \(pending) WHERE staged_in > 0"
        )
        try db.execute(sql: "DELETE FROM \(pending) WHERE staged_in > 0")
    }

    /// Version 4 → 5: each client's run of applied change sets, read from the ledger once (the slow way, when the
    /// store is opened).
    static func addAppliedRuns(_ db: Database) throws {
        try createBookkeepingTable(StoreSchema.appliedRunsTable, db)
        var applied = AppliedChangeSets()
        let rows = try Row.fetchCursor(db, sql: "SELECT client, sequence FROM \(StoreSchema.appliedChangeSetsTable)")
        while let row = try rows.next() { applied.insert(row[1], of: row[0]) }
        let run = try db.makeStatement(
            sql: "INSERT INTO \(StoreSchema.appliedRunsTable)(client, through) VALUES (?, ?)")
        for client in Set(applied.contiguous.keys).union(applied.beyond.keys) {
            try run.execute(arguments: [client, applied.highestContiguousSequence(of: client)])
        }
    }

    /// Version 5 → 6: nothing to rewrite. Version 6 writes registers in version 2 and marks a new row's columns with
    /// ``StoreSchema/allColumnsMarker``, and reads version 1 registers and column-by-column marks as before: the
    /// values of a version-5 store stay valid (each row takes the new encoding when it is written again). The
    /// version is recorded all the same, so that an earlier FolderSync, which reads neither, refuses the store.
    static func acceptCompactBookkeeping(_ db: Database) throws {}

    /// Version 6 → 7: the table of tombstones' change sets, empty (tombstone collection fills it as it first meets
    /// each tombstone). The capture triggers of version 7 call their functions by new names; the store makes its
    /// triggers again once its bookkeeping is current, and still defines the old names for the triggers it meets
    /// before (``StoreSchema/legacyCaptureFunction(_:)``). The version is recorded so that FolderSync of version 6,
    /// whose triggers would be made with the old names again, refuses the store.
    static func addTombstoneSets(_ db: Database) throws {
        try createBookkeepingTable(StoreSchema.tombstoneSetsTable, db)
    }

    /// Version 7 → 8: the ledger's primary key gains the change-set identifier, so that two sets under one number
    /// are both recorded. The rows without an identifier were written for runs an installed whole store or a restore
    /// covered (each run's number is in `foldersync_applied_runs`): version 8 keeps those runs alone, so they go.
    static func keyLedgerByIdentifier(_ db: Database) throws {
        let ledger = StoreSchema.appliedChangeSetsTable
        try db.execute(sql: "ALTER TABLE \(ledger) RENAME TO foldersync_applied_change_sets_v6")
        try createBookkeepingTable(ledger, db)
        try db.execute(
            sql: """
                INSERT INTO \(ledger)(client, sequence, change_set_id)
                SELECT client, sequence, change_set_id FROM foldersync_applied_change_sets_v6 WHERE change_set_id != ''
                """)
        try db.execute(sql: "DROP TABLE foldersync_applied_change_sets_v6")
    }

    /// Version 8 → 9: nothing to rewrite. A version-8 store's deletes have their tombstones; version 9 writes a
    /// delete of a delete-wins row as its marks alone, with its time, and settles it later
    /// (`GRDBStore+UnsettledDeletions.swift`). The version is recorded so that FolderSync of version 8, which would
    /// take such a delete for one without a tombstone, refuses the store.
    static func acceptUnsettledDeletions(_ db: Database) throws {}
}
