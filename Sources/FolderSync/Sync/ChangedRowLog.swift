/// What one applied change set changed, row by row and table by table, as an adapter records it while applying.
///
/// Bounded: past `limit` sync IDs it keeps only counting. ``ModelAdapter`` implementations record each change that
/// altered the local data (``inserted(_:_:)``, ``updated(_:_:columns:)``, ``deleted(_:_:)``); the engine names
/// the author and adds it to the sync's report.
@_spi(ModelAdapter) public struct ChangedRowLog: Sendable, Hashable {
    /// Per table: its changes, the client left empty.
    public private(set) var tables: [String: RowChanges] = [:]
    /// The tables in the order their first change was recorded.
    public private(set) var tableOrder: [String] = []
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
        if let known = tables[table]?.updated[syncID] {
            tables[table]!.updateCount += 1
            tables[table]!.updated[syncID] = Set(known).union(columns).sorted()
            return
        }
        record(table, count: { $0.updateCount += 1 }, list: { $0.updated[syncID] = columns.sorted() })
    }

    /// Records that the row `syncID` of `table` was deleted.
    public mutating func deleted(_ table: String, _ syncID: String) {
        record(table, count: { $0.deleteCount += 1 }, list: { $0.deleted.append(syncID) })
    }

    /// Whether nothing was recorded.
    public var isEmpty: Bool { tableOrder.isEmpty }

    /// Counts a change of `table`, and lists its row while the limit allows.
    private mutating func record(_ table: String, count: (inout RowChanges) -> Void, list: (inout RowChanges) -> Void) {
        if tables[table] == nil {
            tables[table] = RowChanges(table: table, client: "")
            tableOrder.append(table)
        }
        count(&tables[table]!)
        if listed < limit {
            list(&tables[table]!)
            listed += 1
        } else {
            tables[table]!.listsEveryRow = false
        }
    }

    /// The changes, table by table in order, with their author.
    public func changes(by client: String) -> [RowChanges] {
        tableOrder.map { table in
            var changes = tables[table]!
            changes.client = client
            return changes
        }
    }
}
