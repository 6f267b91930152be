import Foundation
import GRDB
import Testing

@_spi(Tooling) @_spi(ModelAdapter) @testable import FolderSync
@testable import TestSupport

@Suite("Local store bookkeeping versions")
struct BookkeepingVersionTests {
    static let historical = GoldenCatalog.files(of: .localStore)
    /// The first bookkeeping version whose stores record their version; earlier ones are told by their shape.
    static let firstRecordedVersion = 5
    /// The newest version whose tables differ from the one before: shape tells versions up to this one.
    static let lastVersionToldByShape = 5

    static func recordedVersion(_ store: GRDBStore) throws -> Int? {
        try store.database.read { try StoreSchema.recordedBookkeepingVersion($0) }
    }

    /// The declarations of the bookkeeping tables, as `sqlite_master` holds them.
    static func bookkeepingDeclarations(_ store: GRDBStore) throws -> [String] {
        try store.database.read { db in
            try String.fetchAll(
                db,
                sql:
                    "SELECT name || ': ' || sql FROM sqlite_master WHERE name LIKE 'foldersync%' AND type = 'table' ORDER BY name"
            )
        }
    }

    @Test("The migrations are named, ordered from version 1, and end at the current version")
    func migrationsAreOrdered() {
        let versions = StoreSchema.bookkeepingMigrations.map(\.version)
        #expect(versions == Array(1...versions.count))
        #expect(StoreSchema.currentBookkeepingVersion == 9)
        #expect(Set(StoreSchema.bookkeepingMigrations.map(\.name)).count == versions.count)
        #expect(StoreSchema.bookkeepingMigrations.allSatisfy { !$0.name.isEmpty })
    }

    @Test("A new store records the current version; opening it again leaves the version and the file alone")
    func newStoreIsStamped() throws {
        let directory = TemporaryDirectory()
        let url = directory.url.appendingPathComponent("store.sqlite")
        let store = try Golden.openStore(url)
        #expect(try Self.recordedVersion(store) == StoreSchema.currentBookkeepingVersion)
        let declarations = try Self.bookkeepingDeclarations(store)
        try store.close()
        let again = try Golden.openStore(url)
        defer { try? again.close() }
        #expect(try Self.recordedVersion(again) == StoreSchema.currentBookkeepingVersion)
        #expect(try Self.bookkeepingDeclarations(again) == declarations)
    }

