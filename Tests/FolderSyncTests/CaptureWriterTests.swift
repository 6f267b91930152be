import Foundation
import GRDB
import Testing
@_spi(Tooling) @_spi(ModelAdapter) @_spi(Testing) @testable import FolderSync

/// The bookkeeping of a captured write is written by statements a function runs from inside the app's statement
/// (``CaptureWriter``): they must behave as part of that statement, as the triggers' own SQL did.
@Suite("Capture inside the app's statement")
struct CaptureWriterTests {
    static func open(_ folder: TemporaryDirectory, policy: DeletePolicy) throws -> GRDBStore {
        try GRDBStore(path: folder.url.appendingPathComponent("db.sqlite").path, tables: [SyncedTable("items", deletePolicy: policy)]) { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS items(id TEXT PRIMARY KEY NOT NULL, v TEXT)")
        }
    }

    /// Three captured rows, the third with damaged pending marks, so that capturing its next change fails.
    static func rowsWithDamagedThird(_ db: Database, prefix: String) throws {
        for id in 1...3 { try db.execute(sql: "INSERT INTO items(id, v) VALUES (?, 'old')", arguments: ["\(prefix)\(id)"]) }
        // A length that runs past the end of the value.
        try db.execute(sql: "UPDATE \(StoreSchema.pendingChangesTable) SET marks = x'05' WHERE sync_id = ?", arguments: ["\(prefix)3"])
    }

    /// Everything the rows and their bookkeeping hold, to compare before and after a failed statement.
    static func contents(_ db: Database) throws -> [String] {
        try ["items", StoreSchema.pendingChangesTable, StoreSchema.clocksTable, StoreSchema.tombstonesTable, StoreSchema.shadowTable].flatMap { table in
            try Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY 1, 2").map { "\(table): \($0)" }
        }
    }

    @Test("A capture that fails on the third row takes back the app's whole statement: the first two rows' changes and bookkeeping too",
          arguments: [DeletePolicy.deleteWins, .lastWriterWins])
    func failedCaptureRollsBackTheStatement(policy: DeletePolicy) throws {
        let folder = TemporaryDirectory()
        let store = try Self.open(folder, policy: policy)
        var statements = ["UPDATE items SET v = 'new'"]
        // Delete wins replaces the marks of a deleted row without reading them; last writer wins reads them.
        if policy == .lastWriterWins { statements.append("DELETE FROM items") }
        for (index, sql) in statements.enumerated() {
            try store.database.write { db in
                // In the same transaction as the failing statement, so that taking back the whole transaction
                // (rather than the statement) would show.
                try Self.rowsWithDamagedThird(db, prefix: "s\(index)-")
                let before = try Self.contents(db)
                #expect(throws: DatabaseError.self, "\(sql)") { try db.execute(sql: sql) }
                // Still inside the app's transaction: the failed statement left nothing of its own behind.
                #expect(db.isInsideTransaction)
                #expect(try Self.contents(db) == before, "\(sql)")
            }
        }
        try store.close()
    }

    @Test("The statements capture runs leave the app's change count and last inserted row ID alone")
    func countsStayTheApps() throws {
        let folder = TemporaryDirectory()
        let store = try Self.open(folder, policy: .deleteWins)
        try store.database.write { db in
            try db.execute(sql: "INSERT INTO items(id, v) VALUES ('r1', 'a')")
            let rowID = try Int64.fetchOne(db, sql: "SELECT rowid FROM items WHERE id = 'r1'")
            #expect(db.lastInsertedRowID == rowID)
            #expect(db.changesCount == 1)
            try db.execute(sql: "INSERT INTO items(id, v) VALUES ('r2', 'b'), ('r3', 'c')")
            try db.execute(sql: "UPDATE items SET v = 'changed' WHERE id IN ('r1', 'r2')")
            #expect(db.changesCount == 2)
            try db.execute(sql: "DELETE FROM items")
            #expect(db.changesCount == 3)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM \(StoreSchema.tombstonesTable)") == 3)
        }
        // The statements capture prepared are finalized with the connection, which closes.
        try store.close()
    }
}
