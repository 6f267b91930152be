import CFileSystem
public import Foundation
public import GRDB

/// A document stored in SQLite through GRDB, with change capture in the app's own transactions.
///
/// Open the document through the store and write with ``database`` as usual
/// (records or raw SQL): triggers record every insert, column update and
/// delete of the synced tables in the same transaction as the write, so a
/// committed write is never lost and never goes unrecorded. Remote changes are applied without capture; the
/// app's own triggers run for them as for its writes (when the database has none, triggers are off meanwhile).
///
/// The store opens the file in WAL mode with `synchronous = FULL`: every commit is durable, at one fsync. Its
/// connection keeps temporary tables, indexes and statement journals in memory (`temp_store = MEMORY`): each
/// statement that changes a synced table runs in a statement transaction whose journal holds the pages it changes,
/// which on a temporary file cost more than the write itself. A single statement that rewrites a large part of the
/// document holds a copy of those pages in memory until it ends.
///
/// The connection runs with the settings SQLite recommends for database files that may come from elsewhere
/// (a whole store is another device's file): defensive mode and `trusted_schema = OFF`. A trigger, view, CHECK
/// constraint, default or generated column of the app's schema may then call only SQLite's built-in functions
/// and functions registered with `SQLITE_INNOCUOUS`.
///
/// ```swift
/// let store = try GRDBStore(path: url.path, tables: [SyncedTable("notes")], connection: .pool, migrator: migrator)
/// try store.database.write { db in try db.execute(sql: "INSERT INTO notes VALUES (?, ?)", arguments: [UUID().uuidString, "Hi"]) }
/// ```
///
/// A `DatabasePool` (``Connection/pool``) lets the app read while a sync writes; every change a sync makes reaches
/// the app's GRDB observers in the transaction that made it (<doc:GRDBApps>).
public final class GRDBStore: ModelAdapter, Sendable {
    /// The app's connection to the document: a `DatabaseQueue` or a `DatabasePool` (``Connection``). Read and
    /// write through it, observe it (`ValueObservation`, `DatabaseRegionObservation`); writes through other
    /// connections fail. Every change a sync makes reaches its transaction observers in the transaction that made it.
    public let database: any DatabaseWriter
    /// The synced tables, as given when the store was opened.
    public let tables: [SyncedTable]
    public let schemaVersion: Int
    /// Column names of each synced table, sync-ID column excluded.
    let columns: [String: [String]]
    let tablesByName: [String: SyncedTable]
    let capturing: Locked<Bool>
    let clock: StoreClock
    let now: @Sendable () -> Date
    /// How the last whole store was installed (`true`: its pages, `false`: its rows), for tests and benchmarks.
    let lastInstallCopiedPages = Locked<Bool?>(nil)
    /// Test seam: called after each step of a page install with the pages copied so far and the total, so a
    /// test can kill the process in the middle of the copy. Steps are `pageInstallPagesPerStep` pages.
    @_spi(Testing) public var pageInstallStepObserver: (@Sendable (_ copied: Int, _ total: Int) -> Void)? {
        get { pageInstallSeam.current.observer }
        set { pageInstallSeam.withLock { $0.observer = newValue } }
    }
    /// Test seam: pages per step of a page install (4,096 by default: 16 MiB steps of 4 KiB pages).
    @_spi(Testing) public var pageInstallPagesPerStep: Int {
        get { pageInstallSeam.current.pagesPerStep }
        set { pageInstallSeam.withLock { $0.pagesPerStep = newValue } }
    }
    let pageInstallSeam = Locked<(observer: (@Sendable (Int, Int) -> Void)?, pagesPerStep: Int)>((nil, 4096))
    /// The sync state as last read or written, with its bytes (``loadState(_:)``): a cache by content, so that a
    /// write by any other path (or a transaction rolled back) is read again.
    let stateCache = Locked<(data: Data, state: LocalSyncState)?>(nil)

    /// How the store connects to its file.
    ///
    /// - ``queue``: one connection for reads and writes (GRDB's `DatabaseQueue`): the app's reads wait while a
    ///   sync applies a change set. Enough for a command-line tool, or an app that reads little while it syncs.
    /// - ``pool``: one writer beside several readers (GRDB's `DatabasePool`): the app's reads run while a sync
    ///   writes, and each sees the last committed state, never a change set half applied. What an app with a
    ///   user interface should pick: a view's refresh never waits for a sync.
    public enum Connection: Sendable, Hashable {
        /// A `DatabaseQueue`: reads and writes take turns on one connection.
        case queue
        /// A `DatabasePool`: reads run beside the one writer, on snapshots of the last commit.
        case pool
    }

