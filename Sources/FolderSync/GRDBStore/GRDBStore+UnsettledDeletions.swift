import Foundation
import GRDB

/// Deletes recorded in one write (bookkeeping version 9), and their settling.
///
/// Change capture records a deleted row of a delete-wins table by one write in the app's transaction: its pending
/// marks become `#deleted #at=T` (``PendingMarks/deletion(at:)``), `T` the delete's timestamp. Each write more cost
/// about half a plain delete, so the rest of the delete's bookkeeping (its tombstone, this client's at `T`; its
/// registers removed; its marks `#deleted`, as before version 9) is written when the delete is settled. A delete is
/// never lost between the two: its marks are committed with the app's delete and carry everything settling writes.
///
/// Every write that reads the merge bookkeeping of rows it did not just write settles first, in its own transaction:
/// staging, applying remote changes and attachments (``writeWithoutCapture(savingRemoteKnowledge:_:)``), merging an
/// installed whole store, continuing after a restore, re-joining. So these see a delete as they always did. A sync
/// ID marked by an unsettled delete is refused to a new row as a tombstone's is (``CaptureWriter``); the readers that
/// cannot write (the local check, a row's inspection, the clock's first read) read the marks as the tombstone they
/// stand for.
extension GRDBStore {
    /// Settles every delete recorded in one write; returns how many there were.
    @discardableResult
    func settleDeletions(_ db: Database) throws -> Int {
        let deletions = try StoreSchema.unsettledDeletions(db)
        let settledMarks = PendingMarks([StoreSchema.deletedMarker]).encoded
        for deletion in deletions {
            let row: StatementArguments = [deletion.table, deletion.syncID]
            try db.cachedStatement(
                sql: """
                    INSERT INTO \(StoreSchema.tombstonesTable)(tbl, sync_id, hlc, client) VALUES (?, ?, ?, NULL)
                    ON CONFLICT(tbl, sync_id) DO UPDATE SET hlc = excluded.hlc, client = NULL
                    """
            ).execute(arguments: row + [Int64(bitPattern: deletion.timestamp)])
            try db.cachedStatement(sql: "DELETE FROM \(StoreSchema.clocksTable) WHERE tbl = ? AND sync_id = ?")
                .execute(arguments: row)
            try db.cachedStatement(
                sql:
                    "UPDATE \(StoreSchema.pendingChangesTable) SET marks = ? WHERE tbl = ? AND sync_id = ? AND staged_in = 0"
            ).execute(arguments: [settledMarks] + row)
            clock.observe(HybridTimestamp(rawValue: deletion.timestamp))
        }
        return deletions.count
    }
}

extension StoreSchema {
    /// A delete recorded in one write and not settled yet: the row and the delete's timestamp.
    struct UnsettledDeletion: Equatable {
        var table: String
        var syncID: String
        var timestamp: UInt64
    }

    /// Every delete not settled yet: one pass over the pending table (which holds the changes made since the last
    /// staging), the marks decoded only where they have the length and first byte of a delete's.
    static func unsettledDeletions(_ db: Database) throws -> [UnsettledDeletion] {
        var found: [UnsettledDeletion] = []
        let rows = try Row.fetchCursor(
            db,
            sql: """
                SELECT tbl, sync_id, marks FROM \(pendingChangesTable)
                WHERE staged_in = 0 AND length(marks) = ? AND substr(marks, 1, 1) = x'00'
                """, arguments: [PendingMarks.deletionByteCount])
        while let row = try rows.next() {
            guard let timestamp = try PendingMarks(row[2] as Data?).deletionTimestamp else { continue }
            found.append(UnsettledDeletion(table: row[0], syncID: row[1], timestamp: timestamp))
        }
        return found
    }

    /// The timestamp of the row's delete when it is not settled yet.
    static func unsettledDeletion(_ db: Database, table: String, syncID: String) throws -> UInt64? {
        try PendingMarks(
            try Data.fetchOne(
                db,
                sql: "SELECT marks FROM \(pendingChangesTable) WHERE tbl = ? AND sync_id = ? AND staged_in = 0",
                arguments: [table, syncID])
        ).deletionTimestamp
    }
}
