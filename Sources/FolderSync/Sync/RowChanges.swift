/// The rows of one table that one client's changes changed here: what a sync applied, for an app that refreshes
/// one screen, says "3 notes changed on Ann's phone", or logs what arrived.
///
/// The counts are always exact. The sync IDs are listed up to ``SyncPolicy/changedRowIDLimit`` per sync (per
/// change set in ``SyncEvent/rowsChanged(_:)``): past it only the counts grow, so a sync of millions of rows
/// keeps no list of millions. A change that lost to a newer local write, or hit a deleted row, changed nothing
/// and is not listed; a whole store's install is reported in ``SyncReport/installedWholeStore``, not row by row.
///
/// ```swift
/// let report = try await document.synchronize()
/// if report.rowChanges.contains(where: { $0.table == "notes" && $0.touches(openNoteID) }) {
///     try reloadOpenNote()   // only the screen showing that note
/// }
/// ```
public struct RowChanges: Sendable, Hashable {
    /// The synced table.
    public var table: String
    /// The client whose change sets made the changes.
    public var client: String
    /// How many rows the changes inserted (a row brought back after a delete counts as inserted).
    public var insertCount = 0
    /// How many times the changes updated a row (a row updated by two change sets counts twice).
    public var updateCount = 0
    /// How many rows the changes deleted.
    public var deleteCount = 0
    /// The inserted rows' sync IDs, in the order they were applied.
    public var inserted: [String] = []
    /// The updated rows' sync IDs, each with the columns the changes wrote, sorted.
    public var updated: [String: [String]] = [:]
    /// The deleted rows' sync IDs, in the order they were applied.
    public var deleted: [String] = []

    /// Changes of `client` to `table`, none yet.
    public init(table: String, client: String) {
        self.table = table
        self.client = client
    }

    /// How many row changes there were: inserts, updates and deletes.
    public var count: Int { insertCount + updateCount + deleteCount }

    /// Whether every changed row is listed: `false` once the limit cut a list.
    public internal(set) var listsEveryRow = true

    /// Whether the row `syncID` is listed as inserted, updated or deleted.
    public func touches(_ syncID: String) -> Bool {
        updated[syncID] != nil || inserted.contains(syncID) || deleted.contains(syncID)
    }
}

extension [RowChanges] {
    /// Adds `more` (one change set's), merging each into the entry of the same table and client: counts added,
    /// sync IDs listed while fewer than `limit` are listed in all.
    mutating func merge(_ more: [RowChanges], limit: Int) {
        var listed = reduce(0) { $0 + $1.inserted.count + $1.updated.count + $1.deleted.count }
        for changes in more {
            let index =
                firstIndex { $0.table == changes.table && $0.client == changes.client }
                ?? {
                    append(RowChanges(table: changes.table, client: changes.client))
                    return count - 1
                }()
            var merged = self[index]
            merged.insertCount += changes.insertCount
            merged.updateCount += changes.updateCount
            merged.deleteCount += changes.deleteCount
            merged.listsEveryRow = merged.listsEveryRow && changes.listsEveryRow
            func list(_ add: (inout RowChanges) -> Void) {
                guard listed < limit else {
                    merged.listsEveryRow = false
                    return
                }
                add(&merged)
                listed += 1
            }
            for syncID in changes.inserted { list { $0.inserted.append(syncID) } }
            for (syncID, columns) in changes.updated.sorted(by: { $0.key < $1.key }) {
                if let known = merged.updated[syncID] {
                    merged.updated[syncID] = Set(known).union(columns).sorted()
                } else {
                    list { $0.updated[syncID] = columns }
                }
            }
            for syncID in changes.deleted { list { $0.deleted.append(syncID) } }
            self[index] = merged
        }
    }
}
