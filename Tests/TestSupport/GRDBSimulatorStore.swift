import FolderSyncTesting
import Foundation
import GRDB

@_spi(Tooling) @_spi(ModelAdapter) @_spi(Testing) @testable import FolderSync

/// The notes schema on SQLite, as a ``SimulatorStore``: the simulator writes SQL through it like an app would.
final class GRDBSimulatorStore: SnapshottingSimulatorStore, @unchecked Sendable {
    let store: GRDBStore
    let url: URL
    let deletePolicy: DeletePolicy
    let now: @Sendable () -> Date

    init(url: URL, deletePolicy: DeletePolicy = .deleteWins, now: @escaping @Sendable () -> Date) throws {
        self.url = url
        self.deletePolicy = deletePolicy
        self.now = now
        self.store = try NotesSchema.open(url, deletePolicy: deletePolicy, now: now)
    }

    /// Opens `notes.sqlite` in the client's folder.
    static let factory = factory(deletePolicy: .deleteWins)

    /// Opens `notes.sqlite` in the client's folder, every table under `deletePolicy`.
    static func factory(deletePolicy: DeletePolicy) -> ConvergenceSimulator.StoreFactory {
        { folder, now in
            try GRDBSimulatorStore(
                url: folder.appendingPathComponent("notes.sqlite"), deletePolicy: deletePolicy, now: now)
        }
    }

    var adapter: any ModelAdapter { store }

    func insert(table: String, syncID: String, values: [String: SyncValue]) throws {
        let names = values.keys.sorted()
        let columns = (["id"] + names).map(\.quotedDatabaseIdentifier).joined(separator: ", ")
        let placeholders = Array(repeating: "?", count: names.count + 1).joined(separator: ", ")
        do {
            try store.database.write { db in
                try db.execute(
                    sql: "INSERT INTO \(table.quotedDatabaseIdentifier)(\(columns)) VALUES (\(placeholders))",
                    arguments: StatementArguments([syncID.databaseValue] + names.map { values[$0]!.databaseValue }))
            }
        } catch let error as DatabaseError where error.message?.contains("deleted row") == true {
            throw FolderSyncError(
                .invalidConfiguration, "this sync ID belongs to a deleted row and cannot be reused: \(table) \(syncID)",
                underlying: error)
        }
    }

    func update(table: String, syncID: String, values: [String: SyncValue]) throws -> Bool {
        let names = values.keys.sorted()
        let assignments = names.map { "\($0.quotedDatabaseIdentifier) = ?" }.joined(separator: ", ")
        return try store.database.write { db in
            try db.execute(
                sql: "UPDATE \(table.quotedDatabaseIdentifier) SET \(assignments) WHERE id = ?",
                arguments: StatementArguments(names.map { values[$0]!.databaseValue } + [syncID.databaseValue]))
            return db.changesCount > 0
        }
    }

    func delete(table: String, syncID: String) throws -> Bool {
        try store.database.write { db in
            try db.execute(sql: "DELETE FROM \(table.quotedDatabaseIdentifier) WHERE id = ?", arguments: [syncID])
            return db.changesCount > 0
        }
    }

    func allRows() throws -> [CanonicalRow] {
        try store.database.read { db in
            var rows: [CanonicalRow] = []
            for table in NotesSchema.tables {
                for row in try Row.fetchAll(db, sql: "SELECT * FROM \(table.name.quotedDatabaseIdentifier)") {
                    var values: [String: SyncValue] = [:]
                    for (column, value) in row where column != "id" { values[column] = SyncValue(value) }
                    rows.append(CanonicalRow(table: table.name, syncID: row["id"], values: values))
                }
            }
            return rows.sorted()
        }
    }

    func stamp(of key: ColumnKey, localClient: String) throws -> ChangeStamp? {
        try store.stamp(of: key, localClient: localClient)
    }

    func deletionStamp(table: String, syncID: String, localClient: String) throws -> ChangeStamp? {
        try store.deletionStamp(table: table, syncID: syncID, localClient: localClient)
    }

    func unpublishedDeletions() throws -> Set<RowReference> {
        try store.database.read { db in
            let rows = try Row.fetchAll(
                db,
                sql: "SELECT tbl, sync_id FROM (\(StoreSchema.unpublishedChanges)) WHERE foldersync_marked(marks, ?)",
                arguments: [StoreSchema.deletedMarker])
            return Set(rows.map { RowReference(table: $0[0], syncID: $0[1]) })
        }
    }

    func copy(to url: URL) throws {
        try store.backup(to: url)
    }

    func restored(from url: URL) throws -> any SimulatorStore {
        try store.close()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: self.url.path + suffix) }
        try FileManager.default.copyItem(at: url, to: self.url)
        return try GRDBSimulatorStore(url: self.url, deletePolicy: deletePolicy, now: now)
    }

    /// Reopens the same SQLite file with a new connection, as a relaunched process would.
    func restarted() throws -> any SimulatorStore {
        try GRDBSimulatorStore(url: url, deletePolicy: deletePolicy, now: now)
    }
}
