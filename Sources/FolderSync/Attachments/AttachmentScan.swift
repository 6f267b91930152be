import Foundation
import GRDB

/// Finds the attachments a change set or a whole store references, with the row and column holding each, without
/// a local store: what sync fetches and reports gone, and what vacuum keeps.
enum AttachmentScan {
    /// Each attachment a change set references, with the columns that reference it, in first-seen order.
    static func references(inChangeSet url: URL, path: String) throws -> [(AttachmentReference, [ColumnKey])] {
        var order: [AttachmentReference] = []
        var keys: [AttachmentReference: [ColumnKey]] = [:]
        // Only blob values can be references: the rest of each record is skipped, not decoded.
        try ChangeSetReader.forEachChange(at: url, path: path, selecting: .blobValues) { change in
            for column in change.columns {
                guard case .blob(let data) = column.value, let reference = AttachmentReference(databaseValue: data) else { continue }
                if keys[reference] == nil { order.append(reference) }
                keys[reference, default: []].append(ColumnKey(table: change.table, syncID: change.syncID, column: column.column))
            }
        }
        return order.map { ($0, keys[$0]!) }
    }

    /// Every attachment reference in a whole store's snapshot, in any column of any table (merge metadata
    /// included), with its table's primary key as the row; found by the references' magic, other values unread.
    static func references(inSnapshot url: URL, path: String) throws -> [(ColumnKey, AttachmentReference)] {
        do {
            var configuration = Configuration()
            configuration.readonly = true
            let snapshot = try DatabaseQueue(path: url.path, configuration: configuration)
            defer { try? snapshot.close() }
            return try snapshot.read { db in
                var found: [(ColumnKey, AttachmentReference)] = []
                let magic = Data(AttachmentReference.magic)
                for table in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'") {
                    let row = try db.primaryKey(table).columns.map(\.quotedDatabaseIdentifier).joined(separator: " || '/' || ")
                    for column in try db.columns(in: table) {
                        let name = column.name.quotedDatabaseIdentifier
                        let rows = try Row.fetchCursor(db, sql: """
                            SELECT \(row), \(name) FROM \(table.quotedDatabaseIdentifier)
                            WHERE typeof(\(name)) = 'blob' AND substr(\(name), 1, ?) = ?
                            """, arguments: [magic.count, magic])
                        while let values = try rows.next() {
                            guard let reference = AttachmentReference(databaseValue: values[1]) else { continue }
                            let syncID = String.fromDatabaseValue(values[0]) ?? (values[0] as DatabaseValue).description
                            found.append((ColumnKey(table: table, syncID: syncID, column: column.name), reference))
                        }
                    }
                }
                return found
            }
        } catch let error as DatabaseError {
            throw FolderSyncError(.corruptFile, "the whole store's snapshot cannot be read", path: path, underlying: error)
        }
    }
}
