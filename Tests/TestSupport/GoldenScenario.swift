import Foundation
import GRDB

@_spi(Tooling) @_spi(ModelAdapter) @testable import FolderSync

/// The store every golden local store and whole store holds, driven through the adapter API as a sync drives
/// it. The same steps as the generator run against earlier commits (see the fixtures' README), so that every
/// bookkeeping version and whole-store format holds the same content.
enum GoldenScenario {
    /// The attachment reference the scenario's row `n6` holds (a reference only: no attachment file goes with it).
    static let reference = AttachmentReference(
        sha256: String(repeating: "ab", count: 32), size: 70_000, metadata: ["name": "photo.jpg"])

    static func header(
        _ client: String, _ sequence: Int64, _ id: String, count: Int, dependencies: [String: Int64] = [:]
    ) -> ChangeSetHeader {
        ChangeSetHeader(
            changeSetIdentifier: id, clientIdentifier: client, sequence: sequence, schemaVersion: 1,
            changeCount: count, createdAt: Golden.date, dependencies: dependencies)
    }

    static func applyRemote(_ store: GRDBStore, _ header: ChangeSetHeader, _ changes: [SyncChange]) throws {
        let outcome = try store.apply(
            header, localClient: Golden.clientA, changes: { body in for change in changes { try body(change) } },
            resolutions: [:])
        precondition(outcome.applied, "set not applied")
    }

    @discardableResult
    static func stage(_ store: GRDBStore, sequence: Int64) throws -> [SyncChange] {
        var emitted: [SyncChange] = []
        let count = try store.stageChanges(sequence: sequence, emit: { emitted.append($0) }, seal: { sequence })
        precondition(count == emitted.count && count > 0)
        return emitted
    }

    static func populate(_ store: GRDBStore, unpublished: Bool) throws {
        let base = Golden.baseMilliseconds
        func ts(_ ms: UInt64, _ counter: UInt16 = 0) -> HybridTimestamp {
            HybridTimestamp(milliseconds: ms, counter: counter)
        }
        try store.database.write { db in
            try db.execute(sql: "INSERT INTO notes VALUES ('n1', 'Hello', -2, 1.5, x'0102')")
            try db.execute(sql: "INSERT INTO notes VALUES ('n2', NULL, 9223372036854775807, -0.0, x'')")
            try db.execute(
                sql: "INSERT INTO notes(id, title, b) VALUES ('n6', 'photo', ?)", arguments: [reference.databaseValue])
            try db.execute(sql: "INSERT INTO tags VALUES ('t1', 'errands')")
            try db.execute(sql: "INSERT INTO tags VALUES ('t2', 'home')")
            try db.execute(sql: "INSERT INTO app_settings VALUES ('theme', 'dark')")
        }
        try stage(store, sequence: 1)
        try store.markPublished(throughSequence: 1)
        try applyRemote(
            store, header(Golden.clientB, 1, "B0000000-0000-4000-8000-000000000001", count: 2),
            [
                SyncChange(
                    kind: .insert, table: "notes", syncID: "n3",
                    columns: [
                        ColumnChange(column: "title", value: .text("From B | é"), timestamp: ts(base + 10)),
                        ColumnChange(column: "n", value: .integer(3), timestamp: ts(base + 10)),
                        ColumnChange(column: "x", value: .real(2.25), timestamp: ts(base + 10)),
                        ColumnChange(column: "b", value: .null, timestamp: ts(base + 10)),
                    ]),
                SyncChange(
                    kind: .update, table: "notes", syncID: "n1",
                    columns: [
                        ColumnChange(column: "title", value: .text("Hello from B"), timestamp: ts(base + 20, 3))
                    ]),
            ])
        try applyRemote(
            store,
            header(
                Golden.clientB, 2, "B0000000-0000-4000-8000-000000000002", count: 1, dependencies: [Golden.clientA: 1]),
            [
                SyncChange(kind: .delete, table: "notes", syncID: "n2", deletionTimestamp: ts(base + 30))
            ])
        try applyRemote(
            store, header(Golden.clientB, 4, "B0000000-0000-4000-8000-000000000004", count: 1),
            [
                SyncChange(
                    kind: .insert, table: "tags", syncID: "t9",
                    columns: [
                        ColumnChange(column: "name", value: .text("b-tag"), timestamp: ts(base + 40))
                    ])
            ])
        guard unpublished else { return }
        try store.database.write { db in
            try db.execute(sql: "UPDATE notes SET n = 42 WHERE id = 'n1'")
            try db.execute(sql: "DELETE FROM tags WHERE id = 't1'")
            try db.execute(sql: "INSERT INTO notes VALUES ('n4', 'staged', 4, NULL, NULL)")
        }
        try stage(store, sequence: 2)
        try store.database.write { db in
            try db.execute(sql: "UPDATE notes SET title = 'edited here' WHERE id = 'n3'")
            try db.execute(sql: "INSERT INTO notes VALUES ('n5', 'pending', 5, 0.5, x'ff')")
            try db.execute(sql: "DELETE FROM notes WHERE id = 'n6'")
            try db.execute(sql: "UPDATE tags SET name = 'house' WHERE id = 't2'")
        }
    }

    /// Writes the scenario's local store at `url` (a single file: the log checkpointed and removed).
    static func writeLocalStore(at url: URL) throws {
        let store = try Golden.openStore(url)
        try populate(store, unpublished: true)
        try store.close()
        let queue = try DatabaseQueue(path: url.path)
        try queue.writeWithoutTransaction { db in _ = try Row.fetchAll(db, sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        try queue.close()
    }

    /// The scenario's snapshot, as `GRDBStore.writeSnapshot` writes it, and what it covers.
    static func writeSnapshot(at snapshot: URL, attachments: Bool, scratch: URL) throws -> [String: Int64] {
        let url = scratch.appendingPathComponent("store-\(attachments)-\(UUID().uuidString).sqlite")
        let store = try Golden.openStore(url)
        try populate(store, unpublished: false)
        if !attachments {
            try store.database.write { db in try db.execute(sql: "DELETE FROM notes WHERE id = 'n6'") }
            try stage(store, sequence: 2)
            try store.markPublished(throughSequence: 2)
        }
        let covers = try store.writeSnapshot(to: snapshot, localClient: Golden.clientA)!
        try store.close()
        return covers
    }
}
