import GRDB

/// Counting what pending change sets would delete, for the deletion fail-safe.
extension GRDBStore {
    @_spi(ModelAdapter) public func rowsDeleted(by changeSets: [ChangeStream]) throws -> [MassDeletion.Table] {
        try wrap("counting the rows a sync would delete") {
            try database.read { db in
                var deleted: [String: Set<String>] = [:]
                for changes in changeSets {
                    try changes { change in
                        guard change.kind == .delete, let table = tablesByName[change.table],
                            try rowExists(db, table: table, syncID: change.syncID)
                        else { return }
                        deleted[table.name, default: []].insert(change.syncID)
                    }
                }
                return try deleted.sorted { $0.key < $1.key }.map { name, rows in
                    let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(name.quotedDatabaseIdentifier)") ?? 0
                    return MassDeletion.Table(table: name, rowsDeleted: rows.count, rowCount: count)
                }
            }
        }
    }

    @_spi(ModelAdapter) public func hasTable(largerThan rowCount: Int) throws -> Bool {
        try wrap("counting the rows of the synced tables") {
            try database.read { db in
                // At most rowCount + 1 rows read per table, not the whole table as count(*) reads it.
                try tables.contains { table in
                    let counted = try Int.fetchOne(
                        db, sql: "SELECT count(*) FROM (SELECT 1 FROM \(table.name.quotedDatabaseIdentifier) LIMIT ?)",
                        arguments: [rowCount + 1])
                    return (counted ?? 0) > rowCount
                }
            }
        }
    }
}
