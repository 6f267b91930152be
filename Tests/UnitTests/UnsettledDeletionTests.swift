import Foundation
import GRDB
import Testing

@_spi(Tooling) @_spi(ModelAdapter) @_spi(Testing) @testable import FolderSync
@testable import TestSupport

/// A delete of a delete-wins row is one write in the app's transaction, its marks `#deleted #at=T`; its tombstone and
/// the removal of its registers follow when it is settled (bookkeeping version 9, `GRDBStore+UnsettledDeletions`).
@Suite("Deletes recorded in one write")
struct UnsettledDeletionTests {
    /// A store of `items(id, a, b)` under delete wins, whose clock reads `start`, then a millisecond more each time.
    static func open(_ url: URL, from start: Double) throws -> GRDBStore {
        try RowRegistersTests.open(url, ticks: Locked(start))
    }

    /// Every bookkeeping table but the pending one, to show what a delete wrote.
    static func bookkeepingButPending(_ store: GRDBStore) throws -> [String] {
        try store.database.read { db in
            try [StoreSchema.clocksTable, StoreSchema.tombstonesTable, StoreSchema.stagedChangesTable].flatMap {
                table in
                try Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY 1, 2").map { "\(table): \($0)" }
            }
        }
    }

    static func pendingMarks(_ store: GRDBStore, _ syncID: String) throws -> Data? {
        try store.database.read {
            try Data.fetchOne(
                $0, sql: "SELECT marks FROM \(StoreSchema.pendingChangesTable) WHERE sync_id = ?", arguments: [syncID])
        }
    }

    static func tombstone(_ store: GRDBStore, _ syncID: String) throws -> Int64? {
        try store.database.read {
            try Int64.fetchOne(
                $0, sql: "SELECT hlc FROM \(StoreSchema.tombstonesTable) WHERE sync_id = ? AND client IS NULL",
                arguments: [syncID])
        }
    }

    static func hasRegisters(_ store: GRDBStore, _ syncID: String) throws -> Bool {
        try store.database.read {
            try Bool.fetchOne(
                $0, sql: "SELECT EXISTS (SELECT 1 FROM \(StoreSchema.clocksTable) WHERE sync_id = ?)",
                arguments: [syncID])!
        }
    }

    @Test(
        "A deletion's marks are 9 bytes, a zero byte and its time; only marks that are exactly a deletion's carry one"
    )
    func marksEncoding() throws {
        for timestamp: UInt64 in [0, 7, 115_823_283_079_741_452, .max] {
            let marks = PendingMarks.deletion(at: timestamp)
            #expect(marks.names == [StoreSchema.deletedMarker, "\(StoreSchema.deletionTimeMarker)\(timestamp)"])
            #expect(marks.deletionTimestamp == timestamp)
            #expect([UInt8](marks.encoded) == [0] + withUnsafeBytes(of: timestamp.bigEndian, Array.init))
            #expect(try PendingMarks(marks.encoded) == marks)
            #expect(marks.contains(StoreSchema.deletedMarker) && marks.holdsUnsettledDeletion)
        }
        for names in [[StoreSchema.deletedMarker], [StoreSchema.deletedMarker, "a"], ["a", "#at=5"]] {
            #expect(PendingMarks(names).deletionTimestamp == nil, "\(names)")
        }
        #expect(throws: FormatViolation.self) { try PendingMarks(Data([0, 1, 2])) }
    }

    @Test(
        "A delete writes its marks and its time, nothing else; staging settles it: the tombstone at the delete's time, the registers gone, the delete published with that time"
    )
    func oneWriteThenSettled() throws {
        let directory = TemporaryDirectory()
        let store = try Self.open(directory.url.appendingPathComponent("a.sqlite"), from: 1_000)
        defer { try? store.close() }
        try store.database.write { db in
            try db.execute(sql: "INSERT INTO items(id, a, b) VALUES ('r1', 'x', 'y'), ('r2', 'z', NULL)")
        }
        _ = try RowRegistersTests.changeSet(from: store, client: "A", sequence: 1)
        let before = try Self.bookkeepingButPending(store)
        let written = try #require(
            try store.stamp(of: ColumnKey(table: "items", syncID: "r1", column: "a"), localClient: "A"))

