@_spi(ModelAdapter) public import FolderSync

/// Merging remote change sets, mirroring `GRDBStore+Apply.swift` step for step: both ask `MergeRule` what counts
/// as a conflict and who wins, and differ only in where they keep rows, registers and marks.
extension InMemoryModelAdapter {
    @_spi(ModelAdapter) public func conflicts(author: String, localClient: String, changes: ChangeStream) throws
        -> [SyncConflict]
    {
        let state = withState { $0 }
        var found: [SyncConflict] = []
        try changes { change in
            let row = RowKey(table: change.table, syncID: change.syncID)
            guard change.kind != .delete, tablesByName[change.table] != nil,
                let values = state.rows[change.table]?[change.syncID]
            else { return }
            let unpublished = state.pending[row] ?? [:]
            for column in change.columns where unpublished[column.column] != nil {
                if let conflict = MergeRule.conflict(
                    ColumnKey(table: change.table, syncID: change.syncID, column: column.column), remote: column,
                    author: author, over: state.clocks[row]?[column.column]?.stamp(localClient: localClient),
                    localValue: values[column.column] ?? .null, localClient: localClient)
                {
                    found.append(conflict)
                }
            }
        }
        return found
    }

    @_spi(ModelAdapter) public func apply(
        _ header: ChangeSetHeader, localClient: String, changes: ChangeStream,
        resolutions: [ColumnKey: ConflictResolution]
    ) throws -> ApplyOutcome {
        do {
            return try applyInTransaction(header, localClient: localClient, changes: changes, resolutions: resolutions)
        } catch let refused as UnmetConstraint {
            // Rolled back whole, as SQLite's constraint error rolls back GRDBStore's transaction.
            var outcome = ApplyOutcome()
            outcome.unmetConstraint = refused.message
            return outcome
        }
    }

    /// A write a constraint of the table refuses (``Table/notNullColumns``), in SQLite's words.
    private struct UnmetConstraint: Error {
        var message: String
    }

    private func applyInTransaction(
        _ header: ChangeSetHeader, localClient: String, changes: ChangeStream,
        resolutions: [ColumnKey: ConflictResolution]
    ) throws -> ApplyOutcome {
        try transaction { state, clock in
            var outcome = ApplyOutcome()
            if state.ledger.contains(header.sequence, header.changeSetIdentifier, of: header.clientIdentifier) {
                return outcome
            }
            let hasUnpublished = !state.pending.isEmpty
            var touched = Set<String>()
            try changes { change in
                try applyChange(
                    &state, &clock, change, author: header.clientIdentifier, localClient: localClient,
                    checkUnpublished: hasUnpublished, resolutions: resolutions, outcome: &outcome)
                if change.kind == .delete { touched.formUnion(tablesByName.keys) } else { touched.insert(change.table) }
            }
            state.ledger.record(header.sequence, header.changeSetIdentifier, of: header.clientIdentifier)
            if header.clientIdentifier == localClient, state.syncState.progress.ownChangeSetsToReapplyAfter != nil {
                // Mirrors GRDBStore.finishReapplyingOwnChangeSets.
                let through = state.ledger.applied.highestContiguousSequence(of: localClient)
                if through >= state.syncState.progress.publishedSequence {
                    state.syncState.progress.ownChangeSetsToReapplyAfter = nil
                }
            }
            outcome.warnings += danglingReferences(state, tables: touched)
            outcome.applied = true
            return outcome
        }
    }

