import GRDB

/// A document opened as a store for the first time: a file the app kept without sync, one detached earlier
/// (``GRDBStore/stopTracking(documentAt:helperDirectory:keepingUnpublishedChanges:)``), or one written elsewhere.
///
/// Its rows are the user's, and no other device has them: each is recorded as a new local change, every column
/// written now, as if the app had just inserted it. The first sync publishes them, and merges them with what the
/// shared folder holds (a whole store installed first re-applies them on top), so that attaching a document keeps
/// every row it had.
extension GRDBStore {
    /// Records every row of `tables` as a new local change (registers now, marks `#created #all`); runs in the opening
    /// transaction of a store whose bookkeeping was created in it.
    static func recordExistingRows(_ db: Database, tables: [SyncedTable], columns: [String: [String]]) throws {
        let created = PendingMarks([StoreSchema.createdMarker, StoreSchema.allColumnsMarker]).encoded
        for table in tables {
            let quoted = table.name.quotedDatabaseIdentifier
            let id = table.syncIDColumn.quotedDatabaseIdentifier
            let names = columns[table.name] ?? []
            if !names.isEmpty {
                // foldersync_rejoined(NULL, column…): registers with each column written now by this client.
                let columns = names.indices.map { "?\($0 + 2)" }.joined(separator: ", ")
                try db.execute(
                    sql: """
                        INSERT INTO \(StoreSchema.clocksTable)(tbl, sync_id, stamps)
                        SELECT ?1, \(id), foldersync_rejoined(NULL, \(columns)) FROM \(quoted)
                        """, arguments: [table.name] + StatementArguments(names))
            }
            try db.execute(
                sql: """
                    INSERT INTO \(StoreSchema.pendingChangesTable)(tbl, sync_id, staged_in, marks)
                    SELECT ?, \(id), 0, ? FROM \(quoted)
                    """, arguments: [table.name, created])
        }
    }
}
