public import FolderSync

/// The notes schema the simulator writes: folders, notes (to-one folder), tags, note_tags (to-many join rows).
///
/// A store factory for another adapter must create these tables with these columns (a text `id` primary key each), e.g.
/// in SQLite: `folders(id, name NOT NULL)`, `notes(id, title, body, folder_id → folders)`, `tags(id, name NOT NULL)`,
/// `note_tags(id, note_id → notes, tag_id → tags)`. Folders and tags have rows that every client may create (a default
/// folder, common tags): with a `NOT NULL` column, a replica that met one client's insert of such a row without the
/// values another client's later write supplied would refuse it.
public enum SimulatedNotes {
    /// The four tables, parents before children, each with the default delete policy (delete wins).
    public static let tables = tables(deletePolicy: .deleteWins)

    /// The four tables, parents before children, each with `deletePolicy`.
    public static func tables(deletePolicy: DeletePolicy) -> [InMemoryModelAdapter.Table] {
        [
            .init("folders", columns: ["name"], deletePolicy: deletePolicy, notNullColumns: ["name"]),
            .init(
                "notes", columns: ["title", "body", "folder_id"], references: ["folder_id": "folders"],
                deletePolicy: deletePolicy),
            .init("tags", columns: ["name"], deletePolicy: deletePolicy, notNullColumns: ["name"]),
            .init(
                "note_tags", columns: ["note_id", "tag_id"], references: ["note_id": "notes", "tag_id": "tags"],
                deletePolicy: deletePolicy),
        ]
    }

    /// Sync IDs every client may create on its own (a default folder, common tags): concurrent inserts of one row.
    static let sharedIDs: [(table: String, syncID: String)] = [
        ("folders", "folder-inbox"), ("tags", "tag-todo"), ("tags", "tag-done"),
    ]
}
