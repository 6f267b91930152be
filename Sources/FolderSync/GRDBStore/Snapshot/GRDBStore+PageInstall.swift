import Foundation
import GRDB

/// The fast install of a whole store: into a store that holds no synced data yet (a new device's first sync),
/// the snapshot's pages are copied whole instead of its rows.
///
/// Copying rows (`INSERT … SELECT` of every row and clock row, with their B-tree and index maintenance) costs
/// many times a file copy. Here the snapshot, a scratch file nobody else sees, is completed into the document
/// the store must become: the app's tables that do not sync (with their rows), the bookkeeping tables, every
/// index, view and trigger, the header's user version and application ID are carried over from the store as
/// opaque SQL and rows, and the ledger and sync state written as the row-by-row install writes them. Then
/// SQLite's backup API copies its pages into the store's file in one write transaction of the store's own
/// connection: a kill at any point leaves the old store (the journal rolls the copy back) or the new one.
///
/// Everything runs inside the store's serialized write access, so no app write can fall between reading the
/// app's tables and replacing them.
///
/// A new device's first open does without the page copy: the completed snapshot takes the store's place by a
/// rename, before the app opens it (``completeForRename(_:covers:localClient:)``).
extension GRDBStore {
    /// Installs `snapshot` page by page when the store allows it; returns `false` (having changed nothing)
    /// when it does not, and the rows must be merged instead.
    ///
    /// The store allows it when it holds no synced row, no register, tombstone or pending change (so nothing
    /// local needs merging), and the snapshot's synced and metadata tables and their indexes are declared
    /// exactly as the store's (so the app's schema and the store's file agree after the copy).
    func installPages(of snapshot: URL, covers: [String: Int64], localClient: String, _ db: Database) throws -> Bool {
        // The clock's first read has its own connection, which must be closed before the store leaves WAL mode.
        try clock.waitUntilSeeded()
        guard let source = try completedSnapshot(snapshot, covers: covers, localClient: localClient, db) else {
            return false
        }
        defer { try? source.close() }
        // The newest change stamp, which the clock must observe, read from the snapshot on a second thread while
        // its pages are copied (a pass over every clock row; both only read the snapshot).
        let newest = Locked<Result<UInt64, any Error>>(.success(0))
        let snapshotPath = snapshot.path
        let reader = HandoffThread {
            newest.withLock { $0 = Result { try StoreClock.newestStamp(inDocumentAt: snapshotPath) } }
        }
        defer { reader.join() }
        try withRollbackJournal(db) {
            // In steps, so that a test can die between two; the destination's write transaction spans all of them.
            let seam = pageInstallSeam.current
            try source.inDatabase { copy in
                try copy.backup(to: db, pagesPerStep: CInt(max(1, seam.pagesPerStep))) { progress in
                    seam.observer?(progress.completedPageCount, progress.totalPageCount)
                }
            }
        }
        // The copy is no transaction GRDB sees: the app's observers hear of it in an empty one right after, before
        // the write access ends (nothing else writes in between).
        try db.inTransaction {
            try notifyObservers(ofChangesIn: tables.map(\.name), db)
            return .commit
        }
        lastInstallCopiedPages.withLock { $0 = true }
        reader.join()
        clock.observe(HybridTimestamp(rawValue: try newest.current.get()))
        return true
    }

    /// Completes `snapshot` into the document that this store, a new one the app has not used yet, must become,
    /// so that the file can take the store's place by a rename (``DocumentSyncManager/openStore(at:_:)``).
    /// Returns `false`, having completed nothing, when the store does not allow a page install.
    func completeForRename(_ snapshot: URL, covers: [String: Int64], localClient: String) throws -> Bool {
        try wrap("preparing a whole store") {
            try database.writeWithoutTransaction { db in
                try verifySnapshot(snapshot, db)
                try Self.convertHeadlessRegisters(inSnapshotAt: snapshot)
                guard let source = try completedSnapshot(snapshot, covers: covers, localClient: localClient, db) else {
                    return false
                }
                try source.close()
                return true
            }
        }
    }

    /// Completes `snapshot` into the document the store must become, when the store allows a page install (see
    /// ``installPages(of:covers:localClient:_:)``), and returns a connection to it; `nil`, having changed nothing,
    /// when the store does not allow it.
    private func completedSnapshot(_ snapshot: URL, covers: [String: Int64], localClient: String, _ db: Database) throws
        -> DatabaseQueue?
    {
        guard try holdsNoSyncedData(db) else { return nil }
        // The snapshot was checked (verifySnapshot) by the caller. Its connection is hardened like the store's, once
        // journaling is off: a scratch file, which a crash loses nothing of, so the completion needs no journal.
        let source = try DatabaseQueue(
            path: snapshot.path,
            configuration: SQLiteHardening.configuration { copy in
                try copy.execute(sql: "PRAGMA journal_mode = OFF")
                try copy.execute(sql: "PRAGMA synchronous = OFF")
            })
        let installable = try source.writeWithoutTransaction { copy -> Bool in
            guard
                try Self.declarations(copy, schema: "main")
                    == (try Self.declarations(db, schema: "main", of: syncedTableNames)),
                try Int.fetchOne(copy, sql: "PRAGMA page_size") == (try Int.fetchOne(db, sql: "PRAGMA page_size")),
                try Bool.fetchOne(
                    db, sql: "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE sql LIKE 'CREATE VIRTUAL%')") == false
            else { return false }
            // No mmap for the copy's source, although it would save a pread(2) per page: every mapped page counts
            // in the process's resident memory, which a store of any size must not grow with.
            try copy.execute(sql: "ATTACH DATABASE ? AS live", arguments: [database.path])
            defer { try? copy.execute(sql: "DETACH DATABASE live") }
            try carryLocalSchemaAndRows(copy)
            try recordInstalledStore(covers: covers, localClient: localClient, copy)
            return true
        }
        guard installable else {
            try source.close()
            return nil
        }
        return source
    }

