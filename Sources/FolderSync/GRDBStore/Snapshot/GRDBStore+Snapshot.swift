public import Foundation
import GRDB

#if canImport(Glibc)
import Glibc
#endif

extension GRDBStore: SnapshottingModelAdapter {
    /// The tables a snapshot carries besides the synced ones: merge metadata.
    static let snapshotMetadataTables = [StoreSchema.clocksTable, StoreSchema.tombstonesTable, StoreSchema.shadowTable]

    /// 1: registers one row per column (`foldersync_clocks` with a `col` column); 2: registers packed one row per
    /// synced row (`RowRegisters`), with tombstones and the shadow table of last-writer-wins deletes.
    @_spi(ModelAdapter) public var snapshotSchemaVersion: Int { 2 }

    @_spi(ModelAdapter) public func writeSnapshot(to url: URL, localClient: String) throws -> [String: Int64]? {
        try collectTombstonesWithSavedHorizon(localClient: localClient)
        return try wrap("writing a snapshot") {
            // A scratch copy is trimmed, then `VACUUM INTO` writes the snapshot: one rewrite of the document where
            // an in-place VACUUM wrote it twice (through a temporary database), and no journal for the scratch copy.
            let scratch = url.deletingLastPathComponent().appendingPathComponent(url.lastPathComponent + "-scratch")
            for file in [url, scratch, URL(fileURLWithPath: scratch.path + "-journal")] {
                try? FileManager.default.removeItem(at: file)
            }
            defer {
                for file in [scratch, URL(fileURLWithPath: scratch.path + "-journal")] {
                    try? FileManager.default.removeItem(at: file)
                }
            }
            let copy = try DatabaseQueue(path: scratch.path)
            try database.backup(to: copy)
            let covers: [String: Int64]? = try copy.writeWithoutTransaction { db in
                guard try !StoreSchema.holdsUnpublishedChanges(db) else { return nil }
                // Rollback mode (a WAL store's copy is in WAL mode), then no journal: a crash loses only scratch.
                try db.execute(sql: "PRAGMA journal_mode = DELETE")
                try db.execute(sql: "PRAGMA journal_mode = OFF")
                try db.execute(sql: "PRAGMA synchronous = OFF")
                let covers = WholeStoreManifest.covers(
                    ledger: try Self.appliedChangeSets(db).contiguous,
                    publishedSequence: try loadState(db).progress.publishedSequence, localClient: localClient)
                // Only synced data and merge metadata travel: app-local tables and triggers stay home.
                let keep = Set(tables.map(\.name) + Self.snapshotMetadataTables)
                for name in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger'") {
                    try db.execute(sql: "DROP TRIGGER \(name.quotedDatabaseIdentifier)")
                }
                // Views stay home too: a receiving store refuses any view but its own (SnapshotCheck).
                for name in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'view'") {
                    try db.execute(sql: "DROP VIEW \(name.quotedDatabaseIdentifier)")
                }
                for name in try String.fetchAll(
                    db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
                where !keep.contains(name) {
                    try db.execute(sql: "DROP TABLE \(name.quotedDatabaseIdentifier)")
                }
                // "No client" means "this client" locally; in a snapshot every stamp names its client.
                try StoreFunctions.addPure(db)
                try db.execute(
                    sql: "UPDATE \(StoreSchema.clocksTable) SET stamps = foldersync_owned(stamps, ?)",
                    arguments: [localClient])
                try db.execute(
                    sql: "UPDATE \(StoreSchema.tombstonesTable) SET client = ? WHERE client IS NULL",
                    arguments: [localClient])
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
        for name in [StoreSchema.pendingChangesTable, StoreSchema.stagedChangesTable] {
            try db.execute(sql: "DELETE FROM \(name)")
        }
        try Self.replaceLedger(db, covers: covers)
        let ownCovered = covers[localClient] ?? 0
        try updateProgress(db) { progress in
            // This client's own sets the store lacks come back from the remote at the next sync.
            progress.ownChangeSetsToReapplyAfter = ownCovered < progress.publishedSequence ? ownCovered : nil
            progress.publishedSequence = max(progress.publishedSequence, ownCovered)
            // Never number a set again: one staged before may already be on the remote (a sync stopped between
            // its upload and its bookkeeping), and is published again as it is.
            progress.nextSequence = max(progress.nextSequence, progress.publishedSequence + 1)
            // In the install's own transaction (or file): an installed store is never looked for again by a first sync.
            progress.hasBootstrapped = true
        }
    }

    /// Refuses, before anything of it is read into this store, a snapshot that holds anything but this store's
    /// synced tables, their indexes and the merge metadata, or that fails SQLite's quick check (``SnapshotCheck``).
    /// Errors name the remote whole store the file was downloaded from when ``WholeStoreReader`` verified it, and
    /// `url` otherwise.
    func verifySnapshot(_ url: URL, _ db: Database) throws {
        try SnapshotCheck.verify(at: url, path: url.path, schema: try snapshotSchema(db), integrity: .quick)
    }

    /// The whole check of a downloaded snapshot against this store's schema (``SnapshotCheck``), without installing
    /// it: for a download that tries the next whole store when one is refused. The install runs it again (cheaply:
    /// SQLite's quick check is not repeated for a file that passed it unchanged).
    /// - Throws: ``FolderSyncError/Code/corruptFile`` naming the whole store and what it holds.
    @_spi(ModelAdapter) public func checkSnapshot(at url: URL) throws {
        try wrap("checking a whole store") {
            try database.read { db in try verifySnapshot(url, db) }
        }
    }

    /// Converts, in the downloaded file, registers written without their head (a whole store whose snapshot is of
    /// bookkeeping version 2, which records no snapshot schema number) into today's encoding, as opening a local
    /// store of that version does. A row of either encoding is told by its bytes (``LegacyRegisters/lacksHead(_:)``);
    /// snapshots of today's encoding are left as they are, at the cost of reading one row.
    /// - Throws: ``FolderSyncError/Code/corruptFile`` naming the snapshot when a row reads in neither encoding.
    static func convertHeadlessRegisters(inSnapshotAt url: URL) throws {
        let snapshot = try DatabaseQueue(path: url.path)
        defer { try? snapshot.close() }
        try snapshot.write { db in
            guard let first = try Data.fetchOne(db, sql: "SELECT stamps FROM \(StoreSchema.clocksTable) LIMIT 1"),
                LegacyRegisters.lacksHead(first)
            else { return }
            do {
                try StoreSchema.addNewestTimestampHeads(db)
            } catch let error as FolderSyncError {
                throw FolderSyncError(
                    .corruptFile, "its snapshot's registers cannot be read: \(error.message)", path: url.path)
            }
        }
    }

    /// What a snapshot installed into this store may hold: each synced table with the sync-ID column and no column
    /// the store's table lacks, the merge metadata tables with exactly the store's columns, the store's own views.
    func snapshotSchema(_ db: Database) throws -> SnapshotSchema {
        var schema = SnapshotSchema(tables: [:])
        for table in tables {
            let local = try Row.fetchAll(db, sql: "PRAGMA main.table_xinfo(\(table.name.quotedDatabaseIdentifier))")
            schema.tables[table.name] = .init(
                required: [table.syncIDColumn],
                allowed: Set(local.map { $0["name"] as String }),
                generated: Set(local.filter { ($0["hidden"] as Int) != 0 }.map { $0["name"] as String }))
        }
        for name in Self.snapshotMetadataTables {
            let local = Set(
                try Row.fetchAll(db, sql: "PRAGMA main.table_xinfo(\(name.quotedDatabaseIdentifier))").map {
                    $0["name"] as String
                })
            schema.tables[name] = .init(required: local, allowed: local)
        }
        for row in try Row.fetchAll(db, sql: "SELECT name, sql FROM main.sqlite_master WHERE type = 'view'") {
            schema.views[row["name"]] = row["sql"]
        }
        return schema
    }

    @_spi(ModelAdapter) public func restoreSnapshot(from url: URL, covers: [String: Int64], localClient: String) throws
    {
        try wrap("installing a whole store") {
            try database.writeWithoutTransaction { db in
                try verifySnapshot(url, db)
                try Self.convertHeadlessRegisters(inSnapshotAt: url)
                if try installPages(of: url, covers: covers, localClient: localClient, db) { return }
                try db.execute(sql: "ATTACH DATABASE ? AS snapshot", arguments: [url.path])
                let restoreForeignKeys = try Self.suspendForeignKeys(db)
                defer {
                    capturing.withLock { $0 = true }
                    restoreForeignKeys()
                    try? db.execute(sql: "DETACH DATABASE snapshot")
                }
                try db.inTransaction {
                    try settleDeletions(db)
                    let unpublished = try unpublishedRows(db)
                    let had = (
                        ledger: try Self.appliedChangeSets(db), published: try loadState(db).progress.publishedSequence
                    )
                    // A store covering every set this client published holds each of its published writes, or the
                    // delete that ended the row (whose tombstone may be collected, <doc:TombstoneCollection>): none is
                    // kept over it.
                    let ownWrites =
                        Self.coversOwnSets(covers, published: had.published, localClient: localClient)
                        ? OwnWrites() : try ownPublishedWrites(db)
                    capturing.withLock { $0 = false }
                    try replaceSyncedData(db, path: url.path)
                    try keepNewer(ownWrites, localClient: localClient, db)
                    try recordInstalledStore(covers: covers, localClient: localClient, db)
                    clock.observe(HybridTimestamp(rawValue: try StoreClock.newestStamp(db)))
                    capturing.withLock { $0 = true }
                    try reapply(unpublished, localClient: localClient, db) { row in
                        Self.holdsEveryWrite(of: row, covers: covers, had: had, localClient: localClient)
                    }
                    try notifyObservers(ofChangesIn: tables.map(\.name), db)
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
        /// Every column of the row as it is locally, when it exists, and its registers: to put it back if the store
        /// lacks it.
        var row: [String: DatabaseValue]? = nil
        var registers = RowRegisters()
        /// When each marked column was written here (its register's timestamp): the write keeps its own time when it
        /// is put back, so that it wins or loses against the installed store by when it was made.
        var stamps: [String: UInt64] = [:]
        /// When the row was deleted here, for a delete.
        var deletionStamp: UInt64?
    }

    private func unpublishedRows(_ db: Database) throws -> [UnpublishedRow] {
        var rows: [String: UnpublishedRow] = [:]
        for row in try Row.fetchAll(db, sql: StoreSchema.unpublishedChanges) {
            let name: String = row[0]
            let syncID: String = row[1]
            guard let table = tablesByName[name] else { continue }
            let key = name + "\u{0}" + syncID
            var entry =
                rows[key] ?? UnpublishedRow(table: table, syncID: syncID, deleted: false, created: false, values: [:])
            let registers = try self.registers(db, table: name, syncID: syncID) ?? RowRegisters()
            entry.registers = registers
            for column in try PendingMarks(row[2] as Data?).expanded(columns: columns[name] ?? []).names {
                switch column {
                case StoreSchema.deletedMarker:
                    entry.deleted = true
                    entry.deletionStamp = try Int64.fetchOne(
                        db, sql: "SELECT hlc FROM \(StoreSchema.tombstonesTable) WHERE tbl = ? AND sync_id = ?",
                        arguments: [name, syncID]
                    ).map { UInt64(bitPattern: $0) }
                case StoreSchema.createdMarker: entry.created = true
                default:
                    if let current = try Row.fetchOne(
                        db,
                        sql:
                            "SELECT \(column.quotedDatabaseIdentifier) FROM \(name.quotedDatabaseIdentifier) WHERE \(table.syncIDColumn.quotedDatabaseIdentifier) = ?",
                        arguments: [syncID])
                    {
                        entry.values[column] = current[0]
                        if let register = registers[column], register.client == nil {
                            entry.stamps[column] = register.timestamp
                        }
                    }
                }
            }
            rows[key] = entry
        }
        for (key, entry) in rows where !entry.deleted {
            let table = entry.table
            let names = columns[table.name] ?? []
            guard !names.isEmpty,
                let current = try Row.fetchOne(
                    db,
                    sql:
                        "SELECT \(names.map(\.quotedDatabaseIdentifier).joined(separator: ", ")) FROM \(table.name.quotedDatabaseIdentifier) WHERE \(table.syncIDColumn.quotedDatabaseIdentifier) = ?",
                    arguments: [entry.syncID])
            else { continue }
            rows[key]?.row = Dictionary(
                uniqueKeysWithValues: names.enumerated().map { ($0.element, current[$0.offset] as DatabaseValue) })
        }
        return Array(rows.values)
    }

    private func replaceSyncedData(_ db: Database, path: String) throws {
        for table in tables {
            let quoted = table.name.quotedDatabaseIdentifier
            let snapshotColumns = Set(
                try Row.fetchAll(db, sql: "PRAGMA snapshot.table_info(\(quoted))").map { $0["name"] as String })
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

    /// Whether a store covering `covers` covers every change set this client published (`published` of them).
    static func coversOwnSets(_ covers: [String: Int64], published: Int64, localClient: String) -> Bool {
        (covers[localClient] ?? 0) >= published
    }

    /// Whether a store covering `covers` holds every write this client had of `row` (the sets its registers' writes
    /// came in, bounded by what this client had applied of their authors, and its own published sets): then the store
    /// has the row, or deleted it; lacking both, the row's delete was collected (<doc:TombstoneCollection>).
    ///
    /// A column written here and not yet published names no set: the write it replaced, which may be the row's
    /// creation, came in any set this client had. Such a column is held only by a store that covers all of them.
    static func holdsEveryWrite(
        of row: UnpublishedRow, covers: [String: Int64],
        had: (ledger: AppliedChangeSets, published: Int64), localClient: String
    ) -> Bool {
        let ownCovered = coversOwnSets(covers, published: had.published, localClient: localClient)
        func coversApplied(of author: String) -> Bool {
            let applied = max(had.ledger.highestContiguousSequence(of: author), had.ledger.beyond[author]?.max() ?? 0)
            return (covers[author] ?? 0) >= applied
        }
        return row.registers.registers.allSatisfy { register in
            guard let author = register.client else {
                guard row.stamps[register.column] == register.timestamp else { return ownCovered }
                let authors = Set(had.ledger.contiguous.keys).union(had.ledger.beyond.keys)
                return ownCovered && authors.allSatisfy(coversApplied)
            }
            return coversApplied(of: author)
        }
    }

    /// Writes unpublished local changes again, with change capture on: they become local changes again. Each keeps the
    /// time it was written: a column the installed store holds from a newer write keeps the store's value, and one
    /// written here later wins and travels, by the writes' own clocks, never by when the store was installed. An update
    /// of a row the store lacks, with no tombstone, puts the row back when the store covers less than this client had
    /// of it (`holdsEveryWrite` false); otherwise the row was deleted and its tombstone collected, and the update is
    /// dropped as a write to a deleted row (the reset's backup keeps it). Under last writer wins, a row the store
    /// deleted takes the writes as a remote write does (`reapplyToDeletedRow`): it comes back only if one is newer.
    private func reapply(
        _ rows: [UnpublishedRow], localClient: String, _ db: Database,
        holdsEveryWrite: (UnpublishedRow) -> Bool
    ) throws {
        for var row in rows {
            // Columns the store holds from a newer write keep the store's value: another client's, or this client's
            // own, published after the local change (a store restored from a copy taken before that change was
            // published brings it back as unpublished).
            let stored = try registers(db, table: row.table.name, syncID: row.syncID) ?? RowRegisters()
            for (name, timestamp) in row.stamps {
                guard let theirs = stored.stamp(of: name, localClient: localClient) else { continue }
                if theirs > ChangeStamp(timestamp: HybridTimestamp(rawValue: timestamp), clientIdentifier: localClient)
                {
                    row.values[name] = nil
                    row.stamps[name] = nil
                }
            }
            let table = row.table.name.quotedDatabaseIdentifier
            let id = row.table.syncIDColumn.quotedDatabaseIdentifier
            let exists =
                try Bool.fetchOne(
                    db, sql: "SELECT EXISTS (SELECT 1 FROM \(table) WHERE \(id) = ?)", arguments: [row.syncID]) ?? false
            let tombstoned =
                try Bool.fetchOne(
                    db,
                    sql: "SELECT EXISTS (SELECT 1 FROM \(StoreSchema.tombstonesTable) WHERE tbl = ? AND sync_id = ?)",
                    arguments: [row.table.name, row.syncID]) ?? false
            if row.deleted {
                let deletion = row.deletionStamp.map {
                    ChangeStamp(timestamp: HybridTimestamp(rawValue: $0), clientIdentifier: localClient)
                }
                if row.table.deletePolicy == .lastWriterWins, let deletion,
                    let newest = stored.newest(localClient: localClient), newest > deletion
                {
                    continue  // last writer wins: the store holds a write made after this delete
                }
                if exists {
                    try db.execute(sql: "DELETE FROM \(table) WHERE \(id) = ?", arguments: [row.syncID])
                    if let stamp = row.deletionStamp {
                        try db.execute(
                            sql: "UPDATE \(StoreSchema.tombstonesTable) SET hlc = ? WHERE tbl = ? AND sync_id = ?",
                            arguments: [Int64(bitPattern: stamp), row.table.name, row.syncID])
                    }
                } else if try !tombstoned
                    || row.table.deletePolicy == .lastWriterWins
                        && deletion.map({
                            MergeRule.isNewer(
                                $0, than: try tombstone(db, row.table.name, row.syncID, localClient: localClient))
                        }) ?? false
                {
                    // A row the store does not have (created here, or by a change set the store does not cover):
                    // the delete must still stand and travel, or that change set would bring the row back. Under last
                    // writer wins, one newer than the store's delete travels too: it removes writes made in between.
                    try db.execute(
                        sql:
                            "INSERT OR REPLACE INTO \(StoreSchema.tombstonesTable)(tbl, sync_id, hlc, client) VALUES (?, ?, ?, NULL)",
                        arguments: [
                            row.table.name, row.syncID,
                            try Int64(bitPattern: row.deletionStamp ?? clock.tick(now: now()).rawValue),
                        ])
                    try updatePendingMarks(
                        db, table: row.table.name, syncID: row.syncID, add: [StoreSchema.deletedMarker], remove: [])
                }
                continue
            }
            if !exists, row.table.deletePolicy == .lastWriterWins,
                let tombstone = try tombstone(db, row.table.name, row.syncID, localClient: localClient)
            {
                try reapplyToDeletedRow(row, deletedAt: tombstone, localClient: localClient, db)
                continue
            }
            let names = row.values.keys.sorted()
            if exists, !names.isEmpty {
                try db.execute(
                    sql:
                        "UPDATE \(table) SET \(names.map { "\($0.quotedDatabaseIdentifier) = ?" }.joined(separator: ", ")) WHERE \(id) = ?",
                    arguments: StatementArguments(names.map { row.values[$0]! }) + [row.syncID])
                // A column whose value equals the store's is not changed by the UPDATE, so no trigger records it;
                // it is still this client's unpublished change, and travels with the time it was written.
                var registers = try self.registers(db, table: row.table.name, syncID: row.syncID) ?? RowRegisters()
                for name in names {
                    registers.set(name, timestamp: try row.stamps[name] ?? clock.tick(now: now()).rawValue, client: nil)
                }
                try saveRegisters(db, registers, table: row.table.name, syncID: row.syncID)
                try updatePendingMarks(db, table: row.table.name, syncID: row.syncID, add: names, remove: [])
            } else if !exists, row.created, !(tombstoned && row.table.deletePolicy == .deleteWins) {
                let all = [row.table.syncIDColumn] + names
                try db.execute(
                    sql:
                        "INSERT INTO \(table)(\(all.map(\.quotedDatabaseIdentifier).joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: all.count).joined(separator: ", ")))",
                    arguments: [row.syncID] + StatementArguments(names.map { row.values[$0]! }))
                try keepStamps(row, names: names, db)
            } else if !exists, let local = row.row, !names.isEmpty, !tombstoned, !holdsEveryWrite(row) {
                // An update to a row the store does not have yet (it covers less than this client had applied):
                // put the row back as it was here, with the registers it had (the change sets that brought the other
                // columns find them as they left them when they come again); only the updated columns become new
                // local changes. Without their registers, a later write of the value a column holds had no stamp.
                let all = local.keys.sorted()
                try db.execute(
                    sql:
                        "INSERT INTO \(table)(\(([id] + all.map(\.quotedDatabaseIdentifier)).joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: all.count + 1).joined(separator: ", ")))",
                    arguments: [row.syncID] + StatementArguments(all.map { local[$0]! }))
                let marks = try PendingMarks(
                    try Data.fetchOne(
                        db,
                        sql: """
                            SELECT marks FROM \(StoreSchema.pendingChangesTable) WHERE tbl = ? AND sync_id = ? AND staged_in = 0
                            """, arguments: [row.table.name, row.syncID]))
                try updatePendingMarks(
                    db, table: row.table.name, syncID: row.syncID, add: [],
                    remove: marks.expanded(columns: columns[row.table.name] ?? []).names.filter { !names.contains($0) })
                try saveRegisters(db, row.registers, table: row.table.name, syncID: row.syncID)
            }
        }
    }

    /// Last writer wins, a row the installed store deleted: this client's writes to it merge into the deleted row's
    /// registers and kept values, as a remote write's do (`applyToDeletedRow`), and stay local changes. The row comes
    /// back only when one of them is newer than the delete; otherwise they travel as writes to the deleted row, and
    /// every replica keeps the row deleted.
    private func reapplyToDeletedRow(
        _ row: UnpublishedRow, deletedAt tombstone: ChangeStamp, localClient: String,
        _ db: Database
    ) throws {
        let table = row.table.name
        let names = row.stamps.keys.filter { row.values[$0] != nil }.sorted()
        guard !names.isEmpty else { return }
        var registers = try self.registers(db, table: table, syncID: row.syncID) ?? RowRegisters()
        for name in names {
            registers.set(name, timestamp: row.stamps[name]!, client: nil)
            try db.execute(
                sql: "INSERT OR REPLACE INTO \(StoreSchema.shadowTable)(tbl, sync_id, col, value) VALUES (?, ?, ?, ?)",
                arguments: [table, row.syncID, name, row.values[name]!])
        }
        let alive = MergeRule.isAlive(newestWrite: registers.newest(localClient: localClient), deletedAt: tombstone)
        // A row coming back: a column the store kept nothing of keeps the value and the register it had here.
        let values = row.row ?? [:]
        for register in row.registers.registers
        where alive && values[register.column] != nil && registers[register.column] == nil {
            registers.set(register.column, timestamp: register.timestamp, client: register.client)
        }
        try saveRegisters(db, registers, table: table, syncID: row.syncID)
        try updatePendingMarks(
            db, table: table, syncID: row.syncID,
            add: names + (row.created ? [StoreSchema.createdMarker] : []), remove: [])
        guard alive else { return }
        // The row's values: the store's kept ones and this client's writes (registers and marks are set above).
        capturing.withLock { $0 = false }
        defer { capturing.withLock { $0 = true } }
        try bringBack(db, table: row.table, syncID: row.syncID, values: values)
    }

    /// Gives the columns `names` of a row put back the times they were written here (the trigger stamped them now).
    private func keepStamps(_ row: UnpublishedRow, names: [String], _ db: Database) throws {
        var registers = try self.registers(db, table: row.table.name, syncID: row.syncID) ?? RowRegisters()
        for name in names {
            if let timestamp = row.stamps[name] { registers.set(name, timestamp: timestamp, client: nil) }
        }
        try saveRegisters(db, registers, table: row.table.name, syncID: row.syncID)
    }

    @_spi(ModelAdapter) public func backup(to url: URL) throws {
        try wrap("backing up the store") {
            try? FileManager.default.removeItem(at: url)
            // The user's data: a file of this user's alone (SQLite keeps an existing file's mode, journals take it
            // too).
            let fd = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, LocalFiles.privateFileMode)
            guard fd >= 0 else { throw LocalFiles.error("create the backup", path: url.path) }
            Glibc.close(fd)
            let copy = try DatabaseQueue(path: url.path)
            try database.backup(to: copy)
            try copy.close()
        }
    }

    @_spi(ModelAdapter) public func markBootstrapped() throws {
        try wrap("saving the sync state") {
            try database.write { db in try updateProgress(db) { $0.hasBootstrapped = true } }
        }
    }

    @_spi(ModelAdapter) public func resetForRejoin() throws {
        try wrap("preparing to re-join") {
            try database.write { db in
                try settleDeletions(db)
                // Deletes not yet published are unpushed local changes: they travel again, like the rows (invariant 5),
                // each with the time it was made.
                let pendingDeletes = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT DISTINCT u.tbl, u.sync_id, d.hlc FROM (\(StoreSchema.unpublishedChanges)) u
                        LEFT JOIN \(StoreSchema.tombstonesTable) d ON d.tbl = u.tbl AND d.sync_id = u.sync_id
                        WHERE foldersync_marked(u.marks, ?)
                        """, arguments: [StoreSchema.deletedMarker]
                ).map { ($0[0] as String, $0[1] as String, $0[2] as Int64?) }
                // The old epoch's merge history goes, but for the time each value was written (its register).
                for name in [
                    StoreSchema.tombstonesTable, StoreSchema.tombstoneSetsTable, StoreSchema.shadowTable,
                    StoreSchema.pendingChangesTable, StoreSchema.stagedChangesTable,
                ] {
                    try db.execute(sql: "DELETE FROM \(name)")
                }
                // The old epoch's horizon numbers change sets this epoch numbers again from 1: kept, the next
                // snapshot would collect this epoch's tombstones by it.
                try db.execute(
                    sql: "DELETE FROM \(StoreSchema.metaTable) WHERE key = ?", arguments: [Self.tombstoneHorizonKey])
                try Self.replaceLedger(db)
                let synced = tables.map(\.name)
                try db.execute(
                    sql:
                        "DELETE FROM \(StoreSchema.clocksTable) WHERE tbl NOT IN (\(synced.map { _ in "?" }.joined(separator: ", ")))",
                    arguments: StatementArguments(synced))
                for table in tables {
                    let names = columns[table.name] ?? []
                    let quoted = table.name.quotedDatabaseIdentifier
                    let id = table.syncIDColumn.quotedDatabaseIdentifier
                    try db.execute(
                        sql:
                            "DELETE FROM \(StoreSchema.clocksTable) WHERE tbl = ? AND sync_id NOT IN (SELECT \(id) FROM \(quoted))",
                        arguments: [table.name])
                    if !names.isEmpty {
                        let arguments = StatementArguments([table.name]) + StatementArguments(names)
                        let columnsList = names.map { _ in "?" }.joined(separator: ", ")
                        try db.execute(
                            sql:
                                "UPDATE \(StoreSchema.clocksTable) SET stamps = foldersync_rejoined(stamps, \(columnsList)) WHERE tbl = ?",
                            arguments: StatementArguments(names) + [table.name])
                        try db.execute(
                            sql: """
                                INSERT INTO \(StoreSchema.clocksTable)(tbl, sync_id, stamps)
                                SELECT ?1, t.\(id), foldersync_rejoined(NULL, \(names.indices.map { "?\($0 + 2)" }.joined(separator: ", "))) FROM \(quoted) t
                                WHERE NOT EXISTS (SELECT 1 FROM \(StoreSchema.clocksTable) c WHERE c.tbl = ?1 AND c.sync_id = t.\(id))
                                """, arguments: arguments)
                    }
                    try db.execute(
                        sql: """
                            INSERT OR REPLACE INTO \(StoreSchema.pendingChangesTable)(tbl, sync_id, staged_in, marks)
                            SELECT ?, \(id), 0, ? FROM \(quoted)
                            """,
                        arguments: [
                            table.name,
                            PendingMarks([StoreSchema.createdMarker, StoreSchema.allColumnsMarker]).encoded,
                        ])
                }
                let tombstones = try db.makeStatement(
                    sql:
                        "INSERT OR REPLACE INTO \(StoreSchema.tombstonesTable)(tbl, sync_id, hlc, client) VALUES (?, ?, ?, NULL)"
                )
                let pending = try db.makeStatement(
                    sql: """
                        INSERT OR REPLACE INTO \(StoreSchema.pendingChangesTable)(tbl, sync_id, staged_in, marks) VALUES (?, ?, 0, ?)
                        """)
                let deleted = PendingMarks([StoreSchema.deletedMarker]).encoded
                for (table, syncID, stamp) in pendingDeletes {
                    try pending.execute(arguments: [table, syncID, deleted])
                    try tombstones.execute(arguments: [
                        table, syncID, try stamp ?? Int64(bitPattern: clock.tick(now: now()).rawValue),
                    ])
                }
                try updateProgress(db) { $0 = LocalSyncState.Progress() }
            }
        }
    }
}
