import FolderSync

/// Every write the simulated apps committed, with the stamp it got, to prove afterwards that none was lost.
struct WriteJournal {
    struct ColumnWrite {
        var client: String
        var key: ColumnKey
        var value: SyncValue
        var stamp: ChangeStamp
    }

    struct RowDelete {
        var client: String
        var table: String
        var syncID: String
    }

    private(set) var writes: [ColumnWrite] = []
    private(set) var deletes: [RowDelete] = []

    /// Records the columns of a committed write, reading back the stamps the store gave them.
    mutating func recordWrite(client: String, store: any SimulatorStore, table: String, syncID: String,
                              values: [String: SyncValue]) throws {
        for (column, value) in values.sorted(by: { $0.key < $1.key }) {
            let key = ColumnKey(table: table, syncID: syncID, column: column)
            guard let stamp = try store.stamp(of: key, localClient: client) else {
                throw SimulationFailure.Detail("client \(client) committed \(key) = \(CanonicalRow.render(value)) but the store has no stamp for it")
            }
            writes.append(ColumnWrite(client: client, key: key, value: value, stamp: stamp))
        }
    }

    mutating func recordDelete(client: String, table: String, syncID: String) {
        deletes.append(RowDelete(client: client, table: table, syncID: syncID))
    }

    /// Checks one final replica: each written column holds its value, or a value at least as new, or its row was deleted.
    func check(replica: any SimulatorStore, replicaClient: String, rows: [CanonicalRow]) throws {
        var byKey: [String: [String: SyncValue]] = [:]
        for row in rows { byKey[row.table + "\u{0}" + row.syncID] = row.values }
        for write in writes {
            if try replica.deletionStamp(table: write.key.table, syncID: write.key.syncID, localClient: replicaClient) != nil { continue }
            let current = byKey[write.key.table + "\u{0}" + write.key.syncID]?[write.key.column]
            if current == write.value { continue }
            let stamp = try replica.stamp(of: write.key, localClient: replicaClient)
            if let stamp, stamp >= write.stamp { continue }
            throw SimulationFailure.Detail("""
                write lost: client \(write.client) committed \(write.key) = \(CanonicalRow.render(write.value)) at \
                \(write.stamp.timestamp)/\(write.stamp.clientIdentifier); replica \(replicaClient) holds \
                \(current.map(CanonicalRow.render) ?? "no row") at \(stamp.map { "\($0.timestamp)/\($0.clientIdentifier)" } ?? "no stamp")
                """)
        }
        for delete in deletes {
            let tombstone = try replica.deletionStamp(table: delete.table, syncID: delete.syncID, localClient: replicaClient)
            if byKey[delete.table + "\u{0}" + delete.syncID] != nil || tombstone == nil {
                throw SimulationFailure.Detail("delete lost: client \(delete.client) deleted \(delete.table)[\(delete.syncID)]; replica \(replicaClient) still has it or has no tombstone")
            }
        }
    }
}
