import Foundation
import GRDB

extension GRDBStore: LargeValueRestoring {
    func storeLargeValues(inSnapshot url: URL, threshold: Int?, into local: LocalAttachmentStore) throws
        -> [AttachmentReference]
    {
        try wrap("moving large values out of a snapshot") {
            let snapshot = try DatabaseQueue(path: url.path)
            defer { try? snapshot.close() }
            let found: [AttachmentReference] = try snapshot.writeWithoutTransaction { db in
                if let threshold {
                    try db.inTransaction {
                        for (table, column, key) in blobColumns {
                            let (name, quotedTable) = (column.quotedDatabaseIdentifier, table.quotedDatabaseIdentifier)
                            // Keys first, then one value at a time: a snapshot's large values together may not fit in
                            // memory.
                            let keys = try DatabaseValue.fetchAll(
                                db,
                                sql: """
                                    SELECT \(key) FROM \(quotedTable) WHERE typeof(\(name)) = 'blob' AND length(\(name)) >= ?
                                    """, arguments: [threshold])
                            for row in keys {
                                guard
                                    let value = try Data.fetchOne(
                                        db, sql: "SELECT \(name) FROM \(quotedTable) WHERE \(key) = ?", arguments: [row]
                                    ),
                                    !AttachmentReference.looksLikeReference(value)
                                else { continue }
                                try db.execute(
                                    sql: "UPDATE \(quotedTable) SET \(name) = ? WHERE \(key) = ?",
                                    arguments: [try local.add(value: value).databaseValue, row])
                            }
                        }
                        return .commit
                    }
                    try db.execute(sql: "VACUUM")
                }
                return try self.references(db).map(\.reference)
            }
            return Array(Set(found))
        }
    }

    func restoreLargeValues(from local: LocalAttachmentStore) throws {
        try wrap("restoring large values") {
            try writeWithoutCapture { db in
                for found in try references(db) where found.reference.isInlineValue && local.contains(found.reference) {
                    let (table, column, key) = found.column
                    try db.execute(
                        sql:
                            "UPDATE \(table.quotedDatabaseIdentifier) SET \(column.quotedDatabaseIdentifier) = ? WHERE \(key) = ?",
                        arguments: [try LocalFiles.read(local.url(for: found.reference.sha256)), found.syncID])
                }
            }
        }
    }

    /// Every synced column, with its table and the table's sync-ID column (tables may have no rowid).
    private var blobColumns: [(table: String, column: String, key: String)] {
        tables.flatMap { table in
            (columns[table.name] ?? []).map { (table.name, $0, table.syncIDColumn.quotedDatabaseIdentifier) }
        }
    }

    /// The attachment references in synced columns, found by their magic without reading other values.
    private func references(_ db: Database) throws -> [(
        column: (String, String, String), syncID: DatabaseValue, reference: AttachmentReference
    )] {
        var found: [(column: (String, String, String), syncID: DatabaseValue, reference: AttachmentReference)] = []
        let magic = Data(AttachmentReference.magic)
        for (table, column, key) in blobColumns {
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT \(key), \(column.quotedDatabaseIdentifier) FROM \(table.quotedDatabaseIdentifier)
                    WHERE typeof(\(column.quotedDatabaseIdentifier)) = 'blob' AND substr(\(column.quotedDatabaseIdentifier), 1, ?) = ?
                    """, arguments: [magic.count, magic])
            while let row = try rows.next() {
                if let reference = AttachmentReference(databaseValue: row[1]) {
                    found.append(((table, column, key), row[0], reference))
                }
            }
        }
        return found
    }
}