    /// Opens (creating if needed) the document at `path`, its schema made or migrated by `migrate`.
    ///
    /// - Parameters:
    ///   - path: the SQLite file of the document.
    ///   - tables: the synced tables; each needs a text primary key.
    ///   - schemaVersion: the app's schema version, written into every change set.
    ///   - connection: a queue or a pool (``Connection``).
    ///   - configuration: the app's GRDB configuration (foreign keys, tracing, reader count…). The store adds what
    ///     it needs: WAL mode, its SQL functions and hardening on every connection, a busy timeout of 30 seconds
    ///     when the app set none; a read-only configuration is refused.
    ///   - now: the wall clock feeding the hybrid logical clock (injected by tests).
    ///   - migrate: creates or migrates the app's tables; runs before change capture is installed, in the store's
    ///     opening transaction.
    /// - Throws: ``FolderSyncError/Code/unsupportedFormatVersion`` when a newer FolderSync wrote the store's
    ///   bookkeeping (the store is left untouched); ``FolderSyncError/Code/localStoreFailed`` when SQLite fails.
    ///   A store of an older FolderSync is brought up to date, once, as it is opened.
    public convenience init(
        path: String, tables: [SyncedTable], schemaVersion: Int = 1,
        connection: Connection = .queue, configuration: Configuration = Configuration(),
        now: @escaping @Sendable () -> Date = { Date() },
        migrate: (Database) throws -> Void
    ) throws {
        try self.init(
            path: path, tables: tables, schemaVersion: schemaVersion, connection: connection,
            configuration: configuration, now: now, migrator: nil, migrate: migrate)
    }

    /// Opens (creating if needed) the document at `path`, its schema made or migrated by the app's `migrator`.
    ///
    /// The migrator's pending migrations run before change capture is installed, each in its own transaction as
    /// GRDB runs them; rows they write to synced tables are captured as the app's own writes (by the triggers the
    /// store left in the file the last time it was opened), stamped after everything the store holds.
    ///
    /// ```swift
    /// var migrator = DatabaseMigrator()
    /// migrator.registerMigration("notes") { db in
    ///     try db.create(table: "notes") { t in
    ///         t.primaryKey("id", .text)
    ///         t.column("body", .text).notNull().defaults(to: "")
    ///     }
    /// }
    /// let store = try GRDBStore(path: url.path, tables: [SyncedTable("notes")], connection: .pool, migrator: migrator)
    /// ```
    ///
    /// Raise `schemaVersion` with each migration that changes a synced table: change sets of a newer version are
    /// parked on devices that run an older app, until it is updated (<doc:ChangingASyncedSchema>).
    ///
    /// - Throws: ``FolderSyncError/Code/unsupportedFormatVersion`` when the database holds a migration the
    ///   migrator does not know (a newer version of the app migrated it: update the app), or a newer FolderSync
    ///   wrote the store's bookkeeping; ``FolderSyncError/Code/invalidConfiguration`` for a migrator that erases the
    ///   database on schema changes (it would erase the sync bookkeeping); ``FolderSyncError/Code/localStoreFailed``
    ///   when SQLite or a migration fails. See
    ///   ``init(path:tables:schemaVersion:connection:configuration:now:migrate:)`` for the other parameters.
    public convenience init(
        path: String, tables: [SyncedTable], schemaVersion: Int = 1,
        connection: Connection = .queue, configuration: Configuration = Configuration(),
        now: @escaping @Sendable () -> Date = { Date() },
        migrator: DatabaseMigrator
    ) throws {
        try self.init(
            path: path, tables: tables, schemaVersion: schemaVersion, connection: connection,
            configuration: configuration, now: now, migrator: migrator, migrate: { _ in })
    }

