import FolderSync
import Foundation
import GRDB

/// The notes app's data: folders, notes (to-one folder), tags and note_tags (to-many), in one SQLite file.
///
/// Folders and tags use sync IDs derived from their names (`folder:Work`), so two devices creating the same
/// folder at once create the same row. Note–tag links use random IDs: tagging is an add-wins set, and
/// untagging removes every link that device has seen.
struct NotesDatabase {
    /// Folders and tags reuse the IDs derived from their names: their tombstones are kept, so a deleted one stays
    /// refused.
    static let tables = [
        SyncedTable("folders", reusesSyncIDs: true), SyncedTable("notes"), SyncedTable("tags", reusesSyncIDs: true),
        SyncedTable("note_tags"),
    ]

    let store: GRDBStore

    /// The app's schema, as its migrations build it. The first migration adopts files made before the app used a
    /// migrator (its tables already there).
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("notes") { db in
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS folders(id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL);
                    CREATE TABLE IF NOT EXISTS notes(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL DEFAULT '',
                        body TEXT NOT NULL DEFAULT '', folder_id TEXT REFERENCES folders(id));
                    CREATE TABLE IF NOT EXISTS tags(id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL);
                    CREATE TABLE IF NOT EXISTS note_tags(id TEXT PRIMARY KEY NOT NULL,
                        note_id TEXT NOT NULL REFERENCES notes(id), tag_id TEXT NOT NULL REFERENCES tags(id));
                    CREATE TABLE IF NOT EXISTS settings(key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
                    """)
        }
        return migrator
    }

    /// Opens this device's database as a pool: the interface (`notes app`) reads while a sync writes.
    init(path: String) throws {
        store = try GRDBStore(path: path, tables: Self.tables, connection: .pool, migrator: Self.migrator)
    }

    /// This installation's client identifier, made once and kept in the database.
    func clientIdentifier() throws -> String {
        try write("saving this device's identifier") { db in
            if let existing = try String.fetchOne(db, sql: "SELECT value FROM settings WHERE key = 'client'") {
                return existing
            }
            let identifier = UUID().uuidString
            try db.execute(sql: "INSERT INTO settings(key, value) VALUES ('client', ?)", arguments: [identifier])
            return identifier
        }
    }

    /// Keeps `identifier` as this installation's client identifier (after its identity turned out shared with a copy).
    func setClientIdentifier(_ identifier: String) throws {
        try store.database.write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO settings(key, value) VALUES ('client', ?)", arguments: [identifier])
        }
    }

    /// The device name to register with: `given` (then remembered), else the one remembered from an earlier run,
    /// else `fallback` (the host name, not remembered, so that a name given later still wins).
    func clientName(given: String?, fallback: String) throws -> String {
        try write("saving this device's name") { db in
            if let given {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO settings(key, value) VALUES ('clientName', ?)", arguments: [given])
                return given
            }
            return try String.fetchOne(db, sql: "SELECT value FROM settings WHERE key = 'clientName'") ?? fallback
        }
    }

    func add(_ text: String) throws -> String {
        let id = UUID().uuidString
        try write("adding the note") { db in
            try db.execute(
                sql: "INSERT INTO notes(id, title, body) VALUES (?, ?, ?)", arguments: [id, Self.title(of: text), text])
        }
        return id
    }

    func edit(_ id: String, _ text: String) throws {
        try write(note: id, "editing the note") { db in
            try db.execute(
                sql: "UPDATE notes SET title = ?, body = ? WHERE id = ?", arguments: [Self.title(of: text), text, id])
        }
    }

    func move(_ id: String, toFolder name: String) throws {
        try write(note: id, "moving the note") { db in
            let folder = "folder:" + name
            try db.execute(sql: "INSERT OR IGNORE INTO folders(id, name) VALUES (?, ?)", arguments: [folder, name])
            try db.execute(sql: "UPDATE notes SET folder_id = ? WHERE id = ?", arguments: [folder, id])
        }
    }

    func tag(_ id: String, _ name: String) throws {
        try write(note: id, "tagging the note") { db in
            let tag = "tag:" + name
            try db.execute(sql: "INSERT OR IGNORE INTO tags(id, name) VALUES (?, ?)", arguments: [tag, name])
            let linked =
                try Bool.fetchOne(
                    db, sql: "SELECT EXISTS (SELECT 1 FROM note_tags WHERE note_id = ? AND tag_id = ?)",
                    arguments: [id, tag]) ?? false
            if !linked {
                try db.execute(
                    sql: "INSERT INTO note_tags(id, note_id, tag_id) VALUES (?, ?, ?)",
                    arguments: [UUID().uuidString, id, tag])
            }
        }
    }

    /// Removes the tag; a note without it is an error, as a missing note is.
    func untag(_ id: String, _ name: String) throws {
        try write(note: id, "untagging the note") { db in
            try db.execute(
                sql: "DELETE FROM note_tags WHERE note_id = ? AND tag_id = ?", arguments: [id, "tag:" + name])
            guard db.changesCount > 0 else { throw NotesError("note \(id) has no tag \(name)") }
        }
    }

    func delete(_ id: String) throws {
        try write(note: id, "deleting the note") { db in
            try db.execute(sql: "DELETE FROM note_tags WHERE note_id = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM notes WHERE id = ?", arguments: [id])
        }
    }

    /// Every note, sorted by ID, with its folder's name and its sorted, distinct tags. `whole`: each note's whole
    /// text; otherwise a note over ``shownBytes`` shows its first line and its size, read without loading the rest
    /// (a 200 MB note costs a few pages, not 200 MB).
    func list(whole: Bool = true) throws -> [NoteListing] {
        try store.database.read { db in try Self.list(db, whole: whole) }
    }

    /// Every note in `db`, as ``list(whole:)`` gives them: what the interface observes.
    static func list(_ db: Database, whole: Bool = true) throws -> [NoteListing] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT n.id, \(whole ? "n.body" : "NULL") AS body, f.name AS folder,
                    (SELECT group_concat(name, char(10)) FROM (SELECT DISTINCT t.name FROM note_tags nt
                        JOIN tags t ON t.id = nt.tag_id WHERE nt.note_id = n.id ORDER BY t.name)) AS tags
                FROM notes n LEFT JOIN folders f ON f.id = n.folder_id ORDER BY n.id
                """
        ).map { row in
            let tags: String? = row["tags"]
            let id: String = row["id"]
            return NoteListing(
                id: id, text: whole ? row["body"] : try shownText(db, id: id), folder: row["folder"],
                tags: tags.map { $0.split(separator: "\n").map(String.init) } ?? [])
        }
    }

