@_spi(ModelAdapter) import FolderSync

/// The tables of an ``InMemoryModelAdapter``: GRDBStore's app tables and `foldersync_…` bookkeeping, as values.
extension InMemoryModelAdapter {
    /// One row of one table.
    struct RowKey: Hashable, Sendable {
        var table: String
        var syncID: String

        /// `ORDER BY tbl, sync_id`, as SQLite sorts text.
        static func sqlOrder(_ lhs: RowKey, _ rhs: RowKey) -> Bool {
            lhs.table != rhs.table ? utf8Less(lhs.table, rhs.table) : utf8Less(lhs.syncID, rhs.syncID)
        }
    }

    /// A column's last-writer-wins register (one of those packed in a `foldersync_clocks` row) or a tombstone: `client
    /// == nil` means this client.
    struct Register: Hashable, Sendable {
        var timestamp: HybridTimestamp
        var client: String?

        func stamp(localClient: String) -> ChangeStamp {
            ChangeStamp(timestamp: timestamp, clientIdentifier: client ?? localClient)
        }
    }

    /// A pending local change: not staged yet (`foldersync_pending_changes`), or staged in a change set
    /// (`foldersync_staged_changes`).
    enum Pending: Hashable, Sendable {
        case unstaged
        case staged(Int64)
    }

    struct State: Sendable {
        /// Marks for whole-row events, as in GRDBStore (real column names never start with `#`).
        static let createdMarker = "#created"
        static let deletedMarker = "#deleted"

        var rows: [String: [String: [String: SyncValue]]] = [:]
        var clocks: [RowKey: [String: Register]] = [:]
        var tombstones: [RowKey: Register] = [:]
        /// Last writer wins: the values a deleted row keeps (`foldersync_shadow`), for a newer write to bring it back.
        var shadow: [RowKey: [String: SyncValue]] = [:]
        var pending: [RowKey: [String: Pending]] = [:]
        /// Applied change sets (`foldersync_applied_change_sets` and `_runs`).
        var ledger = Ledger()
        var syncState = LocalSyncState()

        /// Forgets a row's pending changes that are not staged (staged ones wait for their set to be published).
        mutating func dropUnstaged(_ row: RowKey) {
            guard var entries = pending[row] else { return }
            entries = entries.filter { $0.value != .unstaged }
            pending[row] = entries.isEmpty ? nil : entries
        }

        mutating func dropUnstaged(_ row: RowKey, column: String) {
            guard pending[row]?[column] == .unstaged else { return }
            pending[row]?[column] = nil
            if pending[row]?.isEmpty == true { pending[row] = nil }
        }

        /// The newest stamp stored in a register or a tombstone: where a reopened clock starts.
        var newestStamp: HybridTimestamp {
            let columns = clocks.values.lazy.flatMap(\.values).map(\.timestamp).max() ?? .zero
            let deletes = tombstones.values.lazy.map(\.timestamp).max() ?? .zero
            return max(columns, deletes)
        }
    }

    /// Mirrors `GRDBStore+Ledger.swift`: each applied set by client, number and identifier, and the runs a restore
    /// covered without naming their sets.
    struct Ledger: Sendable {
        /// Client → sequence → identifiers of the sets applied under it.
        var rows: [String: [Int64: Set<String>]] = [:]
        /// Client → the run covered without rows.
        var runs: [String: Int64] = [:]

        func contains(_ sequence: Int64, _ identifier: String, of client: String) -> Bool {
            rows[client]?[sequence]?.contains(identifier) == true
        }

        mutating func record(_ sequence: Int64, _ identifier: String, of client: String) {
            rows[client, default: [:]][sequence, default: []].insert(identifier)
        }

        var applied: AppliedChangeSets {
            var applied = AppliedChangeSets()
            for (client, through) in runs where through > 0 { applied.insert(1...through, of: client) }
            for (client, sets) in rows { for sequence in sets.keys { applied.insert(sequence, of: client) } }
            return applied
        }

        func identifiers(of client: String, sequences: [Int64]) -> [Int64: Set<String>] {
            Dictionary(uniqueKeysWithValues: Set(sequences).map { ($0, rows[client]?[$0] ?? []) })
        }
    }
}