    /// Opens the store, its schema brought up to date by `migrator` (when there is one), then `migrate`.
    private init(
        path: String, tables: [SyncedTable], schemaVersion: Int, connection: Connection,
        configuration appConfiguration: Configuration, now: @escaping @Sendable () -> Date,
        migrator: DatabaseMigrator?, migrate: (Database) throws -> Void
    ) throws {
        let capturing = Locked(true)
        let clock = StoreClock()
        do {
            // Before the connection: opening one for writing writes to the file (GRDB's WAL set-up).
            try StoreSchema.refuseNewerBookkeeping(atPath: path)
            if let migrator { try Self.refuseUnknownMigrations(atPath: path, migrator: migrator) }
            let configuration = try Self.storeConfiguration(
                appConfiguration, capturing: capturing, clock: clock,
                now: now)
            database =
                switch connection {
                case .queue: try DatabaseQueue(path: path, configuration: configuration)
                case .pool: try DatabasePool(path: path, configuration: configuration)
                }
            // Full sync once the connection is open: GRDB's WAL set-up, which runs after `prepareDatabase`, sets
            // `synchronous = NORMAL`, under which a commit is not synced and a power loss can take it back.
            try database.writeWithoutTransaction { try $0.execute(sql: "PRAGMA synchronous = FULL") }
            if let migrator { try Self.migrate(database, with: migrator, clock: clock, path: path) }
            var columns: [String: [String]] = [:]
            try database.write { db in
                // A store of a newer bookkeeping version is refused before anything, the app's migration included,
                // writes to it (the transaction then rolls back, and the file is left as it was).
                try StoreSchema.checkBookkeepingVersion(db, path: path)
                // The app's migration may write synced rows, through the store's triggers (those its last writer left):
                // stamped after everything the store holds, read then (bookkeeping with registers' heads) if it does.
                if try StoreSchema.hasRegisterHeads(db) {
                    try clock.seedingOnFirstUse({ try StoreClock.newestStamp(db) }, during: { try migrate(db) })
                } else {
                    try migrate(db)
                }
                let firstOpen = try StoreSchema.openBookkeeping(db, path: path)
                for table in tables {
                    let primaryKey = try db.primaryKey(table.name)
                    guard primaryKey.columns == [table.syncIDColumn] else {
                        throw FolderSyncError(
                            .invalidConfiguration,
                            "synced table \(table.name) must have the single primary key \(table.syncIDColumn)")
                    }
                    let names = try db.columns(in: table.name).map(\.name).filter { $0 != table.syncIDColumn }
                    columns[table.name] = names
                    try Self.followRenamedColumns(db, table: table, columns: names)
                    try StoreSchema.installTriggers(db, table: table, columns: names)
                }
                if firstOpen { try Self.recordExistingRows(db, tables: tables, columns: columns) }
            }
            clock.startSeeding(fromDocumentAt: path)
            self.columns = columns
        } catch let error as FolderSyncError {
            throw error
        } catch {
            throw FolderSyncError.localStore(error, while: "opening the document", path: path)
        }
        self.tables = tables
        self.tablesByName = Dictionary(uniqueKeysWithValues: tables.map { ($0.name, $0) })
        self.schemaVersion = schemaVersion
        self.capturing = capturing
        self.clock = clock
        self.now = now
    }

    /// The app's configuration with what the store needs on every connection.
    private static func storeConfiguration(
        _ app: Configuration, capturing: Locked<Bool>, clock: StoreClock,
        now: @escaping @Sendable () -> Date
    ) throws -> Configuration {
        guard !app.readonly else {
            throw FolderSyncError(.invalidConfiguration, "a store cannot be opened read-only: syncs write to it")
        }
        var configuration = app
        configuration.prepareDatabase { db in
            // A page install writes a downloaded file's pages into this one: the connection never trusts its
            // schema and refuses SQL that could corrupt the file (SQLiteHardening).
            try SQLiteHardening.harden(db)
            try StoreFunctions.install(db, capturing: capturing, clock: clock, now: now)
            // Temporary files in memory: a statement that fires triggers runs in a statement transaction, which copies
            // each page it changes into a statement journal. On a temporary file (the default) that is a 64 KiB buffer
            // allocated and freed per statement, then, once one statement needed more, two writes per page to a file
            // for the rest of the transaction: seconds of system time for a bulk of captured inserts and updates.
            // Android's SQLite keeps every temporary in memory the same way.
            try db.execute(sql: "PRAGMA temp_store = MEMORY")
        }
        if case .immediateError = configuration.busyMode { configuration.busyMode = .timeout(30) }
        // WAL with full sync: a commit is one fsync of the log instead of four (journal, folder, journal header,
        // database), and still durable, which publication relies on: a sequence number staged, published, then
        // forgotten by a power loss would be staged again for different changes. A pool needs WAL anyway.
        configuration.journalMode = .wal
        return configuration
    }

