import Foundation
import GRDB

/// The rows of the store against their bookkeeping: registers, pending and staged marks, tombstones.
///
/// Every pair is found by one anti-join per table (each side read once, in key order), and each BLOB decoded once:
/// the check costs a pass over the bookkeeping, whatever its size.
extension LocalStoreDoctor {
    func checkRows(_ db: Database, state: StoreState, _ examination: inout LocalExamination) throws {
        let clocks = StoreSchema.clocksTable
        let tombstones = StoreSchema.tombstonesTable
        for table in state.tables {
            let quoted = table.name.quotedDatabaseIdentifier
            let id = table.syncIDColumn.quotedDatabaseIdentifier
            func path(_ syncID: String) -> String { "\(table.name)/\(syncID)" }
            let (marks, unreadableMarks) = try unpublishedMarks(db, table: table.name)
            // A table whose only column is its sync ID keeps no registers.
            if !table.columns.isEmpty {
                for syncID in try String.fetchAll(
                    db,
                    sql: """
                        SELECT CAST(t.\(id) AS TEXT) FROM \(quoted) t
                        WHERE NOT EXISTS (SELECT 1 FROM \(clocks) c WHERE c.tbl = ? AND c.sync_id = t.\(id))
                        """, arguments: [table.name])
                {
                    examination.add(
                        .error, .rowWithoutRegisters, path(syncID),
                        "the row was written without FolderSync (the sqlite3 shell, another program): "
                            + "no other device gets it; write it again through the app")
                }
            }
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT c.sync_id, c.stamps, d.hlc IS NOT NULL, EXISTS (SELECT 1 FROM \(quoted) t WHERE t.\(id) = c.sync_id)
                    FROM \(clocks) c LEFT JOIN \(tombstones) d ON d.tbl = c.tbl AND d.sync_id = c.sync_id
                    WHERE c.tbl = ?
                    """, arguments: [table.name])
            var newestWrites: [String: UInt64] = [:]
            while let row = try rows.next() {
                let syncID: String = row[0]
                let tombstoned: Bool = row[2]
                let exists: Bool = row[3]
                let registers: RowRegisters
                do {
                    registers = try RowRegisters(row[1] as Data?)
                } catch {
                    examination.add(
                        .error, .unreadableBookkeeping, path(syncID), "the row's registers cannot be read: \(error)")
                    continue
                }
                if exists && table.lastWriterWins { newestWrites[syncID] = registers.newestTimestamp }
                if !exists && !tombstoned && marks[syncID]?.contains(StoreSchema.deletedMarker) != true {
                    examination.add(
                        .error, .registersWithoutRow, path(syncID),
                        "the row was deleted without FolderSync: other devices keep it; put it back and delete it "
                            + "through the app")
                }
            }
            for syncID in unreadableMarks.sorted() {
                examination.add(
                    .error, .unreadableBookkeeping, path(syncID), "the row's pending changes cannot be read")
            }
            for (syncID, marks) in marks.sorted(by: { $0.key < $1.key }) {
                let exists =
                    try Bool.fetchOne(
                        db, sql: "SELECT EXISTS (SELECT 1 FROM \(quoted) WHERE \(id) = ?)",
                        arguments: [syncID]) ?? false
                let tombstoned =
                    try Bool.fetchOne(
                        db,
                        sql: """
                            SELECT EXISTS (SELECT 1 FROM \(tombstones) WHERE tbl = ? AND sync_id = ?)
                            """, arguments: [table.name, syncID]) ?? false
                if marks.contains(StoreSchema.deletedMarker), !tombstoned, !marks.holdsUnsettledDeletion {
                    examination.add(
                        .error, .deleteWithoutTombstone, path(syncID),
                        "a delete waits to be published without its tombstone: it never leaves this device")
                } else if !marks.contains(StoreSchema.deletedMarker), !exists, !tombstoned {
                    examination.add(
                        .warning, .changeWithoutRow, path(syncID),
                        "a change waits to be published for a row that is gone without a delete: it carries nothing")
                }
            }
            let live = try Row.fetchCursor(
                db,
                sql: """
                    SELECT d.sync_id, d.hlc FROM \(tombstones) d JOIN \(quoted) t ON t.\(id) = d.sync_id WHERE d.tbl = ?
                    """, arguments: [table.name])
            while let row = try live.next() {
                let syncID: String = row[0]
                let deletedAt = UInt64(bitPattern: row[1])
                // Last writer wins: a row written after its delete is back, and keeps the tombstone.
                if table.lastWriterWins, let newest = newestWrites[syncID], newest > deletedAt { continue }
                examination.add(
                    .error, .tombstoneOfLiveRow, path(syncID),
                    "the row is there although it was deleted: it was written back without FolderSync, and other "
                        + "devices keep it deleted")
            }
        }
    }

    /// Per sync ID of `table`, its pending and staged marks together, and the sync IDs whose marks do not decode.
    private func unpublishedMarks(_ db: Database, table: String) throws
        -> (marks: [String: PendingMarks], unreadable: Set<String>)
    {
        var marks: [String: PendingMarks] = [:]
        var unreadable = Set<String>()
        let rows = try Row.fetchCursor(
            db, sql: "SELECT sync_id, marks FROM (\(StoreSchema.unpublishedChanges)) WHERE tbl = ?",
            arguments: [table])
        while let row = try rows.next() {
            let syncID: String = row[0]
            guard let decoded = try? PendingMarks(row[1] as Data?) else {
                unreadable.insert(syncID)
                continue
            }
            marks[syncID, default: PendingMarks()].formUnion(decoded)
        }
        return (marks, unreadable)
    }
}
