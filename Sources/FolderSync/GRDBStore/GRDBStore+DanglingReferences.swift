import Foundation
import GRDB

/// After a change set is applied: the rows it left pointing at nothing (a foreign key whose parent row is missing),
/// reported as warnings, never refused (a parent may arrive later, or was deleted concurrently).
///
/// Only the rows the set touched are looked at: those it wrote, and those whose parent it deleted.
/// `PRAGMA foreign_key_check` of every table the set touched read the whole table at every set applied
/// (35 ms per set at 200,000 notes), and reported the same old dangling rows again each time.
extension GRDBStore {
    /// The rows one change set wrote and deleted, by table: at most one more than ``rowByRowCheckLimit`` of each,
    /// since a table with more is checked whole (a set of 100,000 IDs was hashed for nothing).
    struct TouchedRows {
        var written: [String: Set<String>] = [:]
        var deleted: [String: Set<String>] = [:]

        mutating func note(_ change: SyncChange) {
            if change.kind == .delete {
                Self.note(change.syncID, in: &deleted[change.table, default: []])
            } else {
                Self.note(change.syncID, in: &written[change.table, default: []])
            }
        }

        private static func note(_ syncID: String, in rows: inout Set<String>) {
            if rows.count <= GRDBStore.rowByRowCheckLimit { rows.insert(syncID) }
        }
    }

    /// One foreign key of a synced table: its columns and the parent's (the parent's primary key when not named).
    struct ForeignKey {
        var parent: String
        var columns: [String]
        var parentColumns: [String]?
    }

    /// Above this many rows of one table, the table is checked whole: one pass costs less than a query per row.
    static let rowByRowCheckLimit = 256

    func danglingReferences(_ db: Database, _ touched: TouchedRows) throws -> [SyncWarning] {
        let keys = try tables.reduce(into: [String: [ForeignKey]]()) { keys, table in
            keys[table.name] = try foreignKeys(db, of: table.name)
        }
        var found = Set<Dangling>()
        var checkedWhole = Set<String>()
        func checkWhole(_ table: String) throws {
            guard checkedWhole.insert(table).inserted else { return }
            found.formUnion(try wholeTableCheck(db, table))
        }
        for (name, rows) in touched.written {
            guard let table = tablesByName[name], let foreign = keys[name], !foreign.isEmpty else { continue }
            if rows.count > Self.rowByRowCheckLimit || foreign.contains(where: { $0.parentColumns == nil }) {
                try checkWhole(name)
                continue
            }
            for key in foreign {
                let parentColumns = key.parentColumns!
                let sql = """
                    SELECT 1 FROM \(name.quotedDatabaseIdentifier) c
                    WHERE c.\(table.syncIDColumn.quotedDatabaseIdentifier) = ?
                      AND \(key.columns.map { "c.\($0.quotedDatabaseIdentifier) IS NOT NULL" }.joined(separator: " AND "))
                      AND NOT EXISTS (SELECT 1 FROM \(key.parent.quotedDatabaseIdentifier) p
                                      WHERE \(zip(parentColumns, key.columns).map { "p.\($0.quotedDatabaseIdentifier) = c.\($1.quotedDatabaseIdentifier)" }.joined(separator: " AND ")))
                    """
                let statement = try db.cachedStatement(sql: sql)
                for syncID in rows {
                    if try Bool.fetchOne(statement, arguments: [syncID]) == true {
                        found.insert(Dangling(table: name, syncID: syncID, parent: key.parent))
                    }
                }
            }
        }
        for (parentName, rows) in touched.deleted {
            guard let parent = tablesByName[parentName] else { continue }
            for (name, foreign) in keys {
                guard let child = tablesByName[name] else { continue }
                for key in foreign where key.parent.caseInsensitiveCompare(parentName) == .orderedSame {
                    // Children found by the deleted sync IDs when the key refers to the sync ID; otherwise the child
                    // table is checked whole (the deleted rows' other columns are gone).
                    guard key.columns.count == 1, key.parentColumns == [parent.syncIDColumn],
                        rows.count <= Self.rowByRowCheckLimit
                    else {
                        try checkWhole(name)
                        continue
                    }
                    let column = key.columns[0].quotedDatabaseIdentifier
                    let statement = try db.cachedStatement(
                        sql: """
                            SELECT c.\(child.syncIDColumn.quotedDatabaseIdentifier) FROM \(name.quotedDatabaseIdentifier) c
                            WHERE c.\(column) = ?
                              AND NOT EXISTS (SELECT 1 FROM \(parentName.quotedDatabaseIdentifier) p
                                              WHERE p.\(parent.syncIDColumn.quotedDatabaseIdentifier) = c.\(column))
                            """)
                    for syncID in rows {
                        for childID in try String.fetchAll(statement, arguments: [syncID]) {
                            found.insert(Dangling(table: name, syncID: childID, parent: key.parent))
                        }
                    }
                }
            }
        }
        return found.sorted { ($0.table, $0.syncID ?? "", $0.parent) < ($1.table, $1.syncID ?? "", $1.parent) }.map {
            dangling in
            SyncWarning(
                kind: .danglingReference,
                message: "\(dangling.table) \(dangling.syncID ?? "?") refers to a missing row of \(dangling.parent)",
                table: dangling.table, syncID: dangling.syncID)
        }
    }

