public import Foundation

/// A column value, in SQLite's storage classes, so values survive sync exactly as SQLite stored them.
public enum SyncValue: Hashable, Sendable {
    /// SQL `NULL`.
    case null
    /// A 64-bit signed integer (SQLite `INTEGER`).
    case integer(Int64)
    /// A double-precision float (SQLite `REAL`).
    case real(Double)
    /// UTF-8 text (SQLite `TEXT`).
    case text(String)
    /// Bytes stored as they are (SQLite `BLOB`).
    case blob(Data)
}

extension SyncValue: CustomStringConvertible {
    /// For people: `NULL`, `42`, `3.5`, `"text"` (quoted, the first 80 characters), `<12 bytes>`.
    public var description: String {
        switch self {
        case .null: "NULL"
        case .integer(let value): String(value)
        case .real(let value): String(value)
        case .text(let value): "\"" + (value.count > 80 ? value.prefix(80) + "…" : value) + "\""
        case .blob(let data): "<\(data.count) bytes>"
        }
    }
}

/// One column's new value and the hybrid timestamp of the write, its last-writer-wins register.
@_spi(ModelAdapter) @_spi(Tooling) public struct ColumnChange: Hashable, Sendable {
    /// The column's name in the synced table.
    public var column: String
    /// The value written.
    public var value: SyncValue
    /// When it was written: the newer timestamp (then client identifier) wins a merge.
    public var timestamp: HybridTimestamp

    /// A write of `value` to `column`, stamped `timestamp`.
    public init(column: String, value: SyncValue, timestamp: HybridTimestamp) {
        self.column = column
        self.value = value
        self.timestamp = timestamp
    }
}

/// One row's change, identified by its table and sync ID.
///
/// An insert carries every column, an update only the changed ones, a delete
/// none but its ``deletionTimestamp``. A change set never carries the same
/// (table, sync ID) twice: changes to one row are coalesced before they are written.
@_spi(ModelAdapter) @_spi(Tooling) public struct SyncChange: Hashable, Sendable {
    /// What happened to the row; the raw value is its code in change-set files.
    public enum Kind: UInt8, Sendable {
        /// The row was created.
        case insert = 1
        /// Some columns of an existing row changed.
        case update = 2
        /// The row was deleted.
        case delete = 3
    }

    /// Whether the row was inserted, updated or deleted.
    public var kind: Kind
    /// The synced table the row belongs to.
    public var table: String
    /// The row's sync ID: its identity on every replica, unlike its local rowid.
    public var syncID: String
    /// Insert: every column; update: the changed columns; delete: empty.
    public var columns: [ColumnChange]
    /// The time of the delete; `nil` for inserts and updates.
    public var deletionTimestamp: HybridTimestamp?

    /// A change of one row; pass `columns` for inserts and updates, `deletionTimestamp` for deletes.
    public init(
        kind: Kind, table: String, syncID: String, columns: [ColumnChange] = [],
        deletionTimestamp: HybridTimestamp? = nil
    ) {
        self.kind = kind
        self.table = table
        self.syncID = syncID
        self.columns = columns
        self.deletionTimestamp = deletionTimestamp
    }
}
