import Foundation
import GRDB

/// Finds the attachments a change set or a whole store references, with the row and column holding each, without
/// a local store: what sync fetches and reports gone, and what vacuum keeps.
enum AttachmentScan {
    /// Each attachment a change set references, with the columns that reference it, in first-seen order.
    static func references(inChangeSet url: URL, path: String) throws -> [(AttachmentReference, [ColumnKey])] {
        // Only blob values can be references: the rest of each record is skipped, not decoded.
        try scan(changeSet: url, path: path, selecting: .blobValues).references
    }

    /// What a sync checks before it applies a change set, found in one pass: the attachments it references, and
    /// whether it deletes rows (only then can it trip the deletion fail-safe).
    static func prescan(changeSet url: URL, path: String) throws -> ChangeSetPrescan {
        try scan(changeSet: url, path: path, selecting: .deletesAndBlobValues)
    }

    private static func scan(changeSet url: URL, path: String, selecting selection: ChangeSetRecord.Selection) throws
        -> ChangeSetPrescan
    {
        var order: [AttachmentReference] = []
        var keys: [AttachmentReference: [ColumnKey]] = [:]
        var deletes = false
        try ChangeSetReader.forEachChange(at: url, path: path, selecting: selection) { change in
            if change.kind == .delete { deletes = true }
            for column in change.columns {
                guard case .blob(let data) = column.value, let reference = AttachmentReference(databaseValue: data)
                else { continue }
                if keys[reference] == nil { order.append(reference) }
                keys[reference, default: []].append(
                    ColumnKey(table: change.table, syncID: change.syncID, column: column.column))
            }
        }
        return ChangeSetPrescan(references: order.map { ($0, keys[$0]!) }, deletes: deletes)
    }

    /// The merge metadata tables that hold stamps and names, never column values: a reference cannot be there,
    /// and they are as large as the data (a register per row or column), so they are not read.
    static let registerTables: Set<String> = [StoreSchema.clocksTable, StoreSchema.tombstonesTable]

    /// Every attachment reference in a whole store's snapshot, in any column of any table (the shadow values of
    /// the merge metadata included, its registers not), with its table's primary key as the row; found by the
    /// references' magic, other values unread.
    static func references(inSnapshot url: URL, path: String) throws -> [(ColumnKey, AttachmentReference)] {
        do {
            // A downloaded snapshot, read before it is installed: hardened (no function of its schema runs but SQLite's
            // innocuous ones), and WholeStoreReader refused it already if it holds a trigger or fails its check.
            let snapshot = try DatabaseQueue(
                path: url.path, configuration: SQLiteHardening.configuration(readonly: true))
            defer { try? snapshot.close() }
            return try snapshot.read { db in
                var found: [(ColumnKey, AttachmentReference)] = []
                let magic = Data(AttachmentReference.magic)
                for table in try String.fetchAll(
                    db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
                where !registerTables.contains(table) {
                    let row = try db.primaryKey(table).columns.map(\.quotedDatabaseIdentifier).joined(
                        separator: " || '/' || ")
                    let columns = try db.columns(in: table).map(\.name)
                    guard !columns.isEmpty else { continue }
                    // One pass over each table (not one per column): a store of millions of rows is read once.
                    let quoted = columns.map(\.quotedDatabaseIdentifier)
                    let rows = try Row.fetchCursor(
                        db,
                        sql: """
                            SELECT \(row), \(quoted.joined(separator: ", ")) FROM \(table.quotedDatabaseIdentifier)
                            WHERE \(quoted.map { "(typeof(\($0)) = 'blob' AND substr(\($0), 1, :count) = :magic)" }.joined(separator: " OR "))
                            """, arguments: ["count": magic.count, "magic": magic])
                    var matches: [(Int, ColumnKey, AttachmentReference)] = []
                    while let values = try rows.next() {
                        let syncID = String.fromDatabaseValue(values[0]) ?? (values[0] as DatabaseValue).description
                        for (index, column) in columns.enumerated() {
                            // Only this column's blobs: the row matched on one of its columns, maybe another one.
                            guard case .blob(let data) = (values[index + 1] as DatabaseValue).storage,
                                let reference = AttachmentReference(databaseValue: data)
                            else { continue }
                            matches.append((index, ColumnKey(table: table, syncID: syncID, column: column), reference))
                        }
                    }
                    // Column by column, as the references were always listed.
                    found += matches.enumerated().sorted { ($0.element.0, $0.offset) < ($1.element.0, $1.offset) }.map {
                        ($0.element.1, $0.element.2)
                    }
                }
                return found
            }
        } catch let error as DatabaseError {
            throw FolderSyncError(
                .corruptFile, "the whole store's snapshot cannot be read", path: path, underlying: error)
        }
    }
}

/// What ``AttachmentScan/prescan(changeSet:path:)`` found in a change set.
struct ChangeSetPrescan: Sendable {
    /// Each attachment referenced, with the columns that reference it, in first-seen order.
    var references: [(AttachmentReference, [ColumnKey])]
    /// Whether the set holds a delete (``AttachmentScan/references(inChangeSet:path:)`` does not say).
    var deletes: Bool
}

/// A change set's prescan, run in the background from when the set is downloaded: the sync downloads the next
/// sets, or applies others, meanwhile.
///
/// On two serial queues taken in turn: two cores' worth, and a catch-up of thousands of sets queues its prescans
/// instead of starting a thread for each.
final class BackgroundPrescan: Sendable {
    private static let queues = [
        DispatchQueue(label: "FolderSync.prescan.1"), DispatchQueue(label: "FolderSync.prescan.2"),
    ]
    private static let turn = Locked(0)