    @Test(
        "A golden store of each earlier version migrates to the current version, declared as a new store is, and works",
        arguments: historical)
    func historicalStoreMigrates(_ file: GoldenFile) throws {
        let directory = TemporaryDirectory()
        let fresh = try Golden.openStore(directory.url.appendingPathComponent("fresh.sqlite"))
        let newDeclarations = try Self.bookkeepingDeclarations(fresh)
        try fresh.close()

        let url = try Golden.copy(file.path, into: directory.url)
        let store = try Golden.openStore(url)
        defer { try? store.close() }
        #expect(try Self.recordedVersion(store) == StoreSchema.currentBookkeepingVersion)
        #expect(try Self.bookkeepingDeclarations(store) == newDeclarations)
        // The ledger's runs: B's sets 1 and 2, and 4 above the gap.
        let applied = try store.appliedChangeSets()
        #expect(applied.contiguous == [Golden.clientB: 2])
        #expect(applied.beyond == [Golden.clientB: [4]])
        // Sequence 2 is staged and unpublished; the rest is pending and stages as sequence 3.
        #expect(try store.hasUnpublishedChanges())
        var staged: [String] = []
        let count = try store.stageChanges(
            sequence: 3,
            emit: { change in
                staged.append(
                    "\(change.kind) \(change.table)/\(change.syncID) "
                        + change.columns.map(\.column).sorted().joined(separator: ","))
            }, seal: { 3 })
        #expect(count == 4)
        #expect(
            staged.sorted() == [
                "delete notes/n6 ", "insert notes/n5 b,n,title,x", "update notes/n3 title", "update tags/t2 name",
            ])
        try store.markPublished(throughSequence: 3)
        #expect(try !store.hasUnpublishedChanges())
        // Change capture works on the migrated store.
        try store.database.write { db in
            try db.execute(sql: "UPDATE notes SET title = 'after migration' WHERE id = 'n1'")
        }
        #expect(try store.hasUnpublishedChanges())
    }

    @Test(
        "The app's migration of a version-5 store writes through the triggers its last writer left (e578d01), and is captured as today's triggers capture it"
    )
    func migrationWritesThroughEarlierTriggers() throws {
        let directory = TemporaryDirectory()
        let url = try Golden.copy("local-stores/bookkeeping-v5-e578d01.sqlite", into: directory.url)
        // The triggers that version wrote: their update call has no argument telling whether the sync ID changed.
        let before = try DatabaseQueue(path: url.path).read { db in
            try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'foldersync_notes_update'")
        }
        #expect(before?.contains("RAISE(ABORT, 'FolderSync: the sync ID of a synced row cannot change')") == true)
        let store = try Golden.openStore(url) { db in
            guard try StoreSchema.recordedBookkeepingVersion(db) == 5 else { return }
            try db.execute(sql: "UPDATE notes SET x = 9.5 WHERE id = 'n1'")  // no pending change yet
            // created here, marked by name
            try db.execute(sql: "UPDATE notes SET title = 'again', n = 6 WHERE id = 'n5'")
            try db.execute(sql: "UPDATE tags SET name = 'home again' WHERE id = 't2'")
        }
        defer { try? store.close() }
        func marks(_ table: String, _ id: String) throws -> [String] {
            try store.database.read { db in
                try PendingMarks(
                    try Data.fetchOne(
                        db, sql: "SELECT marks FROM \(StoreSchema.pendingChangesTable) WHERE tbl = ? AND sync_id = ?",
                        arguments: [table, id])
                ).names
            }
        }
        #expect(try marks("notes", "n1") == ["x"])
        #expect(try marks("notes", "n5") == ["#created", "title", "n", "x", "b"])
        #expect(try marks("tags", "t2") == ["name"])
        // The written columns have this client's newest registers; the others kept theirs.
        let n1 = try #require(try store.database.read { try store.registers($0, table: "notes", syncID: "n1") })
        #expect(n1["x"]?.client == nil && n1["x"]!.timestamp == n1.newestTimestamp)
        #expect(n1["title"]?.client == Golden.clientB)
        // n5's registers were this client's alone, in encoding 1: rewritten in place, in encoding 2, the others kept.
        let before5 = try DatabaseQueue(
            path: try Golden.copy("local-stores/bookkeeping-v5-e578d01.sqlite", into: directory.url, as: "again.sqlite")
                .path
        )
        .read { db in
            try RowRegisters(try Data.fetchOne(db, sql: "SELECT stamps FROM foldersync_clocks WHERE sync_id = 'n5'"))
        }
        let stamps5 = try #require(
            try store.database.read { db in
                try Data.fetchOne(db, sql: "SELECT stamps FROM foldersync_clocks WHERE sync_id = 'n5'")
            })
        let n5 = try RowRegisters(stamps5)
        #expect(stamps5.first == 2 && n5.registers.map(\.column) == before5.registers.map(\.column))
        #expect(n5["x"] == before5["x"] && n5["b"] == before5["b"])
        #expect(n5["title"]!.timestamp > before5.newestTimestamp && n5["n"]!.timestamp > n5["title"]!.timestamp)
        // Today's triggers replaced them once the migration ran.
        let after = try store.database.read { db in
            try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'foldersync_notes_update'")
        }
        #expect(after?.contains("RAISE") == false)
    }

    @Test(
        "A store of a newer bookkeeping version is refused with unsupportedFormatVersion naming both versions, and left byte for byte"
    )
    func newerStoreIsRefusedUntouched() throws {
        let directory = TemporaryDirectory()
        let url = directory.url.appendingPathComponent("store.sqlite")
        let store = try Golden.openStore(url)
        try GoldenScenario.populate(store, unpublished: true)
        let newer = StoreSchema.currentBookkeepingVersion + 1
        try store.database.write { db in
            try db.execute(
                sql: "UPDATE foldersync_meta SET value = ? WHERE key = ?",
                arguments: [newer, StoreSchema.bookkeepingVersionKey])
        }
        try store.close()
        let before = try storeFingerprint(url)
        #expect(before[""]! != nil)

        let migrated = Locked(false)
        var refusal: FolderSyncError?
        do {
            _ = try GRDBStore(path: url.path, tables: Golden.tables, now: { Golden.date }) { db in
                migrated.withLock { $0 = true }
                try db.execute(sql: "CREATE TABLE added_by_the_app(id TEXT PRIMARY KEY NOT NULL)")
            }
        } catch let error as FolderSyncError {
            refusal = error
        }
        let error = try #require(refusal)
        #expect(error.code == .unsupportedFormatVersion)
        #expect(error.message.contains("version \(newer)"))
        #expect(error.message.contains("version \(StoreSchema.currentBookkeepingVersion)"))
        #expect(error.path == url.path)
        #expect(!migrated.current, "the app's migration ran on a store this library refuses")
        #expect(try storeFingerprint(url) == before)
    }

    @Test("A store whose recorded version is not a number is refused as a local store failure, untouched")
    func garbledVersionIsRefused() throws {
        let directory = TemporaryDirectory()
        let url = directory.url.appendingPathComponent("store.sqlite")
        let store = try Golden.openStore(url)
        try store.database.write { db in
            try db.execute(
                sql: "UPDATE foldersync_meta SET value = 'five' WHERE key = ?",
                arguments: [StoreSchema.bookkeepingVersionKey])
        }
        try store.close()
        let before = try storeFingerprint(url)
        #expect { try Golden.openStore(url) } throws: { ($0 as? FolderSyncError)?.code == .localStoreFailed }
        #expect(try storeFingerprint(url) == before)
    }

    @Test(
        "An unversioned store is told by its shape once: registers without their head are version 2, with it version 3")
    func unversionedStoresAreIdentified() throws {
        let directory = TemporaryDirectory()
        for file in Self.historical {
            let url = try Golden.copy(file.path, into: directory.url)
            let (recorded, identified) = try DatabaseQueue(path: url.path).read { db in
                (try StoreSchema.recordedBookkeepingVersion(db), try StoreSchema.identifyUnversionedBookkeeping(db))
            }
            if file.version >= Self.firstRecordedVersion {
                #expect(recorded == file.version)
            } else {
                #expect(recorded == nil, "\(file.path) was written before versions were recorded")
            }
            // Version 6 kept version 5's tables (only the bytes of its BLOBs changed): a store of it records its
            // version.
            #expect(identified == min(file.version, Self.lastVersionToldByShape), "\(file.path)")
        }
        // Empty registers in either encoding.
        #expect(LegacyRegisters.lacksHead(LegacyRegisters.encodedWithoutHead(RowRegisters())))
        #expect(!LegacyRegisters.lacksHead(RowRegisters().encoded))
        var registers = RowRegisters()
        registers.set("title", timestamp: Golden.timestamp(1).rawValue, client: Golden.clientB)
        registers.set("n", timestamp: Golden.timestamp(2).rawValue, client: nil)
        #expect(LegacyRegisters.lacksHead(LegacyRegisters.encodedWithoutHead(registers)))
        #expect(!LegacyRegisters.lacksHead(registers.encoded))
        #expect(try LegacyRegisters.decodeWithoutHead(LegacyRegisters.encodedWithoutHead(registers)) == registers)
        #expect(Set(Self.historical.map(\.version)) == Set(1...StoreSchema.currentBookkeepingVersion))
    }

    @Test("A failed migration leaves the store's contents as they were: the opening transaction rolls back")
    func failedMigrationRollsBack() throws {
        let directory = TemporaryDirectory()
        let url = try Golden.copy("local-stores/bookkeeping-v3.sqlite", into: directory.url)
        // A version-3 store holding a runs table of another shape: migration 4 runs, then migration 5 fails.
        let queue = try DatabaseQueue(path: url.path)
        try queue.write { db in try db.execute(sql: "CREATE TABLE \(StoreSchema.appliedRunsTable)(unrelated TEXT)") }
        try queue.close()
        func contents() throws -> [String] {
            let queue = try DatabaseQueue(path: url.path)
            defer { try? queue.close() }
            return try queue.read { db in
                try String.fetchAll(
                    db, sql: "SELECT type || ' ' || name || ': ' || ifnull(sql, '') FROM sqlite_master ORDER BY name")
                    + [
                        try String.fetchOne(
                            db, sql: "SELECT hex(stamps) FROM foldersync_clocks ORDER BY tbl, sync_id LIMIT 1") ?? "",
                        try String.fetchOne(
                            db,
                            sql:
                                "SELECT group_concat(tbl || sync_id || staged_in) FROM \(StoreSchema.pendingChangesTable)"
                        ) ?? "",
                    ]
            }
        }
        #expect(try DatabaseQueue(path: url.path).read { try StoreSchema.identifyUnversionedBookkeeping($0) } == 3)
        let before = try contents()
        #expect(throws: FolderSyncError.self) { try Golden.openStore(url) }
        #expect(try contents() == before)
        #expect(try DatabaseQueue(path: url.path).read { try StoreSchema.recordedBookkeepingVersion($0) } == nil)
    }
}