        try store.database.write { db in try db.execute(sql: "DELETE FROM items WHERE id = 'r1'") }
        #expect(try Self.bookkeepingButPending(store) == before, "one write: the pending marks alone")
        let marks = try PendingMarks(try Self.pendingMarks(store, "r1"))
        let deletedAt = try #require(marks.deletionTimestamp)
        #expect(deletedAt > written.timestamp.rawValue)
        // Read as the tombstone it stands for.
        #expect(
            try store.deletionStamp(table: "items", syncID: "r1", localClient: "A")
                == ChangeStamp(timestamp: HybridTimestamp(rawValue: deletedAt), clientIdentifier: "A"))
        #expect(try store.stamp(of: ColumnKey(table: "items", syncID: "r1", column: "a"), localClient: "A") == nil)
        #expect(try LocalStoreDoctor(storePath: store.database.path).examine().isHealthy)

        let (_, changes) = try RowRegistersTests.changeSet(from: store, client: "A", sequence: 2)
        #expect(changes.map(\.kind) == [.delete])
        #expect(changes.first?.deletionTimestamp?.rawValue == deletedAt)
        #expect(try Self.tombstone(store, "r1") == Int64(bitPattern: deletedAt))
        #expect(try !Self.hasRegisters(store, "r1"))
        #expect(try Self.hasRegisters(store, "r2"))
        #expect(try LocalStoreDoctor(storePath: store.database.path).examine().isHealthy)
    }

    @Test(
        "A remote set applied before the delete is staged meets it as a tombstone: a newer remote update does not bring the row back, and the delete still travels"
    )
    func appliedBeforeStaging() throws {
        let directory = TemporaryDirectory()
        let a = try Self.open(directory.url.appendingPathComponent("a.sqlite"), from: 1_000)
        // B's clock runs behind A's: A's update is newer than B's delete, which wins all the same.
        let b = try Self.open(directory.url.appendingPathComponent("b.sqlite"), from: 500)
        defer {
            try? a.close()
            try? b.close()
        }
        try a.database.write { db in try db.execute(sql: "INSERT INTO items(id, a, b) VALUES ('r1', 'x', 'y')") }
        _ = try RowRegistersTests.apply(
            try RowRegistersTests.changeSet(from: a, client: "A", sequence: 1), to: b, localClient: "B")
        try b.database.write { db in try db.execute(sql: "DELETE FROM items WHERE id = 'r1'") }
        let deletedAt = try #require(try PendingMarks(try Self.pendingMarks(b, "r1")).deletionTimestamp)

        try a.database.write { db in try db.execute(sql: "UPDATE items SET a = 'newer' WHERE id = 'r1'") }
        _ = try RowRegistersTests.apply(
            try RowRegistersTests.changeSet(from: a, client: "A", sequence: 2), to: b, localClient: "B")
        #expect(try RowRegistersTests.count(b, "items") == 0)
        #expect(try Self.tombstone(b, "r1") == Int64(bitPattern: deletedAt), "settled by the apply")
        #expect(try !Self.hasRegisters(b, "r1"))

        _ = try RowRegistersTests.apply(
            try RowRegistersTests.changeSet(from: b, client: "B", sequence: 1), to: a, localClient: "A")
        #expect(try RowRegistersTests.count(a, "items") == 0, "the delete reached A")
    }

    @Test(
        "A delete survives the process: reopened with a clock set back, the store's clock starts after it and staging publishes it with its time"
    )
    func survivesReopening() throws {
        let directory = TemporaryDirectory()
        let url = directory.url.appendingPathComponent("a.sqlite")
        let store = try Self.open(url, from: 1_000)
        try store.database.write { db in try db.execute(sql: "INSERT INTO items(id, a, b) VALUES ('r1', 'x', 'y')") }
        _ = try RowRegistersTests.changeSet(from: store, client: "A", sequence: 1)
        try store.database.write { db in try db.execute(sql: "DELETE FROM items WHERE id = 'r1'") }
        let deletedAt = try #require(try PendingMarks(try Self.pendingMarks(store, "r1")).deletionTimestamp)
        try store.close()

        let reopened = try Self.open(url, from: 1)
        defer { try? reopened.close() }
        try reopened.database.write { db in
            try db.execute(sql: "INSERT INTO items(id, a, b) VALUES ('r2', 'later', NULL)")
        }
        let later = try #require(
            try reopened.stamp(of: ColumnKey(table: "items", syncID: "r2", column: "a"), localClient: "A"))
        #expect(later.timestamp.rawValue > deletedAt)
        let (_, changes) = try RowRegistersTests.changeSet(from: reopened, client: "A", sequence: 2)
        #expect(changes.filter { $0.kind == .delete }.map(\.deletionTimestamp?.rawValue) == [deletedAt])
    }
}
