import Foundation
import GRDB
import Testing

@_spi(Tooling) @_spi(ModelAdapter) @_spi(Testing) @testable import FolderSync
@testable import TestSupport

/// Registers packed one `foldersync_clocks` row per synced row, and pending marks one row per synced row.
@Suite("Row registers")
struct RowRegistersTests {
    /// A store whose clock advances one millisecond per reading, so that "later" is deterministic.
    static func open(_ url: URL, ticks: Locked<Double>, columns: String = "a TEXT, b TEXT") throws -> GRDBStore {
        let now: @Sendable () -> Date = {
            Date(
                timeIntervalSince1970: ticks.withLock {
                    $0 += 0.001
                    return $0
                })
        }
        return try GRDBStore(path: url.path, tables: [SyncedTable("items")], now: now) { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS items(id TEXT PRIMARY KEY NOT NULL, \(columns))")
        }
    }

    /// Stages everything `store` has pending into one change set, published, as the engine would.
    static func changeSet(from store: any ModelAdapter, client: String, sequence: Int64) throws -> (
        ChangeSetHeader, [SyncChange]
    ) {
        var changes: [SyncChange] = []
        _ = try store.stageChanges(sequence: sequence, emit: { changes.append($0) }, seal: { sequence })
        try store.markPublished(throughSequence: sequence)
        let header = ChangeSetHeader(
            changeSetIdentifier: "\(client)-\(sequence)", clientIdentifier: client, sequence: sequence,
            schemaVersion: 1, changeCount: changes.count, createdAt: Date(timeIntervalSince1970: 0))
        return (header, changes)
    }

    static func apply(
        _ set: (ChangeSetHeader, [SyncChange]), to store: GRDBStore, localClient: String,
        resolutions: [ColumnKey: ConflictResolution] = [:]
    ) throws -> ApplyOutcome {
        try store.apply(
            set.0, localClient: localClient, changes: { body in for change in set.1 { try body(change) } },
            resolutions: resolutions)
    }

    static func count(_ store: GRDBStore, _ table: String) throws -> Int {
        try store.database.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM \(table)") ?? -1 }
    }

    @Test("Registers and pending marks encode and decode; damaged registers are refused")
    func encoding() throws {
        var registers = RowRegisters()
        registers.set("a", timestamp: 7, client: nil)
        registers.set("b", timestamp: 9, client: "B")
        registers.set("c", timestamp: 8, client: "B")
        registers.set("a", timestamp: 10, client: "C")
        let decoded = try RowRegisters(registers.encoded)
        #expect(decoded == registers)
        #expect(decoded["a"] == .init(column: "a", timestamp: 10, client: "C"))
        #expect(decoded.newestTimestamp == 10)
        #expect(RowRegisters.newestTimestamp(ofHead: registers.encoded.subdata(in: 1..<9)) == 10)
        #expect(decoded.owned(by: "L") == registers.owned(by: "L"))
        var marks = PendingMarks([StoreSchema.createdMarker, "a", "a", "b"])
        marks.remove("a")
        #expect(try PendingMarks(marks.encoded).names == [StoreSchema.createdMarker, "b"])
        let bytes = [UInt8](registers.encoded)
        #expect(throws: FormatViolation.self) { try RowRegisters(Data(bytes.dropLast())) }
        #expect(throws: FormatViolation.self) { try RowRegisters(Data([3] + bytes.dropFirst())) }
        // Version 1, what snapshots carry and stores wrote before bookkeeping version 6, reads the same.
        let snapshot = [UInt8](registers.snapshotEncoded)
        #expect(snapshot.first == 1 && bytes.first == 2 && snapshot.count > bytes.count)
        #expect(try RowRegisters(Data(snapshot)) == registers)
        #expect(throws: FormatViolation.self) { try RowRegisters(Data(snapshot.dropLast())) }
    }

