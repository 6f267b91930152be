/// One column of one row: the unit of last-writer-wins merging.
public struct ColumnKey: Hashable, Sendable, CustomStringConvertible {
    /// The synced table's name.
    public var table: String
    /// The row's sync ID.
    public var syncID: String
    /// The column's name.
    public var column: String

    /// The register of `column` in the row of `table` whose sync ID is `syncID`.
    public init(table: String, syncID: String, column: String) {
        self.table = table
        self.syncID = syncID
        self.column = column
    }

    public var description: String { "\(table)[\(syncID)].\(column)" }
}
