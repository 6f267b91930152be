public import Foundation

/// A column value, in SQLite's storage classes, so values survive sync exactly as SQLite stored them.
public enum SyncValue: Hashable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)
}

/// One column's new value and the hybrid timestamp of the write, its last-writer-wins register.
public struct ColumnChange: Hashable, Sendable {
    public var column: String
    public var value: SyncValue
    public var timestamp: HybridTimestamp

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
public struct SyncChange: Hashable, Sendable {
    public enum Kind: UInt8, Sendable {
        case insert = 1
        case update = 2
        case delete = 3
    }

    public var kind: Kind
    public var table: String
    public var syncID: String
    /// Insert: every column; update: the changed columns; delete: empty.
    public var columns: [ColumnChange]
    /// The time of the delete; `nil` for inserts and updates.
    public var deletionTimestamp: HybridTimestamp?

    public init(kind: Kind, table: String, syncID: String, columns: [ColumnChange] = [], deletionTimestamp: HybridTimestamp? = nil) {
        self.kind = kind
        self.table = table
        self.syncID = syncID
        self.columns = columns
        self.deletionTimestamp = deletionTimestamp
    }
}
