public import Foundation
public import GRDB
import GRDBSQLite

/// Large values in the app's own columns: read a prefix without loading the rest.
extension GRDBStore {
    /// The first `maxBytes` bytes of a `TEXT` or `BLOB` value and the value's whole size, read through SQLite's
    /// incremental I/O: a 200 MB note's first line costs a few pages, where a `SELECT` of the column (or of `substr`
    /// of it) loads the whole value into memory first. `nil` when the row is missing or the value is neither text nor
    /// a blob. The table must have a rowid (a `WITHOUT ROWID` table is read with a plain `SELECT`).
    ///
    /// - Parameters:
    ///   - db: A connection to the document (``GRDBStore/database``, in a read).
    ///   - table: The table.
    ///   - column: The column of the value.
    ///   - keyColumn: The row's primary key column.
    ///   - key: The row's primary key.
    ///   - maxBytes: How many bytes of the value to read at most.
    /// - Throws: `DatabaseError` from SQLite.
    public static func valuePrefix(
        _ db: Database, table: String, column: String, keyColumn: String = "id",
        key: some DatabaseValueConvertible, maxBytes: Int
    ) throws
        -> (prefix: Data, byteCount: Int)?
    {
        let quotedTable = table.quotedDatabaseIdentifier
        let quotedColumn = column.quotedDatabaseIdentifier
        let withoutRowID =
            try Bool.fetchOne(
                db, sql: "SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?",
                arguments: [table]) == true
        if withoutRowID {
            return try fallbackPrefix(
                db, table: quotedTable, column: quotedColumn, keyColumn: keyColumn, key: key,
                maxBytes: maxBytes)
        }
        guard
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT rowid, typeof(\(quotedColumn)) FROM \(quotedTable) WHERE \(keyColumn.quotedDatabaseIdentifier) = ?
                    """, arguments: [key]), ["text", "blob"].contains(row[1] as String)
        else { return nil }
        let rowid: Int64 = row[0]
        var blob: OpaquePointer?
        defer { sqlite3_blob_close(blob) }
        let opened = sqlite3_blob_open(db.sqliteConnection, "main", table, column, rowid, 0, &blob)
        guard opened == SQLITE_OK, let blob else {
            throw DatabaseError(resultCode: ResultCode(rawValue: opened), message: "cannot read \(table).\(column)")
        }
        let total = Int(sqlite3_blob_bytes(blob))
        let count = min(total, max(0, maxBytes))
        var prefix = Data(count: count)
        let read = prefix.withUnsafeMutableBytes { bytes in
            count == 0 ? SQLITE_OK : sqlite3_blob_read(blob, bytes.baseAddress, Int32(count), 0)
        }
        guard read == SQLITE_OK else {
            throw DatabaseError(resultCode: ResultCode(rawValue: read), message: "cannot read \(table).\(column)")
        }
        return (prefix, total)
    }

    /// A table without a rowid has no incremental I/O: the value is read whole.
    private static func fallbackPrefix(
        _ db: Database, table: String, column: String, keyColumn: String,
        key: some DatabaseValueConvertible, maxBytes: Int
    ) throws
        -> (prefix: Data, byteCount: Int)?
    {
        guard
            let value = try DatabaseValue.fetchOne(
                db,
                sql: """
                    SELECT \(column) FROM \(table) WHERE \(keyColumn.quotedDatabaseIdentifier) = ?
                    """, arguments: [key])
        else { return nil }
        let bytes: Data
        switch value.storage {
        case .string(let text): bytes = Data(text.utf8)
        case .blob(let data): bytes = data
        default: return nil
        }
        return (bytes.prefix(maxBytes), bytes.count)
    }
}
