import FolderSync
import Foundation
import GRDB

/// Scenario 13 (issue 41): a document whose rows churn stays the size of its rows once tombstones are collected.
///
/// Two devices on a local folder. A holds `churnLiveRows` notes; in each round it deletes every one and inserts as
/// many, until `churnOperations` rows were inserted and deleted; A and B sync after each round, and every ten rounds
/// A uploads a whole store, vacuums, and both collect tombstones (as the automatic policy does after its vacuums).
/// Under delete wins each round's rows are new sync IDs (delete wins never takes a deleted ID back); under last writer
/// wins they are the same IDs, deleted and inserted again. A's store, vacuumed, is compared with a store that holds
/// the same rows, synced once: the ratio must be at most 1.2.
struct TombstoneChurnScenario: Scenario {
    let number = "13"
    let title = "Store size after churn, tombstones collected"

    func run(_ context: BenchContext) async throws -> ScenarioResult {
        let live = context.sizes.churnLiveRows
        let operations = context.sizes.churnOperations
        var result = ScenarioResult()
        result.note = "\(operations) inserts and deletes of \(live) live notes between two devices, both policies"
        for policy in [DeletePolicy.deleteWins, .lastWriterWins] {
            let name = policy == .deleteWins ? "delete wins, new IDs" : "last writer wins, same IDs"
            context.log(name)
            let root = try context.folder("churn-\(policy == .deleteWins ? "dw" : "lww")")
            defer { try? FileManager.default.removeItem(at: root) }
            let started = ContinuousClock.now
            let churned = try await Self.churn(
                root, policy: policy, live: live, operations: operations, context: context)
            let reference = try await Self.reference(
                root.appendingPathComponent("reference"), policy: policy, rows: churned.rows)
            result.figure("\(name): churned store", Double(churned.bytes), "bytes")
            result.figure("\(name): store of the same rows", Double(reference), "bytes")
            result.figure("\(name): tombstones left", Double(churned.tombstones), "rows")
            result.figure("\(name): time", (ContinuousClock.now - started).seconds, "s")
            result.check("\(name): churned / same rows", Double(churned.bytes) / Double(reference), atMost: 1.2)
        }
        return result
    }

    static func open(_ path: URL, policy: DeletePolicy) throws -> GRDBStore {
        try GRDBStore(path: path.path, tables: [SyncedTable("notes", deletePolicy: policy)]) { db in
            try db.execute(sql: BenchSchema.notes.createSQL)
        }
    }

    static func register(_ store: GRDBStore, _ remote: any RemoteFileSystem, _ client: String, helper: URL) async throws
        -> DocumentSyncManager
    {
        let manager = try await registerClient(
            store: store, remote: remote, client: client, document: "churn", helper: helper, manualPolicy: true)
        manager.policy.acknowledgementDelay = 0  // each sync says what it applied: collection follows the rounds
        manager.massDeletionHandler = { _ in true }  // every round deletes every note: the churn is the point
        return manager
    }

    /// The rows of round `round` (their IDs under delete wins, the same ones under last writer wins).
    static func id(_ index: Int, round: Int, policy: DeletePolicy) -> String {
        policy == .deleteWins ? "r\(round)-" + BenchSchema.rowID(index) : BenchSchema.rowID(index)
    }

    /// Plays the churn; returns A's vacuumed size, its tombstones and its final rows.
    private static func churn(_ root: URL, policy: DeletePolicy, live: Int, operations: Int, context: BenchContext)
        async throws
        -> (bytes: Int64, tombstones: Int, rows: [[DatabaseValue]])
    {
        let remote = try sharedFolder(in: root)
        let pathA = root.appendingPathComponent("A.sqlite")
        let pathB = root.appendingPathComponent("B.sqlite")
        let a = try open(pathA, policy: policy)
        let b = try open(pathB, policy: policy)
        let managerA = try await register(a, remote, "A", helper: root.appendingPathComponent("A.helper"))
        let managerB = try await register(b, remote, "B", helper: root.appendingPathComponent("B.helper"))
        let rounds = max(1, operations / live)
        try await a.database.write { db in try Self.insert(db, round: 0, live: live, policy: policy) }
        for round in 1...rounds {
            try await a.database.write { db in
                let delete = try db.makeStatement(sql: "DELETE FROM notes WHERE id = ?")
                for index in 0..<live { try delete.execute(arguments: [id(index, round: round - 1, policy: policy)]) }
                try Self.insert(db, round: round, live: live, policy: policy)
            }
            try await managerA.synchronize()
            try await managerB.synchronize()
            if round % 10 == 0 || round == rounds {
                try await managerA.synchronize()
                _ = try await managerA.uploadWholeStore()
                _ = try await managerA.vacuum()
                let collected = try await managerA.collectTombstones()
                _ = try await managerB.collectTombstones()
                context.log("round \(round) of \(rounds): \(collected) tombstones collected")
            }
        }
        let tombstones = try await a.database.read {
            try Int.fetchOne($0, sql: "SELECT count(*) FROM foldersync_tombstones") ?? 0
        }
        let rows = try await a.database.read { db in
            try Row.fetchAll(db, sql: "SELECT id, title, body FROM notes ORDER BY id").map { row in
                (0..<3).map { row[$0] as DatabaseValue }
            }
        }
        try await a.database.writeWithoutTransaction { try $0.execute(sql: "VACUUM") }
        try a.database.close()
        try b.database.close()
        return (try storeBytes(pathA), tombstones, rows)
    }

    private static func insert(_ db: Database, round: Int, live: Int, policy: DeletePolicy) throws {
        let insert = try db.makeStatement(sql: "INSERT INTO notes(id, title, body) VALUES (?, ?, ?)")
        for index in 0..<live {
            try insert.execute(arguments: [
                id(index, round: round, policy: policy), BenchSchema.noteTitle(index),
                BenchSchema.noteBody(index, version: round),
            ])
        }
    }

    /// The shared folder `remote` in `root`, made before the devices register, as a mounted share is there.
    private static func sharedFolder(in root: URL) throws -> FileManagerFileSystem {
        let folder = root.appendingPathComponent("remote", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return FileManagerFileSystem(rootURL: folder)
    }

    /// A store holding `rows`, synced once by its only device, vacuumed: its size.
    private static func reference(_ root: URL, policy: DeletePolicy, rows: [[DatabaseValue]]) async throws -> Int64 {
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let path = root.appendingPathComponent("R.sqlite")
        let store = try open(path, policy: policy)
        let manager = try await register(
            store, try sharedFolder(in: root), "R", helper: root.appendingPathComponent("R.helper"))
        try await store.database.write { db in
            let insert = try db.makeStatement(sql: "INSERT INTO notes(id, title, body) VALUES (?, ?, ?)")
            for row in rows { try insert.execute(arguments: StatementArguments(row)) }
        }
        try await manager.synchronize()
        try await store.database.writeWithoutTransaction { try $0.execute(sql: "VACUUM") }
        try store.database.close()
        return try storeBytes(path)
    }

    /// The store file's size once closed (its log checkpointed into it).
    private static func storeBytes(_ path: URL) throws -> Int64 {
        let wal = (try? FileManager.default.attributesOfItem(atPath: path.path + "-wal")[.size] as? Int64) ?? 0
        return ((try FileManager.default.attributesOfItem(atPath: path.path)[.size] as? Int64) ?? 0) + wal
    }
}