    private func applyChange(
        _ state: inout State, _ clock: inout HybridLogicalClock, _ change: SyncChange, author: String,
        localClient: String, checkUnpublished: Bool, resolutions: [ColumnKey: ConflictResolution],
        outcome: inout ApplyOutcome
    ) throws {
        guard let table = tablesByName[change.table] else {
            outcome.changesIgnored += 1
            outcome.warnings.append(
                SyncWarning(
                    kind: .unknownFile, message: "change to unknown table \(change.table) ignored",
                    table: change.table, syncID: change.syncID))
            return
        }
        let syncID = change.syncID
        let row = RowKey(table: table.name, syncID: syncID)
        if change.kind == .delete {
            return try applyDelete(
                &state, &clock, change, table: table, author: author, localClient: localClient,
                checkUnpublished: checkUnpublished, resolutions: resolutions, outcome: &outcome)
        }
        if let tombstone = state.tombstones[row]?.stamp(localClient: localClient) {
            guard MergeRule.writeAfterDelete(policy: table.deletePolicy) == .apply else {
                outcome.changesIgnored += 1
                return
            }
            if state.rows[table.name]?[syncID] == nil {
                return try applyToDeletedRow(
                    &state, &clock, change, table: table, author: author, localClient: localClient,
                    tombstone: tombstone, outcome: &outcome)
            }
        }

        let current = state.rows[table.name]?[syncID]
        let stamps = state.clocks[row] ?? [:]
        let unpublished = checkUnpublished ? Set((state.pending[row] ?? [:]).keys) : []
        var assignments: [(String, SyncValue)] = []
        for column in change.columns where table.columns.contains(column.column) {
            clock.observe(column.timestamp)
            let name = column.column
            switch MergeRule.merge(
                ColumnKey(table: table.name, syncID: syncID, column: name),
                remote: ChangeStamp(timestamp: column.timestamp, clientIdentifier: author), value: column.value,
                over: stamps[name]?.stamp(localClient: localClient), unpublished: unpublished.contains(name),
                localValue: current.map { $0[name] ?? .null },
                localClient: localClient, resolutions: resolutions, conflicts: &outcome.conflicts)
            {
            case .ignore:
                continue
            case .record(let decided):
                // A new local change, newer than both, so that every replica converges on the decision.
                state.clocks[row, default: [:]][name] = Register(timestamp: clock.tick(now: now()), client: nil)
                state.pending[row, default: [:]][name] = .unstaged
                assignments.append((name, decided))
            case .apply:
                assignments.append((name, column.value))
                state.clocks[row, default: [:]][name] = Register(timestamp: column.timestamp, client: author)
                guard unpublished.contains(name) else { continue }
                state.dropUnstaged(row, column: name)
                if unpublished.contains(State.createdMarker) { outcome.suppliedUnpublishedInsert = true }
            }
        }
        if assignments.isEmpty && (current != nil || change.kind != .insert) {
            outcome.changesIgnored += 1
            return
        }
        var values = current ?? Dictionary(uniqueKeysWithValues: table.columns.map { ($0, SyncValue.null) })
        for (name, value) in assignments { values[name] = value }
        if let constraint = table.unmetConstraint(values) { throw UnmetConstraint(message: constraint) }
        state.rows[table.name, default: [:]][syncID] = values
        outcome.changesApplied += 1
    }