    @Test(
        "Registers of version 2 carry each timestamp as its age from the head, and a client byte only when a client is named"
    )
    func compactEncoding() throws {
        let newest: UInt64 = 0x0191_0000_0000_0005
        var own = RowRegisters()
        own.set("a", timestamp: newest - 3, client: nil)
        own.set("bc", timestamp: newest, client: nil)
        own.set("d", timestamp: newest - 300, client: nil)
        let head: [UInt8] = [2] + withUnsafeBytes(of: newest.bigEndian, Array.init)
        #expect([UInt8](own.encoded) == head + [0, 1, 0x61, 3, 2, 0x62, 0x63, 0, 1, 0x64, 0xAC, 0x02])
        #expect(try RowRegisters(own.encoded) == own)
        var mixed = own
        mixed.set("d", timestamp: newest - 1, client: "B")
        #expect([UInt8](mixed.encoded) == head + [1, 1, 0x42, 1, 0x61, 3, 0, 2, 0x62, 0x63, 0, 0, 1, 0x64, 1, 1])
        #expect(try RowRegisters(mixed.encoded) == mixed)
        // Version 1 of the same registers: what snapshots carry.
        func littleEndian(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.littleEndian, Array.init) }
        var version1: [UInt8] = [1] + head.dropFirst() + [0]
        version1 += [1, 0x61] + littleEndian(newest - 3) + [0]
        version1 += [2, 0x62, 0x63] + littleEndian(newest) + [0]
        version1 += [1, 0x64] + littleEndian(newest - 300) + [0]
        #expect([UInt8](own.snapshotEncoded) == version1)
        #expect([UInt8](RowRegisters().encoded) == [2, 0, 0, 0, 0, 0, 0, 0, 0, 0])
        // Damaged: an age beyond the head's time, no register as new as the head, a client byte too many.
        #expect(throws: FormatViolation.self) { try RowRegisters(Data([2, 0, 0, 0, 0, 0, 0, 0, 5, 0, 1, 0x61, 6])) }
        #expect(throws: FormatViolation.self) { try RowRegisters(Data([2, 0, 0, 0, 0, 0, 0, 0, 5, 0, 1, 0x61, 1])) }
        #expect(throws: FormatViolation.self) { try RowRegisters(Data(head + [0, 1, 0x61, 0, 0])) }
    }

    @Test("Pending marks of every column mark each column and no mark; expanded, one column can be removed")
    func marksOfEveryColumn() throws {
        let marks = try PendingMarks(PendingMarks([StoreSchema.createdMarker, StoreSchema.allColumnsMarker]).encoded)
        #expect(marks.contains("a") && marks.contains("b") && marks.contains(StoreSchema.createdMarker))
        #expect(!marks.contains(StoreSchema.deletedMarker))
        var expanded = marks.expanded(columns: ["a", "b", "c"])
        #expect(expanded.names == [StoreSchema.createdMarker, "a", "b", "c"])
        expanded.remove("b")
        #expect(expanded.names == [StoreSchema.createdMarker, "a", "c"] && !expanded.contains("b"))
        // Names already marked keep their place.
        #expect(
            PendingMarks(["b", StoreSchema.allColumnsMarker, StoreSchema.deletedMarker]).expanded(columns: ["a", "b"])
                .names
                == ["b", "a", StoreSchema.deletedMarker])
        #expect(PendingMarks(["a"]).expanded(columns: ["a", "b"]).names == ["a"])
    }

    @Test(
        "A new row's registers, encoded straight from its change, are the bytes its registers encode to",
        arguments: [0, 1, 3])
    func newRowEncoding(columns: Int) throws {
        let changes = (0..<columns).map {
            ColumnChange(
                column: "c\($0)", value: .integer(1), timestamp: HybridTimestamp(rawValue: UInt64(100 + 7 * ($0 % 2))))
        }
        var registers = RowRegisters()
        for change in changes { registers.set(change.column, timestamp: change.timestamp.rawValue, client: "Author") }
        #expect(RowRegisters.encoded(changes, client: "Author") == [UInt8](registers.encoded))
        #expect(try RowRegisters(Data(RowRegisters.encoded(changes, client: "Author"))) == registers)
    }

    @Test("One clocks row and one pending row per synced row, however many columns and writes")
    func oneRowPerSyncedRow() throws {
        let directory = TemporaryDirectory()
        let store = try Self.open(directory.url.appendingPathComponent("a.sqlite"), ticks: Locked(1_767_323_045))
        try store.database.write { db in
            for id in ["r1", "r2", "r3"] {
                try db.execute(sql: "INSERT INTO items VALUES (?, 'a', 'b')", arguments: [id])
            }
            try db.execute(sql: "UPDATE items SET a = 'a2'")
            try db.execute(sql: "UPDATE items SET b = 'b2' WHERE id = 'r1'")
        }
        #expect(try Self.count(store, "foldersync_clocks") == 3)
        #expect(try Self.count(store, StoreSchema.pendingChangesTable) == 3)
        let set = try Self.changeSet(from: store, client: "A", sequence: 1)
        #expect(set.1.map(\.syncID) == ["r1", "r2", "r3"])
        #expect(set.1.allSatisfy { $0.kind == .insert && $0.columns.map(\.column) == ["a", "b"] })
        #expect(set.1[0].columns.map(\.value) == [.text("a2"), .text("b2")])
        #expect(try Self.count(store, StoreSchema.pendingChangesTable) == 0)
        // A write that changes nothing records nothing.
        try store.database.write { try $0.execute(sql: "UPDATE items SET a = a") }
        #expect(try !store.hasUnpublishedChanges())
    }

    @Test(
        "A store that kept staged changes in the pending table has them moved to the staged table when opened, and publishes them"
    )
    func stagedTableMigration() throws {
        let directory = TemporaryDirectory()
        let url = directory.url.appendingPathComponent("a.sqlite")
        let ticks = Locked(1_767_323_045.0)
        var store: GRDBStore? = try Self.open(url, ticks: ticks)
        try store!.database.write { db in
            for id in ["r1", "r2"] { try db.execute(sql: "INSERT INTO items VALUES (?, 'a', 'b')", arguments: [id]) }
        }
        _ = try store!.stageChanges(sequence: 1, emit: { _ in }, seal: { 1 })
        try store!.database.write { try $0.execute(sql: "UPDATE items SET b = 'b2' WHERE id = 'r1'") }
        try store!.database.close()
        store = nil
        // The layout before the staged table (bookkeeping version 3, which recorded no version and had no runs
        // table): staged rows in the pending table, under their sequence.
        let old = try DatabaseQueue(path: url.path)
        try old.write { db in
            try db.execute(
                sql: "INSERT INTO \(StoreSchema.pendingChangesTable) SELECT * FROM \(StoreSchema.stagedChangesTable)")
            try db.execute(sql: "DROP TABLE \(StoreSchema.stagedChangesTable)")
            try db.execute(sql: "DROP TABLE \(StoreSchema.appliedRunsTable)")
            try db.execute(
                sql: "DELETE FROM foldersync_meta WHERE key = ?", arguments: [StoreSchema.bookkeepingVersionKey])
        }
        try old.close()

        let reopened = try Self.open(url, ticks: ticks)
        #expect(
            try reopened.database.read {
                try String.fetchAll(
                    $0,
                    sql: "SELECT sync_id || ':' || staged_in FROM \(StoreSchema.stagedChangesTable) ORDER BY sync_id")
            }
                == ["r1:1", "r2:1"])
        #expect(
            try reopened.database.read {
                try String.fetchAll(
                    $0, sql: "SELECT sync_id || ':' || staged_in FROM \(StoreSchema.pendingChangesTable)")
            }
                == ["r1:0"])
        #expect(
            try reopened.database.read { try reopened.unpublishedMarks($0, table: "items", syncID: "r1") }.names
                .sorted()
                == ["#all", "#created", "b"])
        try reopened.markPublished(throughSequence: 1)
        #expect(try Self.count(reopened, StoreSchema.stagedChangesTable) == 0)
        let next = try Self.changeSet(from: reopened, client: "L", sequence: 2)
        #expect(next.1.map(\.syncID) == ["r1"] && next.1.first?.columns.map(\.column) == ["b"])
        #expect(try !reopened.hasUnpublishedChanges())
    }

    @Test("Registers survive a migration that adds a column; the new column gets its own register")
    func migrationAddsColumn() throws {
        let directory = TemporaryDirectory()
        let ticks = Locked<Double>(1_767_323_045)
        let url = directory.url.appendingPathComponent("a.sqlite")
        var store: GRDBStore? = try Self.open(url, ticks: ticks)
        try store!.database.write { try $0.execute(sql: "INSERT INTO items VALUES ('r', 'a0', 'b0')") }
        _ = try Self.changeSet(from: store!, client: "A", sequence: 1)
        let before = try store!.stamp(of: ColumnKey(table: "items", syncID: "r", column: "a"), localClient: "A")
        store = nil
        let migrated = try GRDBStore(
            path: url.path, tables: [SyncedTable("items")],
            now: {
                Date(
                    timeIntervalSince1970: ticks.withLock {
                        $0 += 0.001
                        return $0
                    })
            }
        ) { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS items(id TEXT PRIMARY KEY NOT NULL, a TEXT, b TEXT)")
            if try !db.columns(in: "items").contains(where: { $0.name == "c" }) {
                try db.execute(sql: "ALTER TABLE items ADD COLUMN c TEXT")
            }
        }
        #expect(before != nil)
        #expect(try migrated.stamp(of: ColumnKey(table: "items", syncID: "r", column: "a"), localClient: "A") == before)
        #expect(try migrated.stamp(of: ColumnKey(table: "items", syncID: "r", column: "c"), localClient: "A") == nil)
        try migrated.database.write { try $0.execute(sql: "UPDATE items SET c = 'c1' WHERE id = 'r'") }
        let c = try #require(
            try migrated.stamp(of: ColumnKey(table: "items", syncID: "r", column: "c"), localClient: "A"))
        #expect(c > before!)
        #expect(try migrated.stamp(of: ColumnKey(table: "items", syncID: "r", column: "a"), localClient: "A") == before)
        let set = try Self.changeSet(from: migrated, client: "A", sequence: 2)
        #expect(set.1.map(\.kind) == [.update])
        #expect(set.1.first?.columns.map(\.column) == ["c"])
    }

    @Test("A conflict is per column: the other columns of the row merge, and only the conflicting one is offered")
    func columnLevelConflict() throws {
        let directory = TemporaryDirectory()
        let ticks = Locked<Double>(1_767_323_045)
        let a = try Self.open(directory.url.appendingPathComponent("a.sqlite"), ticks: ticks)
        let b = try Self.open(directory.url.appendingPathComponent("b.sqlite"), ticks: ticks)
        try a.database.write { try $0.execute(sql: "INSERT INTO items VALUES ('r', 'a0', 'b0')") }
        #expect(
            try Self.apply(try Self.changeSet(from: a, client: "A", sequence: 1), to: b, localClient: "B")
                .changesApplied == 1)
        // B changes a and b, unpublished; then A changes a.
        try b.database.write { try $0.execute(sql: "UPDATE items SET a = 'a-by-B', b = 'b-by-B' WHERE id = 'r'") }
        try a.database.write { try $0.execute(sql: "UPDATE items SET a = 'a-by-A' WHERE id = 'r'") }
        let fromA = try Self.changeSet(from: a, client: "A", sequence: 2)
        #expect(fromA.1.first?.columns.map(\.column) == ["a"])
        let key = ColumnKey(table: "items", syncID: "r", column: "a")
        let outcome = try Self.apply(fromA, to: b, localClient: "B", resolutions: [key: .merged(.text("a-merged"))])
        #expect(outcome.conflicts.map(\.conflict.key) == [key])
        #expect(outcome.conflicts.first?.conflict.localValue == .text("a-by-B"))
        #expect(outcome.conflicts.first?.conflict.remoteValue == .text("a-by-A"))
        let rowB = try b.database.read { try Row.fetchOne($0, sql: "SELECT a, b FROM items WHERE id = 'r'") }
        #expect(rowB?[0] == "a-merged" && rowB?[1] == "b-by-B")
        // B's merged value and its own b travel, both stamped by B, newer than A's write.
        let fromB = try Self.changeSet(from: b, client: "B", sequence: 1)
        #expect(fromB.1.first?.columns.map(\.column) == ["a", "b"])
        _ = try Self.apply(fromB, to: a, localClient: "A")
        let rowA = try a.database.read { try Row.fetchOne($0, sql: "SELECT a, b FROM items WHERE id = 'r'") }
        #expect(rowA?[0] == "a-merged" && rowA?[1] == "b-by-B")
        #expect(try a.stamp(of: key, localClient: "A") == b.stamp(of: key, localClient: "B"))
    }

    @Test("A row never seen is inserted as it came: empty text and blob stay empty, not NULL; a known row is merged")
    func newRowsKeepTheirValues() throws {
        let directory = TemporaryDirectory()
        let ticks = Locked<Double>(1_767_323_045)
        let b = try Self.open(directory.url.appendingPathComponent("b.sqlite"), ticks: ticks)
        let stamp = HybridTimestamp(rawValue: 42 << 16)
        let header = ChangeSetHeader(
            changeSetIdentifier: "A-1", clientIdentifier: "A", sequence: 1,
            schemaVersion: 1, changeCount: 3, createdAt: Date(timeIntervalSince1970: 0))
        let changes = [
            SyncChange(
                kind: .insert, table: "items", syncID: "e",
                columns: [
                    ColumnChange(column: "a", value: .text(""), timestamp: stamp),
                    ColumnChange(column: "b", value: .blob(Data()), timestamp: stamp),
                ]),
            SyncChange(
                kind: .insert, table: "items", syncID: "v",
                columns: [
                    ColumnChange(column: "a", value: .integer(-7), timestamp: stamp),
                    ColumnChange(column: "b", value: .real(1.5), timestamp: stamp),
                ]),
            // The same row again, older: already known, so merged, and its older values lose.
            SyncChange(
                kind: .insert, table: "items", syncID: "v",
                columns: [
                    ColumnChange(column: "a", value: .null, timestamp: HybridTimestamp(rawValue: 41 << 16)),
                    ColumnChange(column: "b", value: .text("old"), timestamp: HybridTimestamp(rawValue: 41 << 16)),
                ]),
        ]
        let outcome = try Self.apply((header, changes), to: b, localClient: "B")
        #expect(outcome.changesApplied == 2 && outcome.changesIgnored == 1)
        // (Numbers become text by the columns' TEXT affinity, as any insert would make them.)
        let rows = try b.database.read {
            try Row.fetchAll($0, sql: "SELECT id, a, typeof(a), b, typeof(b) FROM items ORDER BY id")
        }
        #expect(
            rows.map(\.description) == [
                "[id:\"e\" a:\"\" typeof(a):\"text\" b:Data(0 bytes) typeof(b):\"blob\"]",
                "[id:\"v\" a:\"-7\" typeof(a):\"text\" b:\"1.5\" typeof(b):\"text\"]",
            ])
        #expect(
            try b.stamp(of: ColumnKey(table: "items", syncID: "e", column: "b"), localClient: "B")
                == ChangeStamp(timestamp: stamp, clientIdentifier: "A"))
        #expect(try !b.hasUnpublishedChanges())
    }

    @Test("A store with one bookkeeping row per column is converted when opened, stamps and pending changes kept")
    func convertsColumnRows() throws {
        let directory = TemporaryDirectory()
        let url = directory.url.appendingPathComponent("old.sqlite")
        let old = try DatabaseQueue(path: url.path)
        try old.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE items(id TEXT PRIMARY KEY NOT NULL, a TEXT, b TEXT);
                    INSERT INTO items VALUES ('r1', 'a1', 'b1'), ('r2', 'a2', 'b2');
                    CREATE TABLE foldersync_clocks(tbl TEXT NOT NULL, sync_id TEXT NOT NULL, col TEXT NOT NULL,
                        hlc INTEGER NOT NULL, client TEXT, PRIMARY KEY(tbl, sync_id, col)) WITHOUT ROWID;
                    INSERT INTO foldersync_clocks VALUES ('items', 'r1', 'a', 100, NULL), ('items', 'r1', 'b', 90, 'B'),
                        ('items', 'r2', 'a', 80, 'B'), ('items', 'r2', 'b', 70, 'B');
                    CREATE TABLE foldersync_pending_changes(tbl TEXT NOT NULL, sync_id TEXT NOT NULL, col TEXT NOT NULL, staged_in INTEGER,
                        PRIMARY KEY(tbl, sync_id, col)) WITHOUT ROWID;
                    INSERT INTO foldersync_pending_changes VALUES ('items', 'r1', 'a', NULL), ('items', 'r1', 'b', 3);
                    """)
        }
        try old.close()
        let store = try Self.open(url, ticks: Locked(1_767_323_045))
        #expect(
            try store.stamp(of: ColumnKey(table: "items", syncID: "r1", column: "a"), localClient: "L")
                == ChangeStamp(timestamp: HybridTimestamp(rawValue: 100), clientIdentifier: "L"))
        #expect(
            try store.stamp(of: ColumnKey(table: "items", syncID: "r2", column: "b"), localClient: "L")
                == ChangeStamp(timestamp: HybridTimestamp(rawValue: 70), clientIdentifier: "B"))
        #expect(try Self.count(store, "foldersync_clocks") == 2)
        // r1's write not yet staged stays pending; the one staged in set 3 moved to the staged table.
        #expect(try Self.count(store, StoreSchema.pendingChangesTable) == 1)
        #expect(try Self.count(store, StoreSchema.stagedChangesTable) == 1)
        #expect(
            try store.database.read { try store.unpublishedMarks($0, table: "items", syncID: "r1") }.names.sorted() == [
                "a", "b",
            ])
        let set = try Self.changeSet(from: store, client: "L", sequence: 4)
        #expect(set.1.map(\.syncID) == ["r1"])
        #expect(set.1.first?.columns.map(\.column) == ["a"])
        // Publishing through set 4 covers the column staged in set 3 too.
        #expect(try store.hasUnpublishedChanges() == false)
    }
}