    /// Closes the store's connections, so that its file can be removed or replaced.
    func close() throws {
        try? clock.waitUntilSeeded()
        try database.close()
    }

    /// Runs `body` in a write transaction whose changes are not captured (remote changes being applied).
    ///
    /// When the database has no trigger but the capture's, triggers are off meanwhile: the capture functions would
    /// only return, and a statement that fires triggers runs in a statement transaction, whose journal copies every
    /// page it changes (about a seventh of a bulk apply's time). An app's own trigger keeps them on, so that it runs
    /// for remote changes as for local ones.
    ///
    /// `remote`, when given, is what a sync learned of the remote: saved in the same transaction, before it commits
    /// (one commit instead of two). Local deletes are settled first (``settleDeletions(_:)``).
    func writeWithoutCapture<T>(
        savingRemoteKnowledge remote: LocalSyncState.RemoteKnowledge? = nil,
        _ body: (Database) throws -> T
    ) throws -> T {
        try database.writeWithoutTransaction { db in
            let connection = db.sqliteConnection.map { UnsafeMutableRawPointer($0) }
            var triggersOff = false
            var restoreForeignKeys = {}
            capturing.withLock { $0 = false }
            defer {
                // Left off, the app's next writes would go unrecorded: better stop than lose them.
                if triggersOff, foldersync_sqlite_set_triggers(connection, 1) != 1 {
                    fatalError("SQLite did not turn the capture triggers back on")
                }
                capturing.withLock { $0 = true }
                restoreForeignKeys()
            }
            restoreForeignKeys = try Self.suspendForeignKeys(db)
            triggersOff =
                try StoreSchema.holdsOnlyCaptureTriggers(db, tables: tables)
                && foldersync_sqlite_set_triggers(connection, 0) == 0
            var result: T?
            try db.inTransaction {
                try settleDeletions(db)
                result = try body(db)
                if let remote {
                    var state = try loadState(db)
                    state.remote = remote
                    try save(state, db)
                }
                return .commit
            }
            return result!
        }
    }

    /// Tells the app's transaction observers (`ValueObservation`, `DatabaseRegionObservation`, its own
    /// `TransactionObserver`s) that `tables` changed, in the transaction of `db` under way: they see the change when
    /// it commits, as they see the app's writes. GRDB notices only the statements it runs itself; a sync writes
    /// through SQLite's C API too (``SQLiteStatement``) and copies pages whole (a page install).
    func notifyObservers(ofChangesIn tables: some Sequence<String>, _ db: Database) throws {
        for table in tables { try db.notifyChanges(in: Table(table)) }
    }

    /// Turns foreign keys off, if the app has them on, for a merge: references it leaves dangling are reported as
    /// warnings, never refused mid-merge. Returns what puts them back as the app had them.
    static func suspendForeignKeys(_ db: Database) throws -> () -> Void {
        guard try Bool.fetchOne(db, sql: "PRAGMA foreign_keys") == true else { return {} }
        try db.execute(sql: "PRAGMA foreign_keys = OFF")
        return { try? db.execute(sql: "PRAGMA foreign_keys = ON") }
    }

    func wrap<T>(_ what: String, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as FolderSyncError {
            throw error
        } catch {
            throw FolderSyncError.localStore(error, while: what, path: database.path)
        }
    }

    // MARK: Sync state

    private static let stateKey = "state"

    @_spi(ModelAdapter) public func loadSyncState() throws -> LocalSyncState {
        try wrap("reading the sync state") {
            try readOne(loadState)
        }
    }

    /// Runs `body`, reads of one statement each, outside a transaction: each statement reads one consistent state
    /// by itself. `database.read` adds four statements around it (`query_only` on and off, `BEGIN` and `COMMIT`, the
    /// last two compiled at every call), which cost more than the sync's small reads themselves; a sync makes about
    /// a dozen.
    func readOne<T>(_ body: (Database) throws -> T) throws -> T {
        try database.writeWithoutTransaction(body)
    }

    @_spi(ModelAdapter) public func saveRemoteKnowledge(_ remote: LocalSyncState.RemoteKnowledge) throws {
        try wrap("saving the sync state") {
            try database.write { db in
                var state = try loadState(db)
                state.remote = remote
                try save(state, db)
            }
        }
    }

    /// Changes what the store commits (``LocalSyncState/progress``) in the caller's transaction: the one way the
    /// store writes its state, so that it never writes what syncs know of the remote.
    func updateProgress(_ db: Database, _ change: (inout LocalSyncState.Progress) throws -> Void) throws {
        var state = try loadState(db)
        try change(&state.progress)
        try save(state, db)
    }

