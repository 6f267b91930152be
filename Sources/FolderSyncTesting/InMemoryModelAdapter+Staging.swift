@_spi(ModelAdapter) public import FolderSync

/// Sync bookkeeping and staging, mirroring `GRDBStore.swift` and `GRDBStore+Staging.swift` step for step.
extension InMemoryModelAdapter {
    @_spi(ModelAdapter) public func loadSyncState() -> LocalSyncState { withState(\.syncState) }

    @_spi(ModelAdapter) public func saveRemoteKnowledge(_ remote: LocalSyncState.RemoteKnowledge) {
        transaction { stored, _ in stored.syncState.remote = remote }
    }

    @_spi(ModelAdapter) public func appliedChangeSets() -> AppliedChangeSets {
        withState(\.ledger.applied)
    }

    @_spi(ModelAdapter) public func appliedChangeSetIdentifiers(of client: String, sequences: [Int64]) -> [Int64: Set<
        String
    >]? {
        withState { $0.ledger.identifiers(of: client, sequences: sequences) }
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
            state.syncState.progress.publishedSequence = max(state.syncState.progress.publishedSequence, sequence)
        }
    }

    @_spi(ModelAdapter) public func stageChanges(
        sequence: Int64, emit: (SyncChange) throws -> Void, seal: () throws -> Int64
    ) throws -> Int {
        try transaction { state, _ in
            let rows = state.pending.filter { $0.value.values.contains(.unstaged) }.keys.sorted(by: RowKey.sqlOrder)
            var count = 0
            for row in rows {
                let marked = Set(state.pending[row, default: [:]].filter { $0.value == .unstaged }.keys)
                guard let change = change(state, row: row, marked: marked) else { continue }
                try emit(change)
                count += 1
            }
            guard count > 0 else {
                // Marks whose every write another client's newer one superseded carry nothing to publish.
                for row in rows { state.dropUnstaged(row) }
                return 0
            }
            let last = try seal()
            for (row, entries) in state.pending {
                state.pending[row] = entries.mapValues { $0 == .unstaged ? .staged(last) : $0 }
            }
            state.syncState.progress.nextSequence = last + 1
            return count
        }
    }

    /// The change that carries a row's marked columns with their current values and local timestamps; a delete
    /// and, under last writer wins, the writes to a deleted row, as `GRDBStore+Staging.swift` stages them.
    private func change(_ state: State, row: RowKey, marked: Set<String>) -> SyncChange? {
        guard let table = tablesByName[row.table] else { return nil }
        if marked.contains(State.deletedMarker) {
            guard let tombstone = state.tombstones[row] else { return nil }
            // A delete another client made later than this one (applied before staging) supersedes it: only the writes
            // go.
            guard tombstone.client == nil else {
                return writesToDeletedRow(state, table: table, row: row, marked: marked)
            }
            return SyncChange(
                kind: .delete, table: row.table, syncID: row.syncID,
                columns: localWritesOfDeletedRow(state, table: table, row: row, marked: marked),
                deletionTimestamp: tombstone.timestamp)
        }
        guard let values = state.rows[row.table]?[row.syncID] else {
            return writesToDeletedRow(state, table: table, row: row, marked: marked)
        }
        let registers = state.clocks[row] ?? [:]
        var changed: [ColumnChange] = []
        for name in table.columns where marked.contains(name) {
            // A column whose newest write came from another client is no longer this client's change.
            guard let register = registers[name], register.client == nil else { continue }
            changed.append(ColumnChange(column: name, value: values[name] ?? .null, timestamp: register.timestamp))
        }
        let created = marked.contains(State.createdMarker)
        if changed.isEmpty && (!created || !table.columns.isEmpty) { return nil }
        return SyncChange(kind: created ? .insert : .update, table: row.table, syncID: row.syncID, columns: changed)
    }

    /// This client's unpublished writes to a row another client's newer delete removed, as an update (last writer
    /// wins), so that every replica keeps them for a later write that brings the row back; `nil` when there is none.
    private func writesToDeletedRow(_ state: State, table: Table, row: RowKey, marked: Set<String>) -> SyncChange? {
        let writes = localWritesOfDeletedRow(state, table: table, row: row, marked: marked)
        return writes.isEmpty ? nil : SyncChange(kind: .update, table: row.table, syncID: row.syncID, columns: writes)
    }

    /// The marked columns of a deleted row that this client wrote last, with their values, in name order (last
    /// writer wins only): from the shadow, or from the row when another client's newer write brought it back.
    private func localWritesOfDeletedRow(_ state: State, table: Table, row: RowKey, marked: Set<String>)
        -> [ColumnChange]
    {
        guard table.deletePolicy == .lastWriterWins else { return [] }
        let registers = state.clocks[row] ?? [:]
        let values = state.rows[row.table]?[row.syncID] ?? state.shadow[row] ?? [:]
        return table.columns.sorted(by: utf8Less).compactMap { name in
            guard marked.contains(name), let register = registers[name], register.client == nil,
                let value = values[name]
            else { return nil }
            return ColumnChange(column: name, value: value, timestamp: register.timestamp)
        }
    }
}

extension InMemoryModelAdapter {
    /// Mirrors `GRDBStore+Restore.swift`.
    @_spi(ModelAdapter) public func continueAfterRestore(remotePublishedSequence remote: Int64, localClient: String) {
        transaction { state, _ in
            let local = state.syncState.progress.publishedSequence
            guard remote > local else { return }
            for (row, entries) in state.pending {
                state.pending[row] = entries.mapValues {
                    if case .staged(let set) = $0, set > local { .unstaged } else { $0 }
                }
            }
            if local > 0 { state.ledger.runs[localClient] = max(state.ledger.runs[localClient] ?? 0, local) }
            state.syncState.progress.ownChangeSetsToReapplyAfter = local
            state.syncState.progress.publishedSequence = remote
            state.syncState.progress.nextSequence = max(state.syncState.progress.nextSequence, remote + 1)
        }
    }
}
