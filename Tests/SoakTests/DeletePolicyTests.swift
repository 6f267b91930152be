import FolderSyncTesting
import Foundation
import GRDB
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// The last-writer-wins delete policy: the newer of a delete and an update wins, in every order.
@Suite("Delete policies")
struct DeletePolicyTests {
    struct Client {
        let name: String
        let store: GRDBStore
        let document: DocumentSyncManager

        func execute(_ sql: String, _ arguments: StatementArguments = []) throws {
            try store.database.write { try $0.execute(sql: sql, arguments: arguments) }
        }

        func rows() throws -> [String] {
            try store.database.read { db in
                try Row.fetchAll(db, sql: "SELECT * FROM items ORDER BY id").map(\.description)
            }
        }
    }

    /// Clients whose clocks advance one millisecond per reading, so that "later" is deterministic.
    static func clients(_ names: [String], remote: InMemoryFileSystem, directory: TemporaryDirectory) async throws
        -> [Client]
    {
        let ticks = Locked<Double>(1_767_323_045)
        let now: @Sendable () -> Date = {
            Date(
                timeIntervalSince1970: ticks.withLock {
                    $0 += 0.001
                    return $0
                })
        }
        var clients: [Client] = []
        for name in names {
            let folder = directory.subdirectory(name)
            let store = try GRDBStore(
                path: folder.appendingPathComponent("db.sqlite").path,
                tables: [SyncedTable("items", deletePolicy: .lastWriterWins)], now: now
            ) { db in
                try db.execute(sql: "CREATE TABLE IF NOT EXISTS items(id TEXT PRIMARY KEY NOT NULL, a TEXT, b TEXT)")
            }
            var environment = Fixture.quietEnvironment()
            environment.now = now
            let app = ApplicationSyncManager(remote: remote, environment: environment)
            try await app.register(.init(applicationIdentifier: "app", clientIdentifier: name, clientDescription: name))
            let document = try await DocumentSyncManager(
                applicationSyncManager: app,
                registering: .init(
                    documentIdentifier: "doc", documentDescription: "d",
                    helperDirectory: folder.appendingPathComponent("h")),
                store: store, remoteDocumentCreationHandler: { _ in true })
            clients.append(Client(name: name, store: store, document: document))
        }
        return clients
    }

    @Test("An update newer than a concurrent delete brings the row back with every column's newest value")
    func newerUpdateWins() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let c = try await Self.clients(["A", "B"], remote: remote, directory: directory)
        try c[0].execute("INSERT INTO items VALUES ('r', 'a0', 'b0')")
        for client in c { try await client.document.synchronize() }
        try c[0].execute("UPDATE items SET b = 'b-by-A' WHERE id = 'r'")
        try c[1].execute("DELETE FROM items WHERE id = 'r'")
        try c[0].execute("UPDATE items SET a = 'a-by-A-after-the-delete' WHERE id = 'r'")
        for _ in 0..<2 { for client in c { try await client.document.synchronize() } }
        #expect(try c[0].rows() == c[1].rows())
        #expect(try c[1].rows() == ["[id:\"r\" a:\"a-by-A-after-the-delete\" b:\"b-by-A\"]"])
    }

    @Test("A delete newer than every update removes the row, and its ID can be inserted again")
    func newerDeleteWins() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let c = try await Self.clients(["A", "B"], remote: remote, directory: directory)
        try c[0].execute("INSERT INTO items VALUES ('r', 'a0', 'b0')")
        for client in c { try await client.document.synchronize() }
        try c[0].execute("UPDATE items SET a = 'a1' WHERE id = 'r'")
        try c[1].execute("DELETE FROM items WHERE id = 'r'")
        for _ in 0..<2 { for client in c { try await client.document.synchronize() } }
        #expect(try c[0].rows().isEmpty && c[1].rows().isEmpty)
        try c[0].execute("INSERT INTO items VALUES ('r', 'again', NULL)")
        for _ in 0..<2 { for client in c { try await client.document.synchronize() } }
        #expect(try c[1].rows() == ["[id:\"r\" a:\"again\" b:NULL]"])
    }

    @Test("Random inserts, updates, deletes and re-inserts on few IDs converge in every order", arguments: 1...40)
    func randomConvergence(seed: Int) async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let c = try await Self.clients(["A", "B", "C"], remote: remote, directory: directory)
        var random = SeededGenerator(seed: UInt64(seed))
        for step in 0..<40 {
            let client = c[Int.random(in: 0..<3, using: &random)]
            let id = "r\(Int.random(in: 0..<3, using: &random))"
            let exists =
                try await client.store.database.read {
                    try Bool.fetchOne($0, sql: "SELECT EXISTS (SELECT 1 FROM items WHERE id = ?)", arguments: [id])
                } ?? false
            switch Int.random(in: 0..<5, using: &random) {
            case 0 where !exists:
                try client.execute("INSERT INTO items VALUES (?, ?, ?)", [id, "a\(step)", "b\(step)"])
            case 1 where exists:
                try client.execute("UPDATE items SET a = ? WHERE id = ?", ["a\(step)\(client.name)", id])
            case 2 where exists:
                try client.execute("UPDATE items SET b = ? WHERE id = ?", ["b\(step)\(client.name)", id])
            case 3 where exists: try client.execute("DELETE FROM items WHERE id = ?", [id])
            default: try await client.document.synchronize()
            }
        }
        for _ in 0..<2 { for client in c { try await client.document.synchronize() } }
        let replicas = try c.map { try $0.rows() }
        #expect(replicas[0] == replicas[1] && replicas[1] == replicas[2], "seed \(seed): \(replicas)")
    }
}
