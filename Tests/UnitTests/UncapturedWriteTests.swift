import Foundation
import GRDB
import Testing

@_spi(Tooling) @_spi(ModelAdapter) @_spi(Testing) @testable import FolderSync
@testable import TestSupport

/// Remote changes are applied with capture off; when the database has no trigger but the capture's, with triggers
/// off altogether (``GRDBStore/writeWithoutCapture(_:)``). The app's own triggers still run, capture is back on for
/// the app's next write, and foreign keys are as the app had them.
@Suite("Writes that are not captured")
struct UncapturedWriteTests {
    static let appTrigger =
        "CREATE TRIGGER app_audit AFTER INSERT ON items BEGIN INSERT INTO audit(id) VALUES (NEW.id); END"

    static func open(_ folder: TemporaryDirectory, _ name: String, ticks: Locked<Double>, appTrigger: Bool = false)
        throws -> GRDBStore
    {
        let now: @Sendable () -> Date = {
            Date(
                timeIntervalSince1970: ticks.withLock {
                    $0 += 0.001
                    return $0
                })
        }
        return try GRDBStore(
            path: folder.url.appendingPathComponent(name).path, tables: [SyncedTable("items")], now: now
        ) { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS items(id TEXT PRIMARY KEY NOT NULL, v TEXT)")
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS audit(id TEXT)")
            if appTrigger, try !db.triggerExists("app_audit") { try db.execute(sql: Self.appTrigger) }
        }
    }

    /// A's three new rows, applied to `store` as client B.
    static func applyThreeRows(to store: GRDBStore, _ folder: TemporaryDirectory, ticks: Locked<Double>) throws {
        let a = try open(folder, "a.sqlite", ticks: ticks)
        try a.database.write { db in
            for id in ["r1", "r2", "r3"] {
                try db.execute(sql: "INSERT INTO items(id, v) VALUES (?, 'from A')", arguments: [id])
            }
        }
        let set = try RowRegistersTests.changeSet(from: a, client: "A", sequence: 1)
        try a.close()
        #expect(try RowRegistersTests.apply(set, to: store, localClient: "B").changesApplied == 3)
    }

    @Test(
        "An applied set is not echoed, an app's trigger runs for its rows, and the app's next write is captured",
        arguments: [false, true])
    func captureIsBackAfterTheApply(appTrigger: Bool) throws {
        let folder = TemporaryDirectory()
        let ticks = Locked(1_000.0)
        let b = try Self.open(folder, "b.sqlite", ticks: ticks, appTrigger: appTrigger)
        try Self.applyThreeRows(to: b, folder, ticks: ticks)
        #expect(try b.hasUnpublishedChanges() == false)
        // The app's trigger ran for the applied rows as it would for its own.
        #expect(
            try b.database.read { try String.fetchAll($0, sql: "SELECT id FROM audit ORDER BY id") }
                == (appTrigger ? ["r1", "r2", "r3"] : []))
        try b.database.write { db in
            try db.execute(sql: "UPDATE items SET v = 'from B' WHERE id = 'r2'")
            try db.execute(sql: "INSERT INTO items(id, v) VALUES ('r4', 'from B')")
        }
        var staged: [SyncChange] = []
        _ = try b.stageChanges(sequence: 1, emit: { staged.append($0) }, seal: { 1 })
        #expect(
            staged.map { "\($0.kind) \($0.syncID) \($0.columns.map(\.column))" } == [
                "update r2 [\"v\"]", "insert r4 [\"v\"]",
            ])
        try b.close()
    }

    @Test(
        "An apply leaves foreign keys on or off as the app had them on the store's connection",
        arguments: [false, true])
    func foreignKeysAsTheAppHadThem(enabled: Bool) throws {
        let folder = TemporaryDirectory()
        let ticks = Locked(1_000.0)
        let b = try Self.open(folder, "b.sqlite", ticks: ticks)
        try b.database.writeWithoutTransaction {
            try $0.execute(sql: "PRAGMA foreign_keys = \(enabled ? "ON" : "OFF")")
        }
        try Self.applyThreeRows(to: b, folder, ticks: ticks)
        #expect(try b.database.read { try Bool.fetchOne($0, sql: "PRAGMA foreign_keys") } == enabled)
        try b.close()
    }

    @Test("Triggers are turned off only when every trigger, temporary ones included, is the capture's")
    func onlyCaptureTriggers() throws {
        let folder = TemporaryDirectory()
        let ticks = Locked(1_000.0)
        let store = try Self.open(folder, "b.sqlite", ticks: ticks)
        try store.database.write { db in
            #expect(try StoreSchema.holdsOnlyCaptureTriggers(db, tables: store.tables))
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master WHERE type = 'trigger'") == 3)
            try db.execute(sql: "CREATE TEMP TRIGGER app_temp AFTER DELETE ON items BEGIN SELECT 1; END")
            #expect(try !StoreSchema.holdsOnlyCaptureTriggers(db, tables: store.tables))
            try db.execute(sql: "DROP TRIGGER app_temp")
            try db.execute(sql: Self.appTrigger)
            #expect(try !StoreSchema.holdsOnlyCaptureTriggers(db, tables: store.tables))
        }
        try store.close()
    }
}
