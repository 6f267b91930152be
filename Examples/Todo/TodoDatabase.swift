import FolderSync
import Foundation
import GRDB

/// The todo app's data, in one SQLite file: lists, items (to-one list), people, and assignments (an item's
/// to-many people, through a join table).
///
/// Lists and people have sync IDs derived from their names (`list:Groceries`), so two devices creating the same
/// list at once create the same row. An assignment's ID is derived from its item and person, so assigning twice
/// is one row and unassigning removes the row every device has.
struct TodoDatabase {
    /// What syncs, and how each table settles a delete against a concurrent edit: a deleted item stays deleted
    /// (the default), while an assignment follows the newer of the two, so that assigning someone again after
    /// an unassignment brings the same row back.
    static let tables = [
        SyncedTable("lists"),
        SyncedTable("items"),
        SyncedTable("people"),
        SyncedTable("assignments", deletePolicy: .lastWriterWins),
    ]

    let store: GRDBStore

    init(path: String) throws {
        store = try GRDBStore(path: path, tables: Self.tables) { db in
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS lists(id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL);
                    CREATE TABLE IF NOT EXISTS items(id TEXT PRIMARY KEY NOT NULL, list_id TEXT NOT NULL REFERENCES lists(id),
                        title TEXT NOT NULL, done INTEGER NOT NULL DEFAULT 0, priority INTEGER NOT NULL DEFAULT 0);
                    CREATE TABLE IF NOT EXISTS people(id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL);
                    CREATE TABLE IF NOT EXISTS assignments(id TEXT PRIMARY KEY NOT NULL,
                        item_id TEXT NOT NULL REFERENCES items(id), person_id TEXT NOT NULL REFERENCES people(id));
                    """)
        }
    }

    /// Adds an item to the list `list` (made if missing); returns the item's ID.
    func add(_ title: String, to list: String, priority: Int) throws -> String {
        let id = UUID().uuidString.lowercased()
        try store.database.write { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO lists(id, name) VALUES (?, ?)", arguments: ["list:" + list, list])
            try db.execute(
                sql: "INSERT INTO items(id, list_id, title, priority) VALUES (?, ?, ?, ?)",
                arguments: [id, "list:" + list, title, priority])
        }
        return id
    }

    /// Sets columns of the item whose ID is or starts with `id`.
    func update(_ id: String, title: String? = nil, done: Bool? = nil, priority: Int? = nil) throws {
        try store.database.write { db in
            let item = try Self.itemID(id, in: db)
            if let title { try db.execute(sql: "UPDATE items SET title = ? WHERE id = ?", arguments: [title, item]) }
            if let done { try db.execute(sql: "UPDATE items SET done = ? WHERE id = ?", arguments: [done, item]) }
            if let priority {
                try db.execute(sql: "UPDATE items SET priority = ? WHERE id = ?", arguments: [priority, item])
            }
        }
    }

    func assign(_ id: String, to person: String) throws {
        try store.database.write { db in
            let item = try Self.itemID(id, in: db)
            try db.execute(
                sql: "INSERT OR IGNORE INTO people(id, name) VALUES (?, ?)", arguments: ["person:" + person, person])
            try db.execute(
                sql: "INSERT OR IGNORE INTO assignments(id, item_id, person_id) VALUES (?, ?, ?)",
                arguments: ["\(item)/\(person)", item, "person:" + person])
        }
    }

    func unassign(_ id: String, from person: String) throws {
        try store.database.write { db in
            let item = try Self.itemID(id, in: db)
            try db.execute(sql: "DELETE FROM assignments WHERE id = ?", arguments: ["\(item)/\(person)"])
            guard db.changesCount > 0 else { throw TodoError("item \(item) is not assigned to \(person)") }
        }
    }

    /// Deletes the item and its assignments.
    func delete(_ id: String) throws {
        try store.database.write { db in
            let item = try Self.itemID(id, in: db)
            try db.execute(sql: "DELETE FROM assignments WHERE item_id = ?", arguments: [item])
            try db.execute(sql: "DELETE FROM items WHERE id = ?", arguments: [item])
        }
    }

    /// Every list by name, its items by priority (highest first) then title, each with its people by name.
    /// Assignments whose item or person has not arrived yet are left out, as a row whose list is missing is.
    func lists() throws -> [TodoList] {
        try store.database.read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT l.name AS list, i.id, i.title, i.done, i.priority,
                        (SELECT group_concat(name, char(10)) FROM (SELECT p.name FROM assignments a
                            JOIN people p ON p.id = a.person_id WHERE a.item_id = i.id ORDER BY p.name)) AS people
                    FROM lists l LEFT JOIN items i ON i.list_id = l.id
                    ORDER BY l.name, i.priority DESC, i.title, i.id
                    """)
            var lists: [TodoList] = []
            for row in rows {
                let name: String = row["list"]
                if lists.last?.name != name { lists.append(TodoList(name: name, items: [])) }
                guard let id: String = row["id"] else { continue }
                let people: String? = row["people"]
                lists[lists.count - 1].items.append(
                    TodoItem(
                        id: id, title: row["title"], done: row["done"], priority: row["priority"],
                        people: people.map { $0.split(separator: "\n").map(String.init) } ?? []))
            }
            return lists
        }
    }

    /// The one item whose ID is `id` or starts with it (the listing shows the first eight characters).
    private static func itemID(_ id: String, in db: Database) throws -> String {
        let matches = try String.fetchAll(
            db, sql: "SELECT id FROM items WHERE id = ? OR substr(id, 1, length(?)) = ? LIMIT 2",
            arguments: [id, id, id])
        switch matches.count {
        case 0: throw TodoError("no item with ID \(id)")
        case 1: return matches[0]
        default: throw TodoError("more than one item's ID starts with \(id): give more of it")
        }
    }
}

/// A list as `show` prints it.
struct TodoList: Codable, Equatable {
    var name: String
    var items: [TodoItem]
}

struct TodoItem: Codable, Equatable {
    var id: String
    var title: String
    var done: Bool
    var priority: Int
    var people: [String]
}

struct TodoError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
