/// What one applied change set changed, row by row and table by table, as an adapter records it while applying.
///
/// Bounded: past `limit` sync IDs it keeps only counting. ``ModelAdapter`` implementations record each change that
/// altered the local data (``inserted(_:_:)``, ``updated(_:_:columns:)``, ``deleted(_:_:)``); the engine names
/// the author and adds it to the sync's report. A record costs a comparison of the table's name with the last one's
/// and a count: a bulk apply records a hundred thousand changes.
@_spi(ModelAdapter) public struct ChangedRowLog: Sendable, Hashable {
    /// Per table, in the order of its first change: its changes, the client left empty.
    private var changes: [RowChanges] = []
    /// The position in `changes` of the table changed last (a change set's changes come table after table).
    private var last = 0
    /// How many sync IDs the log lists at most, over all its tables.
    public let limit: Int
    private var listed = 0

    /// An empty log that lists up to `limit` sync IDs (by default the limit of the sync under way).
    public init(limit: Int = ChangedRowLog.currentLimit) {
        self.limit = limit
    }

    /// The limit of the sync that runs in this task (``SyncPolicy/changedRowIDLimit``).
    @TaskLocal public static var currentLimit = SyncPolicy().changedRowIDLimit

    /// Records that the row `syncID` of `table` was inserted.
    public mutating func inserted(_ table: String, _ syncID: String) {
        record(table, count: { $0.insertCount += 1 }, list: { $0.inserted.append(syncID) })
    }

    /// Records that `columns` of the row `syncID` of `table` were written.
    public mutating func updated(_ table: String, _ syncID: String, columns: [String]) {
        record(table, count: { $0.updateCount += 1 }) { changes in
            changes.updated[syncID] = Set(changes.updated[syncID] ?? []).union(columns).sorted()
        }
    }

    /// Records that the row `syncID` of `table` was deleted.
    public mutating func deleted(_ table: String, _ syncID: String) {
        record(table, count: { $0.deleteCount += 1 }, list: { $0.deleted.append(syncID) })
    }

    /// The tables changed, in the order of their first change.
    public var changedTables: [String] { changes.map(\.table) }

    /// Whether nothing was recorded.
    public var isEmpty: Bool { changes.isEmpty }

    /// Counts a change of `table`, and lists its row while the limit allows.
    private mutating func record(_ table: String, count: (inout RowChanges) -> Void, list: (inout RowChanges) -> Void) {
        if changes.indices.contains(last) && changes[last].table == table {
            // The table of the change before: the common case.
        } else if let index = changes.firstIndex(where: { $0.table == table }) {
            last = index
        } else {
            changes.append(RowChanges(table: table, client: ""))
            last = changes.count - 1
        }
        count(&changes[last])
        if listed < limit {
            list(&changes[last])
            listed += 1
        } else {
            changes[last].listsEveryRow = false
        }
    }

    /// The changes, table by table in order, with their author.
    public func changes(by client: String) -> [RowChanges] {
        changes.map { changes in
            var changes = changes
            changes.client = client
            return changes
        }
    }
}