    func save(_ state: LocalSyncState, _ db: Database) throws {
        let data = state.encodedJSON()
        try db.execute(
            sql: "INSERT OR REPLACE INTO \(StoreSchema.metaTable)(key, value) VALUES (?, ?)",
            arguments: [Self.stateKey, data])
        stateCache.withLock { $0 = (data, state) }
    }

    @_spi(ModelAdapter) public func appliedChangeSets() throws -> AppliedChangeSets {
        try wrap("reading the ledger") {
            try readOne(Self.appliedChangeSets)
        }
    }

    @_spi(ModelAdapter) public func appliedChangeSetIdentifiers(of client: String, sequences: [Int64]) throws -> [Int64:
        Set<String>]?
    {
        try wrap("reading the ledger") {
            try readOne { db in try Self.appliedIdentifiers(db, client: client, sequences: sequences) }
        }
    }

    @_spi(ModelAdapter) public func hasUnpublishedChanges() throws -> Bool {
        try wrap("reading pending changes") {
            try readOne(StoreSchema.holdsUnpublishedChanges)
        }
    }

    @_spi(ModelAdapter) public func markPublished(throughSequence sequence: Int64) throws {
        try markPublished(throughSequence: sequence, remote: nil)
    }

    @_spi(ModelAdapter) public func markPublished(
        throughSequence sequence: Int64, savingRemoteKnowledge remote: LocalSyncState.RemoteKnowledge
    ) throws {
        try markPublished(throughSequence: sequence, remote: .some(remote))
    }

    private func markPublished(throughSequence sequence: Int64, remote: LocalSyncState.RemoteKnowledge?) throws {
        try wrap("marking changes published") {
            try database.write { db in
                var state = try loadState(db)
                // Every staged row belongs to a set numbered below the next sequence: with all of them published, the
                // table is emptied whole, which SQLite does by freeing its pages (100,000 rows: 7 ms, one by one 23
                // ms).
                if sequence >= state.progress.nextSequence - 1 {
                    try db.execute(sql: "DELETE FROM \(StoreSchema.stagedChangesTable)")
                } else {
                    try db.execute(
                        sql: "DELETE FROM \(StoreSchema.stagedChangesTable) WHERE staged_in <= ?", arguments: [sequence]
                    )
                }
                state.progress.publishedSequence = max(state.progress.publishedSequence, sequence)
                if let remote { state.remote = remote }
                try save(state, db)
            }
        }
    }

    @_spi(ModelAdapter) public func apply(
        _ header: ChangeSetHeader, localClient: String, changes: ChangeStream,
        resolutions: [ColumnKey: ConflictResolution],
        savingRemoteKnowledge remote: LocalSyncState.RemoteKnowledge
    ) throws -> ApplyOutcome {
        // Saved by the apply's own transaction, or after it when a constraint rolled that back.
        let outcome = try apply(
            header, localClient: localClient, changes: changes, resolutions: resolutions, remote: remote)
        if outcome.unmetConstraint != nil { try saveRemoteKnowledge(remote) }
        return outcome
    }

    /// The sync state in `db`: decoded from its bytes, unless they are the bytes last read or written (a sync reads
    /// the state about eight times, and decoding its JSON was a tenth of a one-row sync's CPU time).
    func loadState(_ db: Database) throws -> LocalSyncState {
        guard
            let data = try Data.fetchOne(
                db.cachedStatement(sql: "SELECT value FROM \(StoreSchema.metaTable) WHERE key = ?"),
                arguments: [Self.stateKey])
        else { return LocalSyncState() }
        if let cached = stateCache.current, cached.data == data { return cached.state }
        let state = try LocalSyncState.decodeJSON(data)
        stateCache.withLock { $0 = (data, state) }
        return state
    }
}

extension SyncValue {
    init(_ value: DatabaseValue) {
        switch value.storage {
        case .null: self = .null
        case .int64(let v): self = .integer(v)
        case .double(let v): self = .real(v)
        case .string(let v): self = .text(v)
        case .blob(let v): self = .blob(v)
        }
    }

    var databaseValue: DatabaseValue {
        switch self {
        case .null: .null
        case .integer(let v): v.databaseValue
        case .real(let v): v.databaseValue
        case .text(let v): v.databaseValue
        case .blob(let v): v.databaseValue
        }
    }
}
