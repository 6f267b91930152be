/// A table whose rows FolderSync synchronizes.
///
/// The table needs a text primary key that identifies each row on every
/// device (its sync ID, a UUID by convention). Relationships are plain SQLite:
/// a to-one is a foreign-key column holding the other row's sync ID; a
/// to-many is a join table, itself synced, whose rows are added and removed.
/// A sync ID is never reused once its row is deleted.
public struct SyncedTable: Sendable, Hashable {
    public var name: String
    /// The text primary-key column holding the sync ID.
    public var syncIDColumn: String

    public init(_ name: String, syncIDColumn: String = "id") {
        self.name = name
        self.syncIDColumn = syncIDColumn
    }
}
