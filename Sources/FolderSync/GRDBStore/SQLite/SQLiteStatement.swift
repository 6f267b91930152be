import Foundation
import GRDB
import GRDBSQLite

/// A statement prepared on the store's connection and driven through SQLite's C API, for the statements a bulk
/// apply runs once per change.
///
/// GRDB's `StatementArguments` and `Row` cost allocations, existential boxes and dictionary work per call; for a
/// change set of 100,000 new rows that was most of the apply's CPU. These bind values straight from the decoded change.
/// Use only inside the `Database` access they were made in.
final class SQLiteStatement {
    private var handle: OpaquePointer?
    private let connection: OpaquePointer?
    let sql: String

    init(_ db: Database, sql: String) throws {
        self.sql = sql
        connection = db.sqliteConnection
        let code = sqlite3_prepare_v3(connection, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &handle, nil)
        guard code == SQLITE_OK else { throw error(code) }
    }

    deinit { sqlite3_finalize(handle) }

    /// SQLite copies what is bound (`SQLITE_TRANSIENT`): the values need not outlive the call.
    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

    func bind(_ text: String, at index: Int32) {
        var text = text
        text.withUTF8 { bytes in
            guard let base = bytes.baseAddress, !bytes.isEmpty else {
                // An empty string, not NULL (which a NULL pointer would bind).
                _ = sqlite3_bind_text(handle, index, "", 0, Self.transient)
                return
            }
            _ = sqlite3_bind_text(
                handle, index, UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self), Int32(bytes.count),
                Self.transient)
        }
    }

    func bind(_ data: Data, at index: Int32) {
        data.withUnsafeBytes { bindBlob($0, at: index) }
    }

    func bind(_ bytes: [UInt8], at index: Int32) {
        bytes.withUnsafeBytes { bindBlob($0, at: index) }
    }

    private func bindBlob(_ bytes: UnsafeRawBufferPointer, at index: Int32) {
        // A non-NULL pointer even for an empty blob: a NULL one would bind SQL NULL.
        _ = sqlite3_bind_blob(
            handle, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(bytes.count), Self.transient)
    }

    func bind(_ value: SyncValue, at index: Int32) {
        switch value {
        case .null: sqlite3_bind_null(handle, index)
        case .integer(let value): sqlite3_bind_int64(handle, index, value)
        case .real(let value): sqlite3_bind_double(handle, index, value)
        case .text(let value): bind(value, at: index)
        case .blob(let value): bind(value, at: index)
        }
    }

    /// Binds `count` values (`value(0)` …) to the parameters from `first` on, without SQLite copying their bytes,
    /// and runs `body`, which must run the statement to its end (``execute()`` resets it), while those bytes stay
    /// pinned. A bulk apply binds a dozen values per row; SQLite's copy of each was an allocation and a memcpy.
    func withValuesBound<T>(count: Int, from first: Int32, _ value: (Int) -> SyncValue, _ body: () throws -> T) throws
        -> T
    {
        func bind(from position: Int) throws -> T {
            guard position < count else { return try body() }
            let index = first + Int32(position)
            switch value(position) {
            case .text(var text) where !text.isEmpty:
                return try text.withUTF8 { bytes in
                    _ = sqlite3_bind_text(
                        handle, index, UnsafeRawPointer(bytes.baseAddress!).assumingMemoryBound(to: CChar.self),
                        Int32(bytes.count), nil)
                    return try bind(from: position + 1)
                }
            case .blob(let data) where !data.isEmpty:
                return try data.withUnsafeBytes { bytes in
                    _ = sqlite3_bind_blob(handle, index, bytes.baseAddress!, Int32(bytes.count), nil)
                    return try bind(from: position + 1)
                }
            case let other:
                self.bind(other, at: index)  // a number, NULL or an empty value: nothing to pin
                return try bind(from: position + 1)
            }
        }
        return try bind(from: 0)
    }

    /// Runs the statement to its end (no row expected), then makes it ready for new bindings.
    func execute() throws {
        defer { reset() }
        let code = sqlite3_step(handle)
        guard code == SQLITE_DONE || code == SQLITE_ROW else { throw error(code) }
    }

    /// Runs the statement to its end (no row expected) and returns how many rows it inserted, updated or deleted.
    func executeCountingChanges() throws -> Int {
        try execute()
        return Int(sqlite3_changes(connection))
    }

    /// The integer in `column` of the current row.
    func integer(at column: Int32) -> Int64 {
        sqlite3_column_int64(handle, column)
    }

    /// Steps to the next row: true when there is one. ``reset()`` when done with the rows.
    func step() throws -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw error(code)
        }
    }

    /// Column `column` of the current row.
    func value(at column: Int32) -> SyncValue {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, column))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, column))
        case SQLITE_TEXT: return .text(text(at: column))
        case SQLITE_BLOB: return .blob(data(at: column) ?? Data())
        default: return .null
        }
    }

    /// Column `column` of the current row as text (its bytes as SQLite stores them, NUL included).
    func text(at column: Int32) -> String {
        guard let text = sqlite3_column_text(handle, column) else { return "" }
        return String(
            decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, column))), as: UTF8.self)
    }

    /// Column `column` of the current row as bytes, `nil` for NULL.
    func data(at column: Int32) -> Data? {
        guard sqlite3_column_type(handle, column) != SQLITE_NULL else { return nil }
        guard let bytes = sqlite3_column_blob(handle, column) else { return Data() }
        return Data(bytes: bytes, count: Int(sqlite3_column_bytes(handle, column)))
    }

    /// Runs `body` on the bytes of `column` of the current row (empty for NULL), without copying them.
    func withBytes<T>(at column: Int32, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        let start = sqlite3_column_blob(handle, column)
        return try body(
            UnsafeRawBufferPointer(start: start, count: start == nil ? 0 : Int(sqlite3_column_bytes(handle, column))))
    }

    /// Makes the statement ready to run again, with no value bound.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    private func error(_ code: Int32) -> DatabaseError {
        DatabaseError(
            resultCode: ResultCode(rawValue: code), message: connection.map { String(cString: sqlite3_errmsg($0)) },
            sql: sql)
    }
}
