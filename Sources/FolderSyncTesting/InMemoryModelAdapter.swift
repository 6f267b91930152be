@_spi(ModelAdapter) public import FolderSync
public import Foundation

/// A ``/FolderSync/ModelAdapter`` that keeps its tables in memory, with exactly ``/FolderSync/GRDBStore``'s merge
/// semantics.
///
/// It proves that the engine depends only on the seam, and lets the simulator
/// run thousands of schedules quickly. App writes (``insert(table:syncID:values:)``,
/// ``update(table:syncID:values:)``, ``delete(table:syncID:)``) record pending
/// changes stamped by a hybrid logical clock the way GRDBStore's triggers do;
/// remote changes merge by the rule GRDBStore uses: per column by last writer
/// wins, and deletes by each table's ``/FolderSync/DeletePolicy`` (under delete wins,
/// a deleted sync ID is never reused). Nothing is persisted: ``snapshotForRestart()``
/// and ``init(restoring:now:)`` stand for closing and reopening the store.
///
/// Values compare as ``/FolderSync/SyncValue``s, without SQLite's type affinity: use one
/// storage class per column (the simulator uses text) when comparing with GRDBStore.
public final class InMemoryModelAdapter: ModelAdapter, SimulatorStore, Sendable {
    /// A synced table: its columns (sync ID excluded), its foreign keys (column → referenced table) and its delete
    /// policy.
    public struct Table: Sendable, Hashable {
        /// The table's SQL name, as change sets name it.
        public var name: String
        /// The synced columns, without the sync ID; other columns of a remote change are ignored.
        public var columns: [String]
        /// Foreign keys, column name → referenced table: applying remote changes reports rows left pointing at a
        /// deleted or missing row.
        public var references: [String: String]
        /// How a delete settles against a concurrent update, as ``/FolderSync/SyncedTable/deletePolicy`` says for
        /// GRDBStore.
        public var deletePolicy: DeletePolicy
        /// The columns that must hold a value, as SQLite's `NOT NULL` says: a write that leaves one null is refused,
        /// the app's and a remote change set's alike.
        public var notNullColumns: Set<String>

        /// Describes a synced table.
        /// - Parameters:
        ///   - name: The table's name.
        ///   - columns: Its synced columns, the sync ID excluded.
        ///   - references: Its foreign keys, column name → referenced table; none by default.
        ///   - deletePolicy: How a delete settles against a concurrent update; delete wins by default.
        ///   - notNullColumns: The columns that must hold a value (`NOT NULL`); none by default.
        public init(
            _ name: String, columns: [String], references: [String: String] = [:],
            deletePolicy: DeletePolicy = .deleteWins, notNullColumns: Set<String> = []
        ) {
            self.name = name
            self.columns = columns
            self.references = references
            self.deletePolicy = deletePolicy
            self.notNullColumns = notNullColumns
        }

        /// The constraint `values` break, in SQLite's words (`NOT NULL constraint failed: tags.name`), or `nil`.
        func unmetConstraint(_ values: [String: SyncValue]) -> String? {
            columns.first { notNullColumns.contains($0) && (values[$0] ?? .null) == .null }
                .map { "NOT NULL constraint failed: \(name).\($0)" }
        }
    }

    /// Everything a committed transaction leaves behind: what survives a restart.
    public struct Snapshot: Sendable {
        let tables: [Table]
        let schemaVersion: Int
        let state: State
    }

    /// The synced tables, in the order given at creation.
    public let tables: [Table]
    public let schemaVersion: Int
    let tablesByName: [String: Table]
    let now: @Sendable () -> Date
    /// The committed state, and the clock. Transactions work on a copy of the state and store it back only when
    /// they succeed; like GRDBStore's clock, the clock lives outside transactions.
    private let guarded = Locked((state: State(), clock: HybridLogicalClock()))

    /// An empty store with the given tables.
    public init(tables: [Table], schemaVersion: Int = 1, now: @escaping @Sendable () -> Date = { Date() }) {
        self.tables = tables
        self.schemaVersion = schemaVersion
        self.tablesByName = Dictionary(uniqueKeysWithValues: tables.map { ($0.name, $0) })
        self.now = now
    }

    /// Reopens a store from what it had committed; the clock restarts from the newest stored stamp, as GRDBStore's
    /// does.
    public convenience init(restoring snapshot: Snapshot, now: @escaping @Sendable () -> Date = { Date() }) {
        self.init(tables: snapshot.tables, schemaVersion: snapshot.schemaVersion, now: now)
        guarded.withLock { guarded in
            guarded.state = snapshot.state
            guarded.clock.observe(snapshot.state.newestStamp)
        }
    }

    /// What was committed, to hand to ``init(restoring:now:)``.
    public func snapshotForRestart() -> Snapshot {
        withState { Snapshot(tables: tables, schemaVersion: schemaVersion, state: $0) }
    }

    /// Runs `body` on a copy of the state under the lock and commits the copy only if `body` returns.
    func transaction<T>(_ body: (inout State, inout HybridLogicalClock) throws -> T) rethrows -> T {
        try guarded.withLock { guarded in
            var working = guarded.state
            let result = try body(&working, &guarded.clock)
            guarded.state = working
            return result
        }
    }

