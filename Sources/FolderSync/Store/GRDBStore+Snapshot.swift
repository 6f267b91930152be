public import Foundation
import GRDB

extension GRDBStore: SnapshottingModelAdapter {
    /// The tables a snapshot carries besides the synced ones: merge metadata.
    static let snapshotMetadataTables = ["foldersync_clocks", "foldersync_tombstones", "foldersync_shadow"]

    public func writeSnapshot(to url: URL, localClient: String) throws -> [String: Int64]? {
        try wrap("writing a snapshot") {
            // A scratch copy is trimmed, then `VACUUM INTO` writes the snapshot: one rewrite of the document where
            // an in-place VACUUM wrote it twice (through a temporary database), and no journal for the scratch copy.
            let scratch = url.deletingLastPathComponent().appendingPathComponent(url.lastPathComponent + "-scratch")
            for file in [url, scratch, URL(fileURLWithPath: scratch.path + "-journal")] { try? FileManager.default.removeItem(at: file) }
            defer {
                for file in [scratch, URL(fileURLWithPath: scratch.path + "-journal")] { try? FileManager.default.removeItem(at: file) }
            }
            let copy = try DatabaseQueue(path: scratch.path)
            try database.backup(to: copy)
            let covers: [String: Int64]? = try copy.writeWithoutTransaction { db in
                guard try !StoreSchema.holdsUnpublishedChanges(db) else { return nil }
                // Rollback mode (a WAL store's copy is in WAL mode), then no journal: a crash loses only scratch.
                try db.execute(sql: "PRAGMA journal_mode = DELETE")
                try db.execute(sql: "PRAGMA journal_mode = OFF")
                try db.execute(sql: "PRAGMA synchronous = OFF")
                var covers = try Self.appliedChangeSets(db).contiguous
                let state = try loadState(db)
                if state.publishedSequence > 0 { covers[localClient] = state.publishedSequence }
                // Only synced data and merge metadata travel: app-local tables and triggers stay home.
                let keep = Set(tables.map(\.name) + Self.snapshotMetadataTables)
                for name in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger'") {
                    try db.execute(sql: "DROP TRIGGER \(name.quotedDatabaseIdentifier)")
                }
                for name in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
                where !keep.contains(name) {
                    try db.execute(sql: "DROP TABLE \(name.quotedDatabaseIdentifier)")
                }
                // "No client" means "this client" locally; in a snapshot every stamp names its client.
                StoreFunctions.addPure(db)
                try db.execute(sql: "UPDATE foldersync_clocks SET stamps = foldersync_owned(stamps, ?)", arguments: [localClient])
                try db.execute(sql: "UPDATE foldersync_tombstones SET client = ? WHERE client IS NULL", arguments: [localClient])
                try db.execute(sql: "VACUUM INTO ?", arguments: [url.path])
                return covers
            }
            try copy.close()
            return covers
        }
    }

    /// The bookkeeping of an installed store: no pending change, the ledger of what it covers, the sync state
    /// (what this client published, what it must apply again). The same for both ways of installing.
    func recordInstalledStore(covers: [String: Int64], localClient: String, _ db: Database) throws {
        for name in [LocalLayout.unsynchronizedChangesTable, LocalLayout.stagedChangesTable] {
            try db.execute(sql: "DELETE FROM \(name)")
        }
        try Self.replaceLedger(db, covers: covers)
        var state = try loadState(db)
        let ownCovered = covers[localClient] ?? 0
        // This client's own sets the store lacks come back from the remote at the next sync.
        state.ownChangeSetsToReapplyAfter = ownCovered < state.publishedSequence ? ownCovered : nil
        state.publishedSequence = max(state.publishedSequence, ownCovered)
        // Never number a set again: one staged before may already be on the remote (a sync stopped between
        // its upload and its bookkeeping), and is published again as it is (found by the kill torture).
        state.nextSequence = max(state.nextSequence, state.publishedSequence + 1)
        // What this client knows of the markers stays true; clients that left none are looked for again, since
        // the store may cover less of them than this client had applied.
        state.hasListedClients = false
        // In the install's own transaction (or file): an installed store is never looked for again by a first sync.
        state.hasBootstrapped = true
        try Self.save(state: try JSONEncoder().encode(state), db)
    }

    public func restoreSnapshot(from url: URL, covers: [String: Int64], localClient: String) throws {
        try wrap("installing a whole store") {
            try database.writeWithoutTransaction { db in
                if try installPages(of: url, covers: covers, localClient: localClient, db) { return }
                try db.execute(sql: "ATTACH DATABASE ? AS snapshot", arguments: [url.path])
                try db.execute(sql: "PRAGMA foreign_keys = OFF")
                defer {
                    capturing.withLock { $0 = true }
                    try? db.execute(sql: "PRAGMA foreign_keys = ON")
                    try? db.execute(sql: "DETACH DATABASE snapshot")
                }
                try db.inTransaction {
                    let unpublished = try unpublishedRows(db)
                    let ownWrites = try ownPublishedWrites(db)
                    capturing.withLock { $0 = false }
                    try replaceSyncedData(db, path: url.path)
                    try keepNewer(ownWrites, localClient: localClient, db)
                    try recordInstalledStore(covers: covers, localClient: localClient, db)
                    clock.observe(HybridTimestamp(rawValue: try StoreClock.newestStamp(db)))
                    capturing.withLock { $0 = true }
                    try reapply(unpublished, db)
                    lastInstallCopiedPages.withLock { $0 = false }
                    return .commit
                }
            }
        }
    }

    /// A local change not yet published: the row's marked columns and their values now.
    struct UnpublishedRow {
        var table: SyncedTable
        var syncID: String
        var deleted: Bool
        var created: Bool
        var values: [String: DatabaseValue]
        /// Every column of the row as it is locally, when it exists: to put it back if the store lacks it.
        var row: [String: DatabaseValue]? = nil
    }

    private func unpublishedRows(_ db: Database) throws -> [UnpublishedRow] {
        var rows: [String: UnpublishedRow] = [:]
        for row in try Row.fetchAll(db, sql: StoreSchema.unpublishedChanges) {
            let name: String = row[0], syncID: String = row[1]
            guard let table = tablesByName[name] else { continue }
            let key = name + "\u{0}" + syncID
            var entry = rows[key] ?? UnpublishedRow(table: table, syncID: syncID, deleted: false, created: false, values: [:])
            for column in try PendingMarks(row[2] as Data?).names {
                switch column {
                case StoreSchema.deletedMarker: entry.deleted = true
                case StoreSchema.createdMarker: entry.created = true
                default:
                    if let current = try Row.fetchOne(db, sql: "SELECT \(column.quotedDatabaseIdentifier) FROM \(name.quotedDatabaseIdentifier) WHERE \(table.syncIDColumn.quotedDatabaseIdentifier) = ?", arguments: [syncID]) {
                        entry.values[column] = current[0]
                    }
                }
            }
            rows[key] = entry
        }
        for (key, entry) in rows where !entry.deleted {
            let table = entry.table, names = columns[table.name] ?? []
            guard !names.isEmpty, let current = try Row.fetchOne(db, sql: "SELECT \(names.map(\.quotedDatabaseIdentifier).joined(separator: ", ")) FROM \(table.name.quotedDatabaseIdentifier) WHERE \(table.syncIDColumn.quotedDatabaseIdentifier) = ?", arguments: [entry.syncID]) else { continue }
            rows[key]?.row = Dictionary(uniqueKeysWithValues: names.enumerated().map { ($0.element, current[$0.offset] as DatabaseValue) })
        }
        return Array(rows.values)
    }

    private func replaceSyncedData(_ db: Database, path: String) throws {
        for table in tables {
            let quoted = table.name.quotedDatabaseIdentifier
            let snapshotColumns = Set(try Row.fetchAll(db, sql: "PRAGMA snapshot.table_info(\(quoted))").map { $0["name"] as String })
            guard snapshotColumns.contains(table.syncIDColumn) else {
                throw FolderSyncError(.corruptFile, "the whole store has no table \(table.name)", path: path)
            }
            let shared = ([table.syncIDColumn] + (columns[table.name] ?? [])).filter(snapshotColumns.contains)
                .map(\.quotedDatabaseIdentifier).joined(separator: ", ")
            try db.execute(sql: "DELETE FROM main.\(quoted)")
            try db.execute(sql: "INSERT INTO main.\(quoted)(\(shared)) SELECT \(shared) FROM snapshot.\(quoted)")
        }
        for name in Self.snapshotMetadataTables {
            try db.execute(sql: "DELETE FROM main.\(name)")
            try db.execute(sql: "INSERT INTO main.\(name) SELECT * FROM snapshot.\(name)")
        }
    }

    /// Writes unpublished local changes again, with change capture on: they become new local changes.
    private func reapply(_ rows: [UnpublishedRow], _ db: Database) throws {
        for row in rows {
            let table = row.table.name.quotedDatabaseIdentifier, id = row.table.syncIDColumn.quotedDatabaseIdentifier
            let exists = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(table) WHERE \(id) = ?)", arguments: [row.syncID]) ?? false
            let tombstoned = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM foldersync_tombstones WHERE tbl = ? AND sync_id = ?)",
                                               arguments: [row.table.name, row.syncID]) ?? false
            if row.deleted {
                if exists {
                    try db.execute(sql: "DELETE FROM \(table) WHERE \(id) = ?", arguments: [row.syncID])
                } else if !tombstoned {
                    // A row the store does not have (created here, or by a change set the store does not cover):
                    // the delete must still stand and travel, or that change set would bring the row back.
                    try db.execute(sql: "INSERT OR REPLACE INTO foldersync_tombstones(tbl, sync_id, hlc, client) VALUES (?, ?, foldersync_tick(), NULL)",
                                   arguments: [row.table.name, row.syncID])
                    try updatePendingMarks(db, table: row.table.name, syncID: row.syncID, add: [StoreSchema.deletedMarker], remove: [])
                }
                continue
            }
            let names = row.values.keys.sorted()
            if exists, !names.isEmpty {
                try db.execute(sql: "UPDATE \(table) SET \(names.map { "\($0.quotedDatabaseIdentifier) = ?" }.joined(separator: ", ")) WHERE \(id) = ?",
                               arguments: StatementArguments(names.map { row.values[$0]! }) + [row.syncID])
                // A column whose value equals the store's is not changed by the UPDATE, so no trigger records it;
                // it is still this client's unpublished change, and must travel with a new stamp like the others.
                var registers = try self.registers(db, table: row.table.name, syncID: row.syncID) ?? RowRegisters()
                for name in names { registers.set(name, timestamp: try clock.tick(now: now()).rawValue, client: nil) }
                try saveRegisters(db, registers, table: row.table.name, syncID: row.syncID)
                try updatePendingMarks(db, table: row.table.name, syncID: row.syncID, add: names, remove: [])
            } else if !exists, row.created, !(tombstoned && row.table.deletePolicy == .deleteWins) {
                let all = [row.table.syncIDColumn] + names
                try db.execute(sql: "INSERT INTO \(table)(\(all.map(\.quotedDatabaseIdentifier).joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: all.count).joined(separator: ", ")))",
                               arguments: [row.syncID] + StatementArguments(names.map { row.values[$0]! }))
            } else if !exists, let local = row.row, !names.isEmpty, !tombstoned {
                // An update to a row the store does not have yet (it covers less than this client had applied):
                // put the row back as it was here, but only the updated columns become new local changes; the
                // others keep no local stamp, so the change sets that brought them win when they come again.
                let all = local.keys.sorted()
                try db.execute(sql: "INSERT INTO \(table)(\(([id] + all.map(\.quotedDatabaseIdentifier)).joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: all.count + 1).joined(separator: ", ")))",
                               arguments: [row.syncID] + StatementArguments(all.map { local[$0]! }))
                let marks = try PendingMarks(try Data.fetchOne(db, sql: """
                    SELECT marks FROM \(LocalLayout.unsynchronizedChangesTable) WHERE tbl = ? AND sync_id = ? AND staged_in = 0
                    """, arguments: [row.table.name, row.syncID]))
                try updatePendingMarks(db, table: row.table.name, syncID: row.syncID, add: [],
                                       remove: marks.names.filter { !names.contains($0) })
                var registers = try self.registers(db, table: row.table.name, syncID: row.syncID) ?? RowRegisters()
                registers.removeAll { $0.client == nil && !names.contains($0.column) }
                try saveRegisters(db, registers, table: row.table.name, syncID: row.syncID)
            }
        }
    }

    public func backup(to url: URL) throws {
        try wrap("backing up the store") {
            try? FileManager.default.removeItem(at: url)
            let copy = try DatabaseQueue(path: url.path)
            try database.backup(to: copy)
            try copy.close()
        }
    }

    public func resetForRejoin() throws {
        try wrap("preparing to re-join") {
            try database.write { db in
                // Deletes not yet published are unpushed local changes: they travel again, like the rows (invariant 5).
                let pendingDeletes = try Row.fetchAll(db, sql: """
                    SELECT DISTINCT tbl, sync_id FROM (\(StoreSchema.unpublishedChanges)) WHERE foldersync_marked(marks, ?)
                    """, arguments: [StoreSchema.deletedMarker]).map { ($0[0] as String, $0[1] as String) }
                for name in Self.snapshotMetadataTables + [LocalLayout.unsynchronizedChangesTable, LocalLayout.stagedChangesTable] {
                    try db.execute(sql: "DELETE FROM \(name)")
                }
                try Self.replaceLedger(db)
                let pending = try db.makeStatement(sql: """
                    INSERT OR REPLACE INTO \(LocalLayout.unsynchronizedChangesTable)(tbl, sync_id, staged_in, marks) VALUES (?, ?, 0, ?)
                    """)
                let clocks = try db.makeStatement(sql: "INSERT OR REPLACE INTO foldersync_clocks(tbl, sync_id, stamps) VALUES (?, ?, ?)")
                for table in tables {
                    let names = columns[table.name] ?? []
                    let marks = PendingMarks([StoreSchema.createdMarker] + names).encoded
                    let ids = try String.fetchAll(db, sql: "SELECT \(table.syncIDColumn.quotedDatabaseIdentifier) FROM \(table.name.quotedDatabaseIdentifier)")
                    for syncID in ids {
                        let stamp = try clock.tick(now: now()).rawValue
                        try pending.execute(arguments: [table.name, syncID, marks])
                        guard !names.isEmpty else { continue }
                        var registers = RowRegisters()
                        for column in names { registers.set(column, timestamp: stamp, client: nil) }
                        try clocks.execute(arguments: [table.name, syncID, registers.encoded])
                    }
                }
                let tombstones = try db.makeStatement(sql: "INSERT OR REPLACE INTO foldersync_tombstones(tbl, sync_id, hlc, client) VALUES (?, ?, ?, NULL)")
                let deleted = PendingMarks([StoreSchema.deletedMarker]).encoded
                for (table, syncID) in pendingDeletes {
                    let stamp = Int64(bitPattern: try clock.tick(now: now()).rawValue)
                    try pending.execute(arguments: [table, syncID, deleted])
                    try tombstones.execute(arguments: [table, syncID, stamp])
                }
                var state = LocalSyncState()
                state.nextSequence = 1
                try Self.save(state: try JSONEncoder().encode(state), db)
            }
        }
    }
}
