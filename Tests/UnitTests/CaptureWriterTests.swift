import Foundation
import GRDB
import Testing

@_spi(Tooling) @_spi(ModelAdapter) @_spi(Testing) @testable import FolderSync
@testable import TestSupport

/// The bookkeeping of a captured write is written by statements a function runs from inside the app's statement
/// (``CaptureWriter``): they must behave as part of that statement, as the triggers' own SQL did.
@Suite("Capture inside the app's statement")
struct CaptureWriterTests {
    static func open(_ folder: TemporaryDirectory, policy: DeletePolicy) throws -> GRDBStore {
        try GRDBStore(
            path: folder.url.appendingPathComponent("db.sqlite").path,
            tables: [SyncedTable("items", deletePolicy: policy)]
        ) { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS items(id TEXT PRIMARY KEY NOT NULL, v TEXT)")
        }
    }

    /// Three captured rows, the third with damaged pending marks, so that capturing its next change fails.
    static func rowsWithDamagedThird(_ db: Database, prefix: String) throws {
        for id in 1...3 {
            try db.execute(sql: "INSERT INTO items(id, v) VALUES (?, 'old')", arguments: ["\(prefix)\(id)"])
        }
        // A length that runs past the end of the value.
        try db.execute(
            sql: "UPDATE \(StoreSchema.pendingChangesTable) SET marks = x'05' WHERE sync_id = ?",
            arguments: ["\(prefix)3"])
    }

    /// Everything the rows and their bookkeeping hold, to compare before and after a failed statement.
    static func contents(_ db: Database) throws -> [String] {
        try [
            "items", StoreSchema.pendingChangesTable, StoreSchema.clocksTable, StoreSchema.tombstonesTable,
            StoreSchema.shadowTable,
        ].flatMap { table in
            try Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY 1, 2").map { "\(table): \($0)" }
        }
    }

