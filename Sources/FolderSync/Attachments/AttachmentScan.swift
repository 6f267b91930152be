import Foundation
import GRDB

/// Finds the attachments a remote file references, without a local store: what vacuum keeps.
enum AttachmentScan {
    /// The names of the attachments a change set references.
    static func names(inChangeSet url: URL, path: String) throws -> Set<String> {
        var names = Set<String>()
        try ChangeSetReader.forEachChange(at: url, path: path) { change in
            for column in change.columns {
                if case .blob(let data) = column.value, let reference = AttachmentReference(databaseValue: data) { names.insert(reference.sha256) }
            }
        }
        return names
    }

    /// The names of the attachments a whole store's snapshot references, in any column of any table.
    static func names(inSnapshot url: URL, path: String) throws -> Set<String> {
        do {
            var configuration = Configuration()
            configuration.readonly = true
            let snapshot = try DatabaseQueue(path: url.path, configuration: configuration)
            defer { try? snapshot.close() }
            return try snapshot.read { db in
                var names = Set<String>()
                let magic = Data(AttachmentReference.magic)
                for table in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'") {
                    for column in try db.columns(in: table) {
                        let name = column.name.quotedDatabaseIdentifier
                        let values = try Data.fetchCursor(db, sql: """
                            SELECT \(name) FROM \(table.quotedDatabaseIdentifier) WHERE typeof(\(name)) = 'blob' AND substr(\(name), 1, ?) = ?
                            """, arguments: [magic.count, magic])
                        while let value = try values.next() {
                            if let reference = AttachmentReference(databaseValue: value) { names.insert(reference.sha256) }
                        }
                    }
                }
                return names
            }
        } catch let error as DatabaseError {
            throw FolderSyncError(.corruptFile, "the whole store's snapshot cannot be read", path: path, underlying: error)
        }
    }
}