    /// One row left pointing at nothing.
    struct Dangling: Hashable {
        var table: String
        var syncID: String?
        var parent: String
    }

    /// The foreign keys of `table`, each with its columns in order. The parent's columns are `nil` when the key
    /// names none and the parent's primary key cannot be read as columns (then the table is checked whole).
    private func foreignKeys(_ db: Database, of table: String) throws -> [ForeignKey] {
        var byID: [Int: (parent: String, columns: [(Int, String, String?)])] = [:]
        for row in try Row.fetchAll(db, sql: "PRAGMA foreign_key_list(\(table.quotedDatabaseIdentifier))") {
            let id: Int = row["id"]
            let sequence: Int = row["seq"]
            let parent: String = row["table"]
            let column: String = row["from"]
            let parentColumn: String? = row["to"]
            byID[id, default: (parent, [])].columns.append((sequence, column, parentColumn))
        }
        return try byID.keys.sorted().map { id in
            let (parent, columns) = byID[id]!
            let ordered = columns.sorted { $0.0 < $1.0 }
            var parentColumns: [String]? = ordered.map(\.2).contains(nil) ? nil : ordered.map { $0.2! }
            if parentColumns == nil {
                let primaryKey = try Row.fetchAll(db, sql: "PRAGMA table_info(\(parent.quotedDatabaseIdentifier))")
                    .filter { ($0["pk"] as Int) > 0 }.sorted { ($0["pk"] as Int) < ($1["pk"] as Int) }.map {
                        $0["name"] as String
                    }
                parentColumns = primaryKey.count == ordered.count ? primaryKey : nil
            }
            return ForeignKey(parent: parent, columns: ordered.map(\.1), parentColumns: parentColumns)
        }
    }

    /// Every row of `table` pointing at nothing, by SQLite's own check of the whole table.
    private func wholeTableCheck(_ db: Database, _ name: String) throws -> [Dangling] {
        guard let table = tablesByName[name] else { return [] }
        return try Row.fetchAll(db, sql: "PRAGMA foreign_key_check(\(name.quotedDatabaseIdentifier))").map { row in
            let rowid: Int64? = row[1]
            let syncID = try rowid.flatMap {
                try String.fetchOne(
                    db,
                    sql:
                        "SELECT \(table.syncIDColumn.quotedDatabaseIdentifier) FROM \(name.quotedDatabaseIdentifier) WHERE rowid = ?",
                    arguments: [$0])
            }
            return Dangling(table: name, syncID: syncID, parent: row[2])
        }
    }
}