    @Test(
        "A capture that fails on the third row takes back the app's whole statement: the first two rows' changes and bookkeeping too",
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

    @Test(
        "A deleted row's sync ID (delete wins) and a change of a sync ID are refused with the trigger constraint's code and FolderSync's message, whatever the statement's conflict clause; the whole statement is taken back"
    )
    func refusals() throws {
        let folder = TemporaryDirectory()
        let store = try Self.open(folder, policy: .deleteWins)
        try store.database.write { db in
            try db.execute(sql: "INSERT INTO items(id, v) VALUES ('gone', 'a'), ('kept', 'b')")
            try db.execute(sql: "DELETE FROM items WHERE id = 'gone'")
        }
        let reuses = [
            "INSERT INTO items(id, v) VALUES ('new', 'n'), ('gone', 'again')",
            "INSERT OR IGNORE INTO items(id, v) VALUES ('new', 'n'), ('gone', 'again')",
            "INSERT OR REPLACE INTO items(id, v) VALUES ('new', 'n'), ('gone', 'again')",
            "INSERT OR FAIL INTO items(id, v) VALUES ('new', 'n'), ('gone', 'again')",
        ]
        let changes = [
            "UPDATE items SET id = 'renamed' WHERE id = 'kept'",
            "UPDATE OR IGNORE items SET id = 'renamed', v = 'c' WHERE id = 'kept'",
        ]
        for (sql, message) in reuses.map({
            ($0, "FolderSync: this sync ID belongs to a deleted row and cannot be reused")
        })
            + changes.map({ ($0, "FolderSync: the sync ID of a synced row cannot change") })
        {
            try store.database.write { db in
                let before = try Self.contents(db)
                do {
                    try db.execute(sql: sql)
                    Issue.record("\(sql) was not refused")
                } catch let error as DatabaseError {
                    #expect(error.extendedResultCode == .SQLITE_CONSTRAINT_TRIGGER, "\(sql)")
                    #expect(error.message == message, "\(sql)")
                }
                #expect(db.isInsideTransaction)
                #expect(try Self.contents(db) == before, "\(sql)")
            }
        }
        // A new sync ID, and a row written again under its own ID, are fine.
        try store.database.write { db in
            try db.execute(sql: "INSERT INTO items(id, v) VALUES ('new', 'n')")
            try db.execute(sql: "UPDATE items SET id = 'kept', v = 'd' WHERE id = 'kept'")
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
            #expect(try StoreSchema.unsettledDeletions(db).count == 3)
        }
        // The statements capture prepared are finalized with the connection, which closes.
        try store.close()
    }

    @Test(
        "A captured insert, update and delete leave the rows and bytes of bookkeeping version 9, under either delete policy",
        arguments: [DeletePolicy.deleteWins, .lastWriterWins])
    func bookkeepingBytes(policy: DeletePolicy) throws {
        let folder = TemporaryDirectory()
        let ticks = Locked(1_767_323_045.0)
        let now: @Sendable () -> Date = {
            Date(
                timeIntervalSince1970: ticks.withLock {
                    $0 += 0.001
                    return $0
                })
        }
        let store = try GRDBStore(
            path: folder.url.appendingPathComponent("db.sqlite").path,
            tables: [SyncedTable("items", deletePolicy: policy)], now: now
        ) { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS items(id TEXT PRIMARY KEY NOT NULL, a TEXT, b TEXT)")
        }
        func marks() throws -> [String]? {
            try store.database.read { db in
                try Data.fetchOne(db, sql: "SELECT marks FROM \(StoreSchema.pendingChangesTable) WHERE sync_id = 'r1'")
            }.map { try PendingMarks($0).names }
        }
        func stamps() throws -> Data? {
            try store.database.read {
                try Data.fetchOne($0, sql: "SELECT stamps FROM \(StoreSchema.clocksTable) WHERE sync_id = 'r1'")
            }
        }
        func registers() throws -> [RowRegisters.Register]? {
            try stamps().map { data in
                let registers = try RowRegisters(data)
                #expect(registers.encoded == data)  // the canonical encoding, as RowRegisters writes it
                return registers.registers
            }
        }
        func write(_ sql: String) throws { try store.database.write { try $0.execute(sql: sql) } }

        try write("INSERT INTO items(id, a, b) VALUES ('r1', 'a', 'b')")
        // Created, with every column: one mark for all of them.
        #expect(try marks() == ["#created", "#all"])
        let inserted = try #require(try registers())
        #expect(inserted.map(\.column) == ["a", "b"] && inserted.allSatisfy { $0.client == nil })
        #expect(inserted[0].timestamp < inserted[1].timestamp)
        // Registers version 2: the head (version, newest timestamp, no client), then each column with its age, the
        // newest one 0, and no client byte.
        let newest = inserted[1].timestamp
        let age = UInt8(newest - inserted[0].timestamp)
        #expect(
            try stamps()
                == Data([2] + withUnsafeBytes(of: newest.bigEndian, Array.init) + [0, 1, 0x61, age, 1, 0x62, 0]))

        try write("UPDATE items SET b = 'b2', a = a WHERE id = 'r1'")  // a is written but unchanged: not marked again
        #expect(try marks() == ["#created", "#all"])
        let updated = try #require(try registers())
        #expect(updated[0] == inserted[0] && updated[1].timestamp > inserted[1].timestamp)

        _ = try RowRegistersTests.changeSet(from: store, client: "A", sequence: 1)
        #expect(try marks() == nil)
        try write("UPDATE items SET a = 'a2' WHERE id = 'r1'")
        #expect(try marks() == ["a"])

        let written = try #require(try registers()).map(\.timestamp).max()!
        try write("DELETE FROM items WHERE id = 'r1'")
        let tombstone = try store.database.read { db in
            try Row.fetchOne(db, sql: "SELECT hlc, client FROM \(StoreSchema.tombstonesTable) WHERE sync_id = 'r1'")
        }
        let shadow = try store.database.read { db in
            try Row.fetchAll(
                db, sql: "SELECT col, value FROM \(StoreSchema.shadowTable) WHERE sync_id = 'r1' ORDER BY col"
            )
            .map { "\($0["col"] as String)=\($0["value"] as String)" }
        }
        switch policy {
        case .deleteWins:
            // One write: the marks, with the delete's time (the write not yet staged dies with the row). The
            // tombstone and the registers' removal wait for settling (UnsettledDeletionTests).
            let deletedAt = try #require(try PendingMarks(try marks() ?? []).deletionTimestamp)
            #expect(deletedAt > written)
            #expect(try marks() == PendingMarks.deletion(at: deletedAt).names)
            #expect(tombstone == nil)
            #expect(
                try registers()
                    == updated.map { $0.column == "a" ? .init(column: "a", timestamp: written, client: nil) : $0 })
            #expect(shadow.isEmpty)
        case .lastWriterWins:
            let tombstone = try #require(tombstone)
            #expect(UInt64(bitPattern: tombstone["hlc"] as Int64) > written)
            #expect((tombstone["client"] as String?) == nil)
            // The values and registers stay for a newer write, and the write not yet staged travels with the delete.
            #expect(try registers()?.map(\.column) == ["a", "b"])
            #expect(try marks() == ["a", "#deleted"])
            #expect(shadow == ["a=a2", "b=b2"])
            // Inserted again: the kept values are forgotten, the delete not yet staged too, the registers rewritten.
            let before = try #require(try registers())
            try write("INSERT INTO items(id, a, b) VALUES ('r1', 'a3', 'b3')")
            #expect(try marks() == ["a", "#created", "#all"])
            let after = try #require(try registers())
            #expect(after.map(\.column) == ["a", "b"] && zip(before, after).allSatisfy { $0.timestamp < $1.timestamp })
            #expect(
                try store.database.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM \(StoreSchema.shadowTable)") }
                    == 0)
        }
        try store.close()
    }

    @Test(
        "A new row of ten columns keeps 50 bytes of registers and 14 of pending marks; an update of every column keeps the size"
    )
    func compactBookkeeping() throws {
        let folder = TemporaryDirectory()
        let columns = (0..<10).map { "c\($0)" }
        let store = try GRDBStore(
            path: folder.url.appendingPathComponent("db.sqlite").path, tables: [SyncedTable("items")]
        ) { db in
            try db.execute(
                sql:
                    "CREATE TABLE IF NOT EXISTS items(id TEXT PRIMARY KEY NOT NULL, \(columns.map { "\($0) TEXT" }.joined(separator: ", ")))"
            )
        }
        func sizes() throws -> [Int] {
            try store.database.read { db in
                [
                    try Int.fetchOne(
                        db, sql: "SELECT length(stamps) FROM \(StoreSchema.clocksTable) WHERE sync_id = 'r1'") ?? 0,
                    try Int.fetchOne(
                        db, sql: "SELECT length(marks) FROM \(StoreSchema.pendingChangesTable) WHERE sync_id = 'r1'")
                        ?? 0,
                ]
            }
        }
        let values = columns.map { _ in "v" }
        try store.database.write { db in
            try db.execute(
                sql: "INSERT INTO items VALUES ('r1'\(String(repeating: ", ?", count: 10)))",
                arguments: StatementArguments(values))
        }
        // Head 10 bytes; per column its name (3 bytes) and its age (1 byte).
        #expect(try sizes() == [50, 14])
        try store.database.write { db in
            try db.execute(
                sql: "UPDATE items SET \(columns.map { "\($0) = 'w'" }.joined(separator: ", ")) WHERE id = 'r1'")
        }
        #expect(try sizes() == [50, 14])
        let registers = try store.database.read { db in
            try RowRegisters(
                try Data.fetchOne(db, sql: "SELECT stamps FROM \(StoreSchema.clocksTable) WHERE sync_id = 'r1'"))
        }
        #expect(registers.registers.map(\.column) == columns)
        // The snapshot's encoding of the same registers is version 1's: 10 bytes of head, 12 per column.
        #expect(registers.snapshotEncoded.count == 130 && registers.snapshotEncoded.first == 1)
        #expect(try RowRegisters(registers.snapshotEncoded) == registers)
        try store.close()
    }
}