    /// Notes up to this size show whole in a listing.
    static let shownBytes = 4096

    /// A note's text as a listing shows it: whole up to ``shownBytes``, else its first line and its size.
    private static func shownText(_ db: Database, id: String) throws -> String {
        guard
            let (prefix, size) = try GRDBStore.valuePrefix(
                db, table: "notes", column: "body", key: id,
                maxBytes: shownBytes)
        else { return "" }
        guard size > prefix.count else { return String(decoding: prefix, as: UTF8.self) }
        let firstLine =
            prefix.split(separator: UInt8(ascii: "\n"), maxSplits: 1, omittingEmptySubsequences: false).first
            ?? prefix[...]
        return String(decoding: firstLine, as: UTF8.self) + " … (\(size) bytes)"
    }

    /// The titles of the notes whose IDs are `ids` (those still there), by ID.
    func titles(of ids: some Collection<String>) throws -> [String: String] {
        guard !ids.isEmpty else { return [:] }
        return try store.database.read { db in
            var titles: [String: String] = [:]
            for row in try Row.fetchAll(
                db, sql: "SELECT id, title FROM notes WHERE id IN (\(ids.map { _ in "?" }.joined(separator: ", ")))",
                arguments: StatementArguments(Array(ids)))
            {
                titles[row["id"]] = row["title"]
            }
            return titles
        }
    }

    /// A write to the note `id`, which must exist.
    private func write(note id: String, _ what: String, _ body: (Database) throws -> Void) throws {
        try write(what) { db in
            guard
                try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM notes WHERE id = ?)", arguments: [id]) == true
            else {
                throw NotesError("no note with ID \(id)")
            }
            try body(db)
        }
    }

    /// A write transaction; SQLite's errors become FolderSync's, naming the database (a full disk as localStoreFull).
    private func write<T>(_ what: String, _ body: (Database) throws -> T) throws -> T {
        do {
            return try store.database.write(body)
        } catch let error as DatabaseError {
            throw FolderSyncError.localStore(error, while: what, path: store.database.path)
        }
    }

    private static func title(of text: String) -> String {
        String(text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
    }
}

/// One note as `list` shows it.
struct NoteListing: Codable, Equatable, Sendable {
    var id: String
    var text: String
    var folder: String?
    var tags: [String]
}

struct NotesError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
