@_spi(ModelAdapter) import FolderSync

/// Every write the simulated apps committed, with the stamp it got, to prove afterwards that none was lost.
///
/// What the final check guarantees, event by event:
/// - **Ordinary writes, syncs, cancellations, restarts**: every committed column write holds its value, or a
///   value with a stamp at least as new (a later write, or a conflict resolution recorded as a new change), or
///   its row is deleted (tombstone); every committed delete is a tombstone on every replica, with no row.
/// - **Whole-store uploads, downloads and bootstraps, vacuums (with or without expiry)**: the same check,
///   unchanged: none of them may lose or undo anything.
/// - **A client deleted (by an operator or by expiry) and re-joined**: the same check, unchanged: its writes
///   unpublished at the deletion come back with it, and its published ones were never taken away.
/// - **A remote wipe (document folder, application folder, or document deletion) and the re-joins**: the
///   merge history of the wiped epoch is gone, so writes recorded before the wipe are dropped and replaced:
///   when each client re-joins, every row it holds then (its data at the wipe, published or not, plus what it
///   wrote since) is recorded as a new write with the fresh stamps the re-join gave it, read back from its
///   store (``rejoined(client:rows:unpublishedDeletes:)``). So every client's rows at the wipe are in the
///   final state unless overwritten by a later write to the same column or deleted later. Deletes recorded
///   before the wipe are dropped too (a row one client deleted and published may come back from a client
///   that still had it), except deletes still unpublished at the client's re-join: those are unpushed local
///   changes, which a re-join keeps (invariant 5). Deletes made after the wipe are checked as usual.
///
/// Under delete wins a deleted row covers every write to it. Under last writer wins the newer of a write and a
/// delete is the one that must hold: a write is covered by a delete newer than it, and a deleted row may be there
/// only with a write newer than the delete.
///
/// When tombstones may be collected (``tombstonesMayBeCollected``: runs with vacuums, which collect), a delete holds on
/// a replica that no longer has its tombstone when the row is gone, and a write to a row deleted that way is covered by
/// the delete this journal recorded.
struct WriteJournal {
    struct ColumnWrite: Sendable {
        var client: String
        var key: ColumnKey
        var value: SyncValue
        var stamp: ChangeStamp
    }

    struct RowDelete {
        var client: String
        var table: String
        var syncID: String
        /// The delete's stamp as the store recorded it.
        var stamp: ChangeStamp?
    }

    /// The delete policy of every table.
    let deletePolicy: DeletePolicy
    /// Whether replicas may have collected tombstones (FolderSync's article "Tombstone collection").
    var tombstonesMayBeCollected = false

    private(set) var writes: [ColumnWrite] = []
    private(set) var deletes: [RowDelete] = []
    /// Deletes recorded before the last wipe whose client has not re-joined yet: kept only if still unpublished then.
    private(set) var deletesBeforeWipe: [RowDelete] = []

    /// The remote was wiped: the old epoch's history no longer decides anything (see the type's documentation).
    mutating func remoteWiped() {
        writes.removeAll()
        deletesBeforeWipe += deletes
        deletes.removeAll()
    }

    /// `client` re-joined after a wipe with `rows` (every column it held, freshly stamped); its deletes from before the
    /// wipe count again only when they were still unpublished (`unpublishedDeletes`, read before the re-join).
    mutating func rejoined(client: String, rows: [ColumnWrite], unpublishedDeletes: Set<RowReference>) {
        writes += rows
        deletes += deletesBeforeWipe.filter {
            $0.client == client && unpublishedDeletes.contains(RowReference(table: $0.table, syncID: $0.syncID))
        }
        deletesBeforeWipe.removeAll { $0.client == client }
    }

    /// Every column of every row of `store`, with its current stamp, as writes by `client`.
    static func currentWrites(of store: any SimulatorStore, client: String) throws -> [ColumnWrite] {
        var writes: [ColumnWrite] = []
        for row in try store.allRows() {
            for (column, value) in row.values.sorted(by: { $0.key < $1.key }) {
                let key = ColumnKey(table: row.table, syncID: row.syncID, column: column)
                guard let stamp = try store.stamp(of: key, localClient: client) else {
                    throw SimulationFailure.Detail("\(client) holds \(key) without a stamp after re-joining")
                }
                writes.append(ColumnWrite(client: client, key: key, value: value, stamp: stamp))
            }
        }
        return writes
    }

