@_spi(ModelAdapter) public import FolderSync

/// Merging remote change sets, mirroring `GRDBStore+Apply.swift`: per-column last writer wins, delete wins, no echo.
extension InMemoryModelAdapter {
    @_spi(ModelAdapter) public func conflicts(author: String, localClient: String, changes: ChangeStream) throws -> [SyncConflict] {
        let state = withState { $0 }
        var found: [SyncConflict] = []
        try changes { change in
            let row = RowKey(table: change.table, syncID: change.syncID)
            guard change.kind != .delete, tablesByName[change.table] != nil, state.tombstones[row] == nil,
                  let values = state.rows[change.table]?[change.syncID] else { return }
            let unpublished = state.pending[row] ?? [:]
            for column in change.columns where unpublished[column.column] != nil {
                guard let local = state.clocks[row]?[column.column]?.stamp(localClient: localClient),
                      local.clientIdentifier == localClient else { continue }
                let localValue = values[column.column] ?? .null
                guard localValue != column.value else { continue }
                found.append(SyncConflict(key: ColumnKey(table: change.table, syncID: change.syncID, column: column.column),
                                          localValue: localValue, remoteValue: column.value, localStamp: local,
                                          remoteStamp: ChangeStamp(timestamp: column.timestamp, clientIdentifier: author)))
            }
        }
        return found
    }

    @_spi(ModelAdapter) public func apply(_ header: ChangeSetHeader, localClient: String, changes: ChangeStream,
                      resolutions: [ColumnKey: ConflictResolution]) throws -> ApplyOutcome {
        try transaction { state, clock in
            var outcome = ApplyOutcome()
            if state.ledger[header.clientIdentifier]?[header.sequence] != nil { return outcome }
            let hasUnpublished = !state.pending.isEmpty
            var touched = Set<String>()
            try changes { change in
                applyChange(&state, &clock, change, author: header.clientIdentifier, localClient: localClient,
                            checkUnpublished: hasUnpublished, resolutions: resolutions, outcome: &outcome)
                if change.kind == .delete { touched.formUnion(tablesByName.keys) } else { touched.insert(change.table) }
            }
            state.ledger[header.clientIdentifier, default: [:]][header.sequence] = header.changeSetIdentifier
            outcome.warnings += danglingReferences(state, tables: touched)
            outcome.applied = true
            return outcome
        }
    }