    func withState<T>(_ body: (State) throws -> T) rethrows -> T {
        try guarded.withLock { try body($0.state) }
    }

    func table(_ name: String) throws -> Table {
        guard let table = tablesByName[name] else {
            throw FolderSyncError(.invalidConfiguration, "no synced table named \(name)")
        }
        return table
    }

    private func checkColumns(_ values: [String: SyncValue], of table: Table) throws {
        for name in values.keys where !table.columns.contains(name) {
            throw FolderSyncError(.invalidConfiguration, "table \(table.name) has no column \(name)")
        }
    }

    // MARK: App side (what GRDBStore's triggers record)

    public var adapter: any ModelAdapter { self }

    public func insert(table name: String, syncID: String, values: [String: SyncValue]) throws {
        let table = try table(name)
        try checkColumns(values, of: table)
        let row = RowKey(table: name, syncID: syncID)
        try transaction { state, clock in
            if state.rows[name]?[syncID] != nil {
                throw FolderSyncError(.invalidConfiguration, "\(name) already has a row \(syncID)")
            }
            if state.tombstones[row] != nil {
                // Delete wins: a deleted sync ID is refused. Last writer wins: it comes back, newer than its delete,
                // and the delete not yet staged is forgotten.
                guard table.deletePolicy == .lastWriterWins else {
                    throw FolderSyncError(
                        .invalidConfiguration,
                        "this sync ID belongs to a deleted row and cannot be reused: \(name) \(syncID)")
                }
                state.shadow[row] = nil
                state.dropUnstaged(row, column: State.deletedMarker)
            }
            let inserted = Dictionary(uniqueKeysWithValues: table.columns.map { ($0, values[$0] ?? .null) })
            if let constraint = table.unmetConstraint(inserted) {
                throw FolderSyncError(.invalidConfiguration, constraint)
            }
            state.rows[name, default: [:]][syncID] = inserted
            state.pending[row, default: [:]][State.createdMarker] = .unstaged
            for column in table.columns {
                state.pending[row, default: [:]][column] = .unstaged
                state.clocks[row, default: [:]][column] = Register(timestamp: clock.tick(now: now()), client: nil)
            }
        }
    }

    @discardableResult
    public func update(table name: String, syncID: String, values: [String: SyncValue]) throws -> Bool {
        let table = try table(name)
        try checkColumns(values, of: table)
        let row = RowKey(table: name, syncID: syncID)
        return try transaction { state, clock in
            guard var current = state.rows[name]?[syncID] else { return false }
            if let constraint = table.unmetConstraint(current.merging(values) { $1 }) {
                throw FolderSyncError(.invalidConfiguration, constraint)
            }
            for column in table.columns {
                guard let value = values[column], value != current[column] else { continue }
                current[column] = value
                state.pending[row, default: [:]][column] = .unstaged
                state.clocks[row, default: [:]][column] = Register(timestamp: clock.tick(now: now()), client: nil)
            }
            state.rows[name]?[syncID] = current
            return true
        }
    }

    @discardableResult
    public func delete(table name: String, syncID: String) throws -> Bool {
        let table = try table(name)
        let row = RowKey(table: name, syncID: syncID)
        return transaction { state, clock in
            guard let values = state.rows[name]?[syncID] else { return false }
            state.rows[name]?[syncID] = nil
            switch table.deletePolicy {
            case .deleteWins:
                // Writes to the row not yet staged die with it.
                state.dropUnstaged(row)
                state.clocks[row] = nil
            case .lastWriterWins:
                // The registers and values stay, so that a newer write brings the row back whole; the writes not
                // yet staged travel with the delete.
                state.shadow[row] = values
                state.dropUnstaged(row, column: State.createdMarker)
            }
            state.pending[row, default: [:]][State.deletedMarker] = .unstaged
            state.tombstones[row] = Register(timestamp: clock.tick(now: now()), client: nil)
            return true
        }
    }

    /// The rows of one table, by sync ID.
    public func rows(table: String) -> [String: [String: SyncValue]] {
        withState { $0.rows[table] ?? [:] }
    }

    public func allRows() -> [CanonicalRow] {
        withState { state in
            tables.flatMap { table in
                (state.rows[table.name] ?? [:]).map {
                    CanonicalRow(table: table.name, syncID: $0.key, values: $0.value)
                }
            }.sorted()
        }
    }

    public func stamp(of key: ColumnKey, localClient: String) -> ChangeStamp? {
        withState {
            $0.clocks[RowKey(table: key.table, syncID: key.syncID)]?[key.column]?.stamp(localClient: localClient)
        }
    }

    public func deletionStamp(table: String, syncID: String, localClient: String) -> ChangeStamp? {
        withState { $0.tombstones[RowKey(table: table, syncID: syncID)]?.stamp(localClient: localClient) }
    }

    public func restarted() -> any SimulatorStore {
        InMemoryModelAdapter(restoring: snapshotForRestart(), now: now)
    }
}
