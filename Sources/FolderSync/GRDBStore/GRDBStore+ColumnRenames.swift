import Foundation
import GRDB

/// Renamed columns (``SyncedTable/renamedColumns``): one last-writer-wins register per column whatever its name,
/// so that devices of the old and the new app version converge while they share a folder.
///
/// Two things follow a rename. A change set of an older version names the old column: as it is applied (and looked
/// at for conflicts), its changes to a column the table no longer has and that was renamed go to the new column,
/// with their own stamps. And the store's own record of the column (its registers, its unpublished marks, the kept
/// values of a row deleted under last writer wins) still names the old column after the app's migration renamed it:
/// it is renamed in the opening transaction, once, when the capture triggers the store's last opening left still
/// name the old column (so a store that was renamed before costs nothing to open).
extension GRDBStore {
    /// Runs `body` on each change of `changes`, a change to a renamed column made a change to the column it was
    /// renamed to.
    func forEachFollowingRenames(_ changes: ChangeStream, _ body: (SyncChange) throws -> Void) throws {
        // Both closures are only called while this runs: the stream calls `body` for each change it delivers.
        try withoutActuallyEscaping(body) { body in
            guard tables.contains(where: { !$0.renamedColumns.isEmpty }) else { return try changes(body) }
            try changes { change in
                guard let renamed = tablesByName[change.table]?.renamedColumns, !renamed.isEmpty,
                    let current = columns[change.table]
                else { return try body(change) }
                var followed = change
                for index in followed.columns.indices {
                    let name = followed.columns[index].column
                    if let new = renamed[name], !current.contains(name) { followed.columns[index].column = new }
                }
                try body(followed)
            }
        }
    }

    /// Renames the bookkeeping of `table`'s renamed columns that its migration renamed since the store's last
    /// opening: the old update trigger (about to be made again) still names them. Runs before the triggers are
    /// installed, in the opening transaction.
    static func followRenamedColumns(_ db: Database, table: SyncedTable, columns: [String]) throws {
        guard !table.renamedColumns.isEmpty,
            let trigger = try String.fetchOne(
                db, sql: "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?",
                arguments: [StoreSchema.triggerName(table.name, "update")])
        else { return }
        // The trigger passes each column's name as a string literal, which a column rename leaves as it was.
        let renamed = table.renamedColumns.filter { old, new in
            let literal = "'" + old.replacingOccurrences(of: "'", with: "''") + "'"
            return !columns.contains(old) && columns.contains(new) && trigger.contains(literal)
        }
        guard !renamed.isEmpty else { return }
        let clocks = try Row.fetchAll(
            db, sql: "SELECT sync_id, stamps FROM \(StoreSchema.clocksTable) WHERE tbl = ?",
            arguments: [table.name])
        for row in clocks {
            var registers = try RowRegisters(row[1] as Data?)
            var changed = false
            for (old, new) in renamed {
                guard let register = registers[old] else { continue }
                registers.removeAll { $0.column == old }
                if register.timestamp > registers[new]?.timestamp ?? 0 {
                    registers.set(new, timestamp: register.timestamp, client: register.client)
                }
                changed = true
            }
            if changed {
                try db.execute(
                    sql: "UPDATE \(StoreSchema.clocksTable) SET stamps = ? WHERE tbl = ? AND sync_id = ?",
                    arguments: [registers.encoded, table.name, row[0] as String])
            }
        }
        for marksTable in [StoreSchema.pendingChangesTable, StoreSchema.stagedChangesTable] {
            let rows = try Row.fetchAll(
                db, sql: "SELECT sync_id, staged_in, marks FROM \(marksTable) WHERE tbl = ?",
                arguments: [table.name])
            for row in rows {
                var marks = try PendingMarks(row[2] as Data?)
                let old = renamed.keys.filter { marks.names.contains($0) }
                guard !old.isEmpty else { continue }
                for name in old {
                    marks.remove(name)
                    marks.insert(renamed[name]!)
                }
                try db.execute(
                    sql: "UPDATE \(marksTable) SET marks = ? WHERE tbl = ? AND sync_id = ? AND staged_in = ?",
                    arguments: [marks.encoded, table.name, row[0] as String, row[1] as Int64])
            }
        }
        for (old, new) in renamed {
            try db.execute(
                sql: "UPDATE OR REPLACE \(StoreSchema.shadowTable) SET col = ? WHERE tbl = ? AND col = ?",
                arguments: [new, table.name, old])
        }
    }
}
