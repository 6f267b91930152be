/// A table whose rows FolderSync synchronizes.
///
/// The table needs a text primary key that identifies each row on every
/// device (its sync ID, a UUID by convention). Relationships are plain SQLite:
/// a to-one is a foreign-key column holding the other row's sync ID; a
/// to-many is a join table, itself synced, whose rows are added and removed.
public struct SyncedTable: Sendable, Hashable {
    /// The table's name in the SQLite schema; change sets name it the same on every device.
    public var name: String
    /// The text primary-key column holding the sync ID.
    public var syncIDColumn: String
    /// What happens when one client deletes a row that another updates concurrently.
    public var deletePolicy: DeletePolicy
    /// Columns this version of the app renamed, old name to new: a change set written by an older version (which
    /// names the old column) changes the new one, and the store's own record of a renamed column follows it when
    /// the app's migration renames it. Keep an entry while older versions may still publish; never list a name
    /// the table has as a column. See <doc:ChangingASyncedSchema>.
    public var renamedColumns: [String: String]
    /// Whether the app may insert a deleted row's sync ID again: IDs derived from content (a folder's name), not
    /// random UUIDs. Under ``DeletePolicy/deleteWins`` such a table keeps its tombstones for ever, so that every
    /// device keeps refusing a deleted ID; otherwise tombstones are collected once no device can need them
    /// (<doc:TombstoneCollection>), after which a deleted ID is no longer refused. Under
    /// ``DeletePolicy/lastWriterWins`` it changes nothing: inserting a deleted ID again is a newer write.
    public var reusesSyncIDs: Bool

    /// A synced table.
    /// - Parameters:
    ///   - name: The table's name.
    ///   - syncIDColumn: Its text primary-key column holding the sync ID; `id` by default.
    ///   - deletePolicy: How a delete settles against a concurrent update; delete wins by default.
    ///   - renamedColumns: Columns renamed by this version of the app, old name to new (``renamedColumns``).
    ///   - reusesSyncIDs: Whether the app may insert a deleted row's sync ID again (``reusesSyncIDs``); no by default.
    public init(
        _ name: String, syncIDColumn: String = "id", deletePolicy: DeletePolicy = .deleteWins,
        renamedColumns: [String: String] = [:], reusesSyncIDs: Bool = false
    ) {
        self.name = name
        self.syncIDColumn = syncIDColumn
        self.deletePolicy = deletePolicy
        self.renamedColumns = renamedColumns
        self.reusesSyncIDs = reusesSyncIDs
    }

    /// Whether the table's tombstones are collected once stable: all but the delete-wins tables whose IDs are reused.
    var collectsTombstones: Bool { deletePolicy == .lastWriterWins || !reusesSyncIDs }
}