    /// Records the columns of a committed write, reading back the stamps the store gave them.
    mutating func recordWrite(
        client: String, store: any SimulatorStore, table: String, syncID: String,
        values: [String: SyncValue]
    ) throws {
        for (column, value) in values.sorted(by: { $0.key < $1.key }) {
            let key = ColumnKey(table: table, syncID: syncID, column: column)
            guard let stamp = try store.stamp(of: key, localClient: client) else {
                throw SimulationFailure.Detail(
                    "client \(client) committed \(key) = \(CanonicalRow.render(value)) but the store has no stamp for it"
                )
            }
            writes.append(ColumnWrite(client: client, key: key, value: value, stamp: stamp))
        }
    }

    /// Records a committed delete, reading back the stamp the store gave it.
    mutating func recordDelete(client: String, store: any SimulatorStore, table: String, syncID: String) throws {
        let stamp = try store.deletionStamp(table: table, syncID: syncID, localClient: client)
        deletes.append(RowDelete(client: client, table: table, syncID: syncID, stamp: stamp))
    }

    /// Checks one final replica: each written column holds its value, or a value at least as new, or its row was
    /// deleted (later than the write, under last writer wins); each delete holds.
    func check(replica: any SimulatorStore, replicaClient: String, rows: [CanonicalRow]) throws {
        var byKey: [String: [String: SyncValue]] = [:]
        for row in rows { byKey[row.table + "\u{0}" + row.syncID] = row.values }
        for write in writes {
            let row = byKey[write.key.table + "\u{0}" + write.key.syncID]
            let deleted = try replica.deletionStamp(
                table: write.key.table, syncID: write.key.syncID, localClient: replicaClient)
            if let deleted, deletePolicy == .deleteWins || (row == nil && deleted > write.stamp) { continue }
            if deleted == nil, row == nil, tombstonesMayBeCollected,
                deletes.contains(where: {
                    $0.table == write.key.table && $0.syncID == write.key.syncID
                        && (deletePolicy == .deleteWins || ($0.stamp.map { $0 > write.stamp } ?? false))
                })
            {
                continue
            }
            let current = row?[write.key.column]
            if current == write.value { continue }
            let stamp = try replica.stamp(of: write.key, localClient: replicaClient)
            if let stamp, stamp >= write.stamp { continue }
            throw SimulationFailure.Detail(
                """
                write lost: client \(write.client) committed \(write.key) = \(CanonicalRow.render(write.value)) at \
                \(write.stamp.timestamp)/\(write.stamp.clientIdentifier); replica \(replicaClient) holds \
                \(current.map(CanonicalRow.render) ?? "no row") at \(stamp.map { "\($0.timestamp)/\($0.clientIdentifier)" } ?? "no stamp")
                """)
        }
        for delete in deletes {
            let tombstone = try replica.deletionStamp(
                table: delete.table, syncID: delete.syncID, localClient: replicaClient)
            let row = byKey[delete.table + "\u{0}" + delete.syncID]
            guard try holds(delete, tombstone: tombstone, row: row, replica: replica, replicaClient: replicaClient)
            else {
                throw SimulationFailure.Detail(
                    "delete lost: client \(delete.client) deleted \(delete.table)[\(delete.syncID)]; replica \(replicaClient) "
                        + "still has it\(deletePolicy == .lastWriterWins ? " with no newer write" : "") or has no tombstone as new"
                )
            }
        }
    }

    /// Whether a committed delete holds on a replica. Delete wins: no row, and a tombstone. Last writer wins: no row
    /// and a tombstone at least as new, or a row a newer write brought back (a delete superseded before it was
    /// published may never travel).
    private func holds(
        _ delete: RowDelete, tombstone: ChangeStamp?, row: [String: SyncValue]?, replica: any SimulatorStore,
        replicaClient: String
    ) throws -> Bool {
        guard deletePolicy == .lastWriterWins, let stamp = delete.stamp else {
            return row == nil && (tombstone != nil || tombstonesMayBeCollected)
        }
        guard let row else { return tombstone.map { $0 >= stamp } ?? tombstonesMayBeCollected }
        let newest = try row.keys.compactMap {
            try replica.stamp(
                of: ColumnKey(table: delete.table, syncID: delete.syncID, column: $0), localClient: replicaClient)
        }.max()
        return newest.map { $0 > stamp } ?? false
    }
}