    /// Running, with the tasks waiting for it; or ended, with what it found.
    private enum State {
        case running(waiting: [CheckedContinuation<Void, Never>])
        case ended(Result<ChangeSetPrescan, any Error>)
    }
    private let state = Locked(State.running(waiting: []))

    /// Sets of at most this many bytes are scanned at once, on the caller's thread: a queue's thread woken for a
    /// set of a few hundred bytes cost more than the scan.
    static let inlineByteLimit = 64 * 1024

    /// Starts the prescan of the set at `url`; `byteCount`, its size when known, decides whether it runs at once.
    init(changeSet url: URL, path: String, byteCount: Int? = nil) {
        let state = state
        if let byteCount, byteCount <= Self.inlineByteLimit {
            state.withLock { $0 = .ended(Result { try AttachmentScan.prescan(changeSet: url, path: path) }) }
            return
        }
        let queue = Self.turn.withLock { turn -> DispatchQueue in
            turn += 1
            return Self.queues[turn % Self.queues.count]
        }
        queue.async {
            let result = Result { try AttachmentScan.prescan(changeSet: url, path: path) }
            let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                guard case .running(let waiting) = state else { return [] }
                state = .ended(result)
                return waiting
            }
            for task in waiting { task.resume() }
        }
    }

    /// Waits for the prescan, without holding a thread; returns what it found or throws what it threw.
    func result() async throws -> ChangeSetPrescan {
        await ended()
        guard case .ended(let result) = state.current else { preconditionFailure("a prescan ended without a result") }
        return try result.get()
    }

    /// Suspends until the prescan ended (returns at once when it did).
    func ended() async {
        if case .ended = state.current { return }
        await waitUntilEnded()
    }

    /// Not inlined into ``ended()``: its continuation's type is made when the function starts, and a process's first
    /// `CheckedContinuation<_, Never>` costs a conformance lookup across every loaded image (a small set's prescan,
    /// done inline, never waits).
    @inline(never)
    private func waitUntilEnded() async {
        await withCheckedContinuation { task in
            let hasEnded = state.withLock { state -> Bool in
                guard case .running(let waiting) = state else { return true }
                state = .running(waiting: waiting + [task])
                return false
            }
            if hasEnded { task.resume() }
        }
    }
}