    /// Runs `body` (the page copy) with the store in rollback-journal mode, then back in WAL mode.
    ///
    /// In WAL mode every copied page is written twice, to the log then to the file at the checkpoint; with a
    /// rollback journal it is written once, and the journal holds only the few pages the store had (a kill
    /// still leaves the old store: the journal rolls the copy back). Leaving WAL needs this connection to be the
    /// file's only one; when another has it open, the copy runs in WAL mode. A pool stays in WAL mode: its readers
    /// go on reading the old store while the copy is written, and see the new one once it commits.
    private func withRollbackJournal(_ db: Database, _ body: () throws -> Void) throws {
        guard database is DatabaseQueue, try String.fetchOne(db, sql: "PRAGMA journal_mode") == "wal",
            (try? String.fetchOne(db, sql: "PRAGMA journal_mode = DELETE")) == "delete"
        else { return try body() }
        defer { _ = try? String.fetchOne(db, sql: "PRAGMA journal_mode = WAL") }
        try body()
    }

    /// The tables a snapshot carries: the synced ones and the merge metadata.
    private var syncedTableNames: Set<String> { Set(tables.map(\.name) + Self.snapshotMetadataTables) }

    private func holdsNoSyncedData(_ db: Database) throws -> Bool {
        for name in tables.map(\.name) + Self.snapshotMetadataTables + [
            StoreSchema.pendingChangesTable, StoreSchema.stagedChangesTable,
        ] {
            if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(name.quotedDatabaseIdentifier))") == true {
                return false
            }
        }
        return true
    }

    /// The declared SQL of the tables (`of`, or all) and their indexes in `schema`, by name.
    private static func declarations(_ db: Database, schema: String, of names: Set<String>? = nil) throws -> [String:
        String]
    {
        var result: [String: String] = [:]
        for row in try Row.fetchAll(
            db,
            sql: """
                SELECT type, name, tbl_name, sql FROM \(schema).sqlite_master
                WHERE type IN ('table', 'index') AND name NOT LIKE 'sqlite_%'
                """)
        {
            let table: String = row["tbl_name"]
            guard names?.contains(table) ?? true else { continue }
            result[(row["type"] as String) + " " + (row["name"] as String)] = row["sql"] as String? ?? ""
        }
        return result
    }

    /// Creates in `copy` (whose `live` is the store) everything of the store the snapshot lacks, with the rows
    /// of its tables: the app's non-synced tables, the bookkeeping, indexes, views, triggers, header fields.
    private func carryLocalSchemaAndRows(_ copy: Database) throws {
        let present = Set(try String.fetchAll(copy, sql: "SELECT name FROM main.sqlite_master"))
        let entries = try Row.fetchAll(
            copy, sql: "SELECT type, name, tbl_name, sql FROM live.sqlite_master WHERE sql IS NOT NULL ORDER BY rowid")
        var carried = Set<String>()
        for entry in entries where entry["type"] as String == "table" {
            let name: String = entry["name"]
            guard !name.hasPrefix("sqlite_"), !present.contains(name) else { continue }
            try copy.execute(sql: entry["sql"])
            try copy.execute(
                sql:
                    "INSERT INTO main.\(name.quotedDatabaseIdentifier) SELECT * FROM live.\(name.quotedDatabaseIdentifier)"
            )
            carried.insert(name)
        }
        if try Bool.fetchOne(
            copy, sql: "SELECT EXISTS (SELECT 1 FROM live.sqlite_master WHERE name = 'sqlite_sequence')") == true
        {
            try copy.execute(sql: "DELETE FROM main.sqlite_sequence")
            try copy.execute(sql: "INSERT INTO main.sqlite_sequence SELECT * FROM live.sqlite_sequence")
        }
        for entry in entries where entry["type"] as String != "table" {
            let type: String = entry["type"]
            let name: String = entry["name"]
            let table: String = entry["tbl_name"]
            // Indexes of synced tables came with the snapshot (and were compared); triggers never do.
            guard !present.contains(name), type != "index" || carried.contains(table) else { continue }
            try copy.execute(sql: entry["sql"])
        }
        for pragma in ["user_version", "application_id"] {
            let value = try Int.fetchOne(copy, sql: "PRAGMA live.\(pragma)") ?? 0
            try copy.execute(sql: "PRAGMA main.\(pragma) = \(value)")
        }
    }
}