    private func applyChange(_ state: inout State, _ clock: inout HybridLogicalClock, _ change: SyncChange, author: String,
                             localClient: String, checkUnpublished: Bool, resolutions: [ColumnKey: ConflictResolution],
                             outcome: inout ApplyOutcome) {
        guard let table = tablesByName[change.table] else {
            outcome.changesIgnored += 1
            outcome.warnings.append(SyncWarning(kind: .unknownFile, message: "change to unknown table \(change.table) ignored",
                                                table: change.table, syncID: change.syncID))
            return
        }
        let syncID = change.syncID
        let row = RowKey(table: table.name, syncID: syncID)
        if let existing = state.tombstones[row] {
            // Delete wins: the row stays deleted. Keep the newest tombstone so every replica stores the same one.
            if change.kind == .delete, let timestamp = change.deletionTimestamp {
                clock.observe(timestamp)
                if ChangeStamp(timestamp: timestamp, clientIdentifier: author) > existing.stamp(localClient: localClient) {
                    state.tombstones[row] = Register(timestamp: timestamp, client: author)
                }
            }
            outcome.changesIgnored += 1
            return
        }
        if change.kind == .delete {
            let timestamp = change.deletionTimestamp ?? .zero
            clock.observe(timestamp)
            if checkUnpublished, state.pending[row]?.isEmpty == false {
                outcome.warnings.append(SyncWarning(kind: .changeToDeletedRow,
                                                    message: "local changes to \(table.name) \(syncID) were dropped: client \(author) deleted the row",
                                                    table: table.name, syncID: syncID))
            }
            state.rows[table.name]?[syncID] = nil
            state.clocks[row] = nil
            state.dropUnstaged(row)
            state.tombstones[row] = Register(timestamp: timestamp, client: author)
            outcome.changesApplied += 1
            return
        }

        let current = state.rows[table.name]?[syncID]
        let stamps = state.clocks[row] ?? [:]
        let unpublished = checkUnpublished ? Set((state.pending[row] ?? [:]).keys) : []
        var assignments: [(String, SyncValue)] = []
        for column in change.columns where table.columns.contains(column.column) {
            clock.observe(column.timestamp)
            let name = column.column
            let remote = ChangeStamp(timestamp: column.timestamp, clientIdentifier: author)
            let local = stamps[name]?.stamp(localClient: localClient)
            let remoteWins = local.map { remote > $0 } ?? true
            // A conflict: this client changed the column and has not published it.
            if let current, unpublished.contains(name), let local, local.clientIdentifier == localClient {
                let localValue = current[name] ?? .null
                if localValue != column.value {
                    let key = ColumnKey(table: table.name, syncID: syncID, column: name)
                    let conflict = SyncConflict(key: key, localValue: localValue, remoteValue: column.value, localStamp: local, remoteStamp: remote)
                    let resolution = resolutions[key] ?? conflict.lastWriterWins
                    outcome.conflicts.append(ResolvedConflict(conflict: conflict, resolution: resolution, decidedByResolver: resolutions[key] != nil))
                    let decided: SyncValue = switch resolution {
                    case .localWins: localValue
                    case .remoteWins: column.value
                    case .merged(let value): value
                    }
                    let naturalValue = remoteWins ? column.value : localValue
                    if decided != naturalValue {
                        // Record the decision as a new local change, newer than both, so every replica converges on it.
                        assignments.append((name, decided))
                        state.clocks[row, default: [:]][name] = Register(timestamp: clock.tick(now: now()), client: nil)
                        state.pending[row, default: [:]][name] = .unstaged
                        continue
                    }
                }
            }
            guard remoteWins else { continue }
            assignments.append((name, column.value))
            state.clocks[row, default: [:]][name] = Register(timestamp: column.timestamp, client: author)
            if unpublished.contains(name) { state.dropUnstaged(row, column: name) }
        }
        if assignments.isEmpty && (current != nil || change.kind != .insert) {
            outcome.changesIgnored += 1
            return
        }
        var values = current ?? Dictionary(uniqueKeysWithValues: table.columns.map { ($0, SyncValue.null) })
        for (name, value) in assignments { values[name] = value }
        state.rows[table.name, default: [:]][syncID] = values
        outcome.changesApplied += 1
    }

    /// Rows whose foreign keys point at rows that no longer exist (after a concurrent delete).
    private func danglingReferences(_ state: State, tables names: Set<String>) -> [SyncWarning] {
        var warnings: [SyncWarning] = []
        for name in names.sorted(by: utf8Less) {
            guard let table = tablesByName[name], !table.references.isEmpty else { continue }
            for (syncID, values) in (state.rows[name] ?? [:]).sorted(by: { utf8Less($0.key, $1.key) }) {
                for (column, parent) in table.references.sorted(by: { $0.key < $1.key }) {
                    guard case .text(let target)? = values[column], state.rows[parent]?[target] == nil else { continue }
                    warnings.append(SyncWarning(kind: .danglingReference, message: "\(name) \(syncID) refers to a missing row of \(parent)",
                                                table: name, syncID: syncID))
                }
            }
        }
        return warnings
    }
}

/// Counting what pending change sets would delete, mirroring `GRDBStore+DeletionFailSafe.swift`.
extension InMemoryModelAdapter {
    @_spi(ModelAdapter) public func rowsDeleted(by changeSets: [ChangeStream]) throws -> [MassDeletion.Table] {
        let rows = withState { $0.rows }
        var deleted: [String: Set<String>] = [:]
        for changes in changeSets {
            try changes { change in
                guard change.kind == .delete, tablesByName[change.table] != nil, rows[change.table]?[change.syncID] != nil else { return }
                deleted[change.table, default: []].insert(change.syncID)
            }
        }
        return deleted.sorted { $0.key < $1.key }.map { name, ids in
            MassDeletion.Table(table: name, rowsDeleted: ids.count, rowCount: rows[name]?.count ?? 0)
        }
    }
}
