@_spi(ModelAdapter) public import FolderSync

/// Sync bookkeeping and staging, mirroring `GRDBStore.swift` and `GRDBStore+Staging.swift` step for step.
extension InMemoryModelAdapter {
    @_spi(ModelAdapter) public func loadSyncState() -> LocalSyncState { withState(\.syncState) }

    @_spi(ModelAdapter) public func saveSyncState(_ state: LocalSyncState) {
        transaction { stored, _ in stored.syncState = state }
    }

    @_spi(ModelAdapter) public func appliedChangeSets() -> AppliedChangeSets {
        withState { state in AppliedChangeSets(state.ledger.flatMap { client, sets in sets.keys.map { (client, $0) } }) }
    }

    @_spi(ModelAdapter) public func hasUnpublishedChanges() -> Bool {
        withState { !$0.pending.isEmpty }
    }

    @_spi(ModelAdapter) public func markPublished(throughSequence sequence: Int64) {
        transaction { state, _ in
            for (row, entries) in state.pending {
                let kept = entries.filter { if case .staged(let set) = $0.value { set > sequence } else { true } }
                state.pending[row] = kept.isEmpty ? nil : kept
            }
            state.syncState.publishedSequence = max(state.syncState.publishedSequence, sequence)
        }
    }

    @_spi(ModelAdapter) public func stageChanges(sequence: Int64, emit: (SyncChange) throws -> Void, seal: () throws -> Int64) throws -> Int {
        try transaction { state, _ in
            let rows = state.pending.filter { $0.value.values.contains(.unstaged) }.keys.sorted(by: RowKey.sqlOrder)
            var count = 0
            for row in rows {
                let marked = Set(state.pending[row, default: [:]].filter { $0.value == .unstaged }.keys)
                guard let change = change(state, row: row, marked: marked) else { continue }
                try emit(change)
                count += 1
            }
            guard count > 0 else { return 0 }
            let last = try seal()
            for (row, entries) in state.pending {
                state.pending[row] = entries.mapValues { $0 == .unstaged ? .staged(last) : $0 }
            }
            state.syncState.nextSequence = last + 1
            return count
        }
    }

    /// The change that carries a row's marked columns with their current values and local timestamps.
    private func change(_ state: State, row: RowKey, marked: Set<String>) -> SyncChange? {
        guard let table = tablesByName[row.table] else { return nil }
        if marked.contains(State.deletedMarker) {
            guard let tombstone = state.tombstones[row] else { return nil }
            return SyncChange(kind: .delete, table: row.table, syncID: row.syncID, deletionTimestamp: tombstone.timestamp)
        }
        guard let values = state.rows[row.table]?[row.syncID] else { return nil }
        let registers = state.clocks[row] ?? [:]
        var changed: [ColumnChange] = []
        for name in table.columns where marked.contains(name) {
            // A column whose newest write came from another client is no longer this client's change.
            guard let register = registers[name], register.client == nil else { continue }
            changed.append(ColumnChange(column: name, value: values[name] ?? .null, timestamp: register.timestamp))
        }
        let created = marked.contains(State.createdMarker)
        if changed.isEmpty && !created { return nil }
        return SyncChange(kind: created ? .insert : .update, table: row.table, syncID: row.syncID, columns: changed)
    }
}

extension InMemoryModelAdapter {
    /// Mirrors `GRDBStore+Restore.swift`.
    @_spi(ModelAdapter) public func continueAfterRestore(remotePublishedSequence remote: Int64, localClient: String) {
        transaction { state, _ in
            let local = state.syncState.publishedSequence
            guard remote > local else { return }
            for (row, entries) in state.pending {
                state.pending[row] = entries.mapValues { if case .staged(let set) = $0, set > local { .unstaged } else { $0 } }
            }
            for sequence in Swift.stride(from: 1, through: local, by: 1) where state.ledger[localClient]?[sequence] == nil {
                state.ledger[localClient, default: [:]][sequence] = ""
            }
            state.syncState.ownChangeSetsToReapplyAfter = local
            state.syncState.publishedSequence = remote
            state.syncState.nextSequence = max(state.syncState.nextSequence, remote + 1)
            state.syncState.recentlyPublished = []
            state.syncState.announcedSequence = 0
        }
    }
}
