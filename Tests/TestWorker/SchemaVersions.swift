import FolderSync
import Foundation
import GRDB

/// `schema`: one run of a small notes app built at schema version 1 to 4, as the article "Changing a synced
/// schema" evolves it, so that a test runs old and new versions side by side on one folder, each step a process:
///
/// 1. `notes(id, body)`;
/// 2. adds the column `pinned` (a migration that adds a column);
/// 3. adds the synced table `tags` (a migration that creates a table, and the table listed as synced);
/// 4. renames `notes.body` to `text` (a migration that renames it, and the rename declared to the store).
///
/// `schema --version N --db PATH --root FOLDER --client ID --action ACTION [--id ID] [--value TEXT]`, actions:
/// `write` (the note `--id` gets `--value` as its text), `pin`, `tag` (`--value` names the tag), `sync` (prints
/// `applied N parked M sent K`), `dump` (prints every row, one per line, the same on devices that converged).
enum SchemaVersions {
    /// The app's migrator at `version`: its migrations up to that one.
    static func migrator(version: Int) -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("notes") { db in
            try db.create(table: "notes") { t in
                t.primaryKey("id", .text)
                t.column("body", .text).notNull().defaults(to: "")
            }
        }
        if version >= 2 {
            migrator.registerMigration("pinned") { db in
                try db.alter(table: "notes") { t in t.add(column: "pinned", .integer).notNull().defaults(to: 0) }
            }
        }
        if version >= 3 {
            migrator.registerMigration("tags") { db in
                try db.create(table: "tags") { t in
                    t.primaryKey("id", .text)
                    t.column("note_id", .text).notNull()
                    t.column("name", .text).notNull()
                }
            }
        }
        if version >= 4 {
            migrator.registerMigration("text") { db in
                try db.alter(table: "notes") { t in t.rename(column: "body", to: "text") }
            }
        }
        return migrator
    }

    /// The synced tables at `version`.
    static func tables(version: Int) -> [SyncedTable] {
        [SyncedTable("notes", renamedColumns: version >= 4 ? ["body": "text"] : [:])]
            + (version >= 3 ? [SyncedTable("tags")] : [])
    }

    static func run(_ option: @Sendable (String) -> String, _ options: [String: String]) async throws {
        guard let version = Int(option("version")), (1...4).contains(version) else { fail("--version is 1 to 4") }
        let store = try GRDBStore(
            path: option("db"), tables: tables(version: version), schemaVersion: version,
            connection: .pool, migrator: migrator(version: version))
        let text = version >= 4 ? "text" : "body"
        switch option("action") {
        case "write":
            try await store.database.write { db in
                try db.execute(
                    sql:
                        "INSERT INTO notes(id, \(text)) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET \(text) = excluded.\(text)",
                    arguments: [option("id"), option("value")])
            }
        case "pin":
            try await store.database.write {
                try $0.execute(sql: "UPDATE notes SET pinned = 1 WHERE id = ?", arguments: [option("id")])
            }
        case "tag":
            try await store.database.write { db in
                try db.execute(
                    sql: "INSERT INTO tags(id, note_id, name) VALUES (?, ?, ?)",
                    arguments: [option("id") + "/" + option("value"), option("id"), option("value")])
            }
        case "sync":
            let report = try await register(store: store).synchronize()
            print("applied \(report.changesApplied) parked \(report.parkedChangeSets.count) sent \(report.changesSent)")
        case "dump":
            try await store.database.read { db in
                for row in try Row.fetchAll(db, sql: "SELECT * FROM notes ORDER BY id") { print("notes \(row)") }
                if version >= 3 {
                    for row in try Row.fetchAll(db, sql: "SELECT * FROM tags ORDER BY id") { print("tags \(row)") }
                }
            }
        default:
            fail("unknown action \(option("action"))")
        }
    }
}