    /// A remote delete, by the table's policy, as `GRDBStore.applyDelete`: the newest delete is kept either way;
    /// delete wins drops the row's registers and its local changes not yet staged (and says so), last writer wins
    /// keeps both, and the row's values in the shadow.
    private func applyDelete(
        _ state: inout State, _ clock: inout HybridLogicalClock, _ change: SyncChange, table: Table, author: String,
        localClient: String, checkUnpublished: Bool, resolutions: [ColumnKey: ConflictResolution],
        outcome: inout ApplyOutcome
    ) throws {
        let syncID = change.syncID
        let row = RowKey(table: table.name, syncID: syncID)
        if table.deletePolicy == .lastWriterWins, !change.columns.isEmpty {
            // First the writes the author made before deleting, like any update.
            let writes = SyncChange(kind: .update, table: change.table, syncID: syncID, columns: change.columns)
            try applyChange(
                &state, &clock, writes, author: author, localClient: localClient, checkUnpublished: checkUnpublished,
                resolutions: resolutions, outcome: &outcome)
        }
        let timestamp = change.deletionTimestamp ?? .zero
        clock.observe(timestamp)
        let delete = ChangeStamp(timestamp: timestamp, clientIdentifier: author)
        let tombstone = state.tombstones[row]?.stamp(localClient: localClient)
        if MergeRule.isNewer(delete, than: tombstone) {
            state.tombstones[row] = Register(timestamp: timestamp, client: author)
        }
        let current = state.rows[table.name]?[syncID]
        let newest = state.clocks[row]?.values.map { $0.stamp(localClient: localClient) }.max()
        guard
            MergeRule.delete(
                delete, policy: table.deletePolicy, tombstone: tombstone, rowExists: current != nil, newestWrite: newest
            ) == .apply
        else {
            outcome.changesIgnored += 1
            return
        }
        switch table.deletePolicy {
        case .deleteWins:
            if checkUnpublished, state.pending[row]?.isEmpty == false {
                outcome.warnings.append(
                    SyncWarning(
                        kind: .changeToDeletedRow,
                        message:
                            "local changes to \(table.name) \(syncID) were dropped: client \(author) deleted the row",
                        table: table.name, syncID: syncID))
            }
            state.clocks[row] = nil
            state.dropUnstaged(row)
        case .lastWriterWins:
            // This client's unpublished writes, older than the delete, stay marked: they travel from the shadow.
            if let current { state.shadow[row, default: [:]].merge(current) { $1 } }
        }
        state.rows[table.name]?[syncID] = nil
        outcome.changesApplied += 1
    }

    /// Last writer wins: column writes to a deleted row update its kept registers, and bring the row back when
    /// the newest of them is newer than the delete.
    private func applyToDeletedRow(
        _ state: inout State, _ clock: inout HybridLogicalClock, _ change: SyncChange, table: Table,
        author: String, localClient: String, tombstone: ChangeStamp, outcome: inout ApplyOutcome
    ) throws {
        let row = RowKey(table: table.name, syncID: change.syncID)
        var stamps = state.clocks[row] ?? [:]
        for column in change.columns where table.columns.contains(column.column) {
            clock.observe(column.timestamp)
            let remote = ChangeStamp(timestamp: column.timestamp, clientIdentifier: author)
            // The row is not here: no local value, so no conflict.
            guard
                MergeRule.write(
                    remote, value: column.value, over: stamps[column.column]?.stamp(localClient: localClient),
                    unpublished: false, localValue: nil, localClient: localClient) == .apply
            else { continue }
            stamps[column.column] = Register(timestamp: column.timestamp, client: author)
            state.shadow[row, default: [:]][column.column] = column.value
        }
        if !stamps.isEmpty { state.clocks[row] = stamps }
        guard
            MergeRule.isAlive(
                newestWrite: stamps.values.map { $0.stamp(localClient: localClient) }.max(), deletedAt: tombstone)
        else {
            outcome.changesIgnored += 1
            return
        }
        var values = Dictionary(uniqueKeysWithValues: table.columns.map { ($0, SyncValue.null) })
        values.merge(state.shadow[row] ?? [:]) { $1 }
        if let constraint = table.unmetConstraint(values) { throw UnmetConstraint(message: constraint) }
        state.rows[table.name, default: [:]][change.syncID] = values
        state.shadow[row] = nil
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
                    warnings.append(
                        SyncWarning(
                            kind: .danglingReference, message: "\(name) \(syncID) refers to a missing row of \(parent)",
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
                guard change.kind == .delete, tablesByName[change.table] != nil,
                    rows[change.table]?[change.syncID] != nil
                else { return }
                deleted[change.table, default: []].insert(change.syncID)
            }
        }
        return deleted.sorted { $0.key < $1.key }.map { name, ids in
            MassDeletion.Table(table: name, rowsDeleted: ids.count, rowCount: rows[name]?.count ?? 0)
        }
    }

    @_spi(ModelAdapter) public func hasTable(largerThan rowCount: Int) throws -> Bool {
        withState { $0.rows.values.contains { $0.count > rowCount } }
    }
}
