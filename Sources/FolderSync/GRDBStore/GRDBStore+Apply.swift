import Foundation
import GRDB

/// Merging remote change sets into the document: per-column last-writer-wins, delete wins, no echo.
extension GRDBStore {
    private struct RowState {
        var exists: Bool
        var values: Row?
        var registers: RowRegisters
        /// Columns with local changes not yet published (pending or staged).
        var unpublished: PendingMarks
    }

    func tombstone(_ db: Database, _ table: String, _ syncID: String, localClient: String) throws -> ChangeStamp? {
        try Row.fetchOne(
            db.cachedStatement(
                sql: "SELECT hlc, client FROM \(StoreSchema.tombstonesTable) WHERE tbl = ? AND sync_id = ?"),
            arguments: [table, syncID]
        )
        .map {
            ChangeStamp(
                timestamp: HybridTimestamp(rawValue: UInt64(bitPattern: $0[0])), clientIdentifier: $0[1] ?? localClient)
        }
    }

    /// The row's registers as stored, or `nil` when it has no `foldersync_clocks` row.
    func registers(_ db: Database, table: String, syncID: String) throws -> RowRegisters? {
        try Data.fetchOne(
            db.cachedStatement(sql: "SELECT stamps FROM \(StoreSchema.clocksTable) WHERE tbl = ? AND sync_id = ?"),
            arguments: [table, syncID]
        ).map { try RowRegisters($0) }
    }

    /// Stores the row's registers (an empty set removes its `foldersync_clocks` row).
    func saveRegisters(_ db: Database, _ registers: RowRegisters, table: String, syncID: String) throws {
        if registers.isEmpty {
            try db.cachedStatement(sql: "DELETE FROM \(StoreSchema.clocksTable) WHERE tbl = ? AND sync_id = ?").execute(
                arguments: [table, syncID])
        } else {
            try db.cachedStatement(
                sql: """
                    INSERT INTO \(StoreSchema.clocksTable)(tbl, sync_id, stamps) VALUES (?, ?, ?)
                    ON CONFLICT(tbl, sync_id) DO UPDATE SET stamps = excluded.stamps
                    """
            ).execute(arguments: [table, syncID, registers.encoded])
        }
    }

    /// Every mark of the row, staged or not: its local changes not yet published.
    func unpublishedMarks(_ db: Database, table: String, syncID: String) throws -> PendingMarks {
        var marks = PendingMarks()
        let rows = try Data.fetchCursor(
            db.cachedStatement(
                sql: """
                    SELECT marks FROM \(StoreSchema.pendingChangesTable) WHERE tbl = ?1 AND sync_id = ?2
                    UNION ALL SELECT marks FROM \(StoreSchema.stagedChangesTable) WHERE tbl = ?1 AND sync_id = ?2
                    """), arguments: [table, syncID])
        while let blob = try rows.next() { marks.formUnion(try PendingMarks(blob)) }
        return marks
    }

    /// Changes the marks of the row's pending row not yet staged: adds `add`, removes `remove`; a row left with
    /// no mark is deleted. Removing a column from marks of every column names the others.
    func updatePendingMarks(_ db: Database, table: String, syncID: String, add: [String], remove: [String]) throws {
        guard !add.isEmpty || !remove.isEmpty else { return }
        let pending = StoreSchema.pendingChangesTable
        var marks = try PendingMarks(
            try Data.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT marks FROM \(pending) WHERE tbl = ? AND sync_id = ? AND staged_in = 0
                        """), arguments: [table, syncID]))
        if remove.contains(where: { !StoreSchema.isMarker($0) }) {
            marks = marks.expanded(columns: columns[table] ?? [])
        }
        for name in remove { marks.remove(name) }
        for name in add { marks.insert(name) }
        if marks.isEmpty {
            try db.cachedStatement(sql: "DELETE FROM \(pending) WHERE tbl = ? AND sync_id = ? AND staged_in = 0")
                .execute(arguments: [table, syncID])
        } else {
            try db.cachedStatement(
                sql: """
                    INSERT INTO \(pending)(tbl, sync_id, staged_in, marks) VALUES (?, ?, 0, ?)
                    ON CONFLICT(tbl, sync_id, staged_in) DO UPDATE SET marks = excluded.marks
                    """
            ).execute(arguments: [table, syncID, marks.encoded])
        }
    }

    private func rowState(_ db: Database, table: SyncedTable, syncID: String, checkUnpublished: Bool) throws -> RowState
    {
        let stored = try registers(db, table: table.name, syncID: syncID)
        let unpublished =
            checkUnpublished ? try unpublishedMarks(db, table: table.name, syncID: syncID) : PendingMarks()
        // The values are needed only to tell a conflict: a column changed here and not yet published.
        if unpublished.isEmpty {
            return RowState(
                exists: try rowExists(db, table: table, syncID: syncID), values: nil,
                registers: stored ?? RowRegisters(), unpublished: unpublished)
        }
        let values = try Row.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT * FROM \(table.name.quotedDatabaseIdentifier) WHERE \(table.syncIDColumn.quotedDatabaseIdentifier) = ?
                    """), arguments: [syncID])
        return RowState(
            exists: values != nil, values: values?.copy(), registers: stored ?? RowRegisters(),
            unpublished: unpublished)
    }

    @_spi(ModelAdapter) public func conflicts(author: String, localClient: String, changes: ChangeStream) throws
        -> [SyncConflict]
    {
        try wrap("looking for conflicts") {
            try database.read { db in
                var found: [SyncConflict] = []
                try forEachFollowingRenames(changes) { change in
                    guard change.kind != .delete, let table = tablesByName[change.table] else { return }
                    let state = try rowState(db, table: table, syncID: change.syncID, checkUnpublished: true)
                    guard let values = state.values else { return }
                    for column in change.columns where state.unpublished.contains(column.column) {
                        if let conflict = MergeRule.conflict(
                            ColumnKey(table: change.table, syncID: change.syncID, column: column.column),
                            remote: column, author: author,
                            over: state.registers.stamp(of: column.column, localClient: localClient),
                            localValue: SyncValue(values[column.column] as DatabaseValue), localClient: localClient)
                        {
                            found.append(conflict)
                        }
                    }
                }
                return found
            }
        }
    }

    @_spi(ModelAdapter) public func apply(
        _ header: ChangeSetHeader, localClient: String, changes: ChangeStream,
        resolutions: [ColumnKey: ConflictResolution]
    ) throws -> ApplyOutcome {
        try apply(header, localClient: localClient, changes: changes, resolutions: resolutions, remote: nil)
    }

    /// Applies the set in one transaction, saving `remote` (what the sync learned of the remote) in it when given.
    func apply(
        _ header: ChangeSetHeader, localClient: String, changes: ChangeStream,
        resolutions: [ColumnKey: ConflictResolution], remote: LocalSyncState.RemoteKnowledge?
    ) throws -> ApplyOutcome {
        try wrap("applying change set \(header.sequence) of client \(header.clientIdentifier)") {
            do {
                return try applyInTransaction(
                    header, localClient: localClient, changes: changes, resolutions: resolutions,
                    remote: remote)
            } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
                // Rolled back whole: a set another client published may supply what the constraint asks for.
                var outcome = ApplyOutcome()
                outcome.unmetConstraint = error.message ?? "\(error.resultCode)"
                return outcome
            }
        }
    }

    private func applyInTransaction(
        _ header: ChangeSetHeader, localClient: String, changes: ChangeStream,
        resolutions: [ColumnKey: ConflictResolution],
        remote: LocalSyncState.RemoteKnowledge?
    ) throws -> ApplyOutcome {
        try writeWithoutCapture(savingRemoteKnowledge: remote) { db in
            var outcome = ApplyOutcome()
            if try Self.isApplied(
                db, client: header.clientIdentifier, sequence: header.sequence,
                changeSetIdentifier: header.changeSetIdentifier)
            {
                return outcome
            }
            let hasUnpublished = try StoreSchema.holdsUnpublishedChanges(db)
            var touched = TouchedRows()
            let inserts = NewRowInserts()
            try forEachFollowingRenames(changes) { change in
                try applyChange(
                    db, change, author: header.clientIdentifier, localClient: localClient,
                    checkUnpublished: hasUnpublished, resolutions: resolutions, inserts: inserts, outcome: &outcome)
                touched.note(change)
            }
            try Self.recordApplied(
                db, client: header.clientIdentifier, sequence: header.sequence,
                changeSetIdentifier: header.changeSetIdentifier)
            if header.clientIdentifier == localClient {
                try finishReapplyingOwnChangeSets(db, localClient: localClient)
            }
            outcome.warnings += try danglingReferences(db, touched)
            try notifyObservers(ofChangesIn: outcome.changedRows.changedTables, db)
            outcome.applied = true
            return outcome
        }
    }

    /// The fast path's statements, prepared once per applied change set: most changes of a bulk sync are rows
    /// this client has never seen, which need no merge, only an insert of the row and of its registers.
    private final class NewRowInserts {
        /// Per table: the sync ID, then every column in table order; does nothing when the sync ID is there.
        private var inserts: [String: SQLiteStatement] = [:]
        private var claim: SQLiteStatement?
        private var release: SQLiteStatement?

        func insert(_ db: Database, _ table: SyncedTable, columns: [String]) throws -> SQLiteStatement {
            if let statement = inserts[table.name] { return statement }
            let id = table.syncIDColumn.quotedDatabaseIdentifier
            let names = ([id] + columns.map(\.quotedDatabaseIdentifier)).joined(separator: ", ")
            let placeholders = Array(repeating: "?", count: columns.count + 1).joined(separator: ", ")
            let statement = try SQLiteStatement(
                db,
                sql: """
                    INSERT INTO \(table.name.quotedDatabaseIdentifier)(\(names)) VALUES (\(placeholders)) ON CONFLICT(\(id)) DO NOTHING
                    """)
            inserts[table.name] = statement
            return statement
        }

        /// Inserts the registers (`tbl`, `sync_id`, `stamps`) unless the row has registers, a tombstone or an
        /// unpublished change: one statement where a probe and an insert were two lookups of each.
        func claim(_ db: Database) throws -> SQLiteStatement {
            if let claim { return claim }
            let statement = try SQLiteStatement(
                db,
                sql: """
                    INSERT INTO \(StoreSchema.clocksTable)(tbl, sync_id, stamps) SELECT ?1, ?2, ?3
                    WHERE NOT EXISTS (SELECT 1 FROM \(StoreSchema.tombstonesTable) WHERE tbl = ?1 AND sync_id = ?2)
                      AND NOT EXISTS (SELECT 1 FROM \(StoreSchema.pendingChangesTable) WHERE tbl = ?1 AND sync_id = ?2)
                      AND NOT EXISTS (SELECT 1 FROM \(StoreSchema.stagedChangesTable) WHERE tbl = ?1 AND sync_id = ?2)
                    ON CONFLICT(tbl, sync_id) DO NOTHING
                    """)
            claim = statement
            return statement
        }

        /// Removes registers a claim inserted (`tbl`, `sync_id`).
        func release(_ db: Database) throws -> SQLiteStatement {
            if let release { return release }
            let statement = try SQLiteStatement(
                db, sql: "DELETE FROM \(StoreSchema.clocksTable) WHERE tbl = ?1 AND sync_id = ?2")
            self.release = statement
            return statement
        }
    }

    /// Inserts a row this client has never seen, with every column of the table in order: nothing to merge, so
    /// every column wins as it is. Returns false, having changed nothing, when the row is known in any way.
    private func insertNewRow(
        _ db: Database, _ change: SyncChange, table: SyncedTable, author: String,
        inserts: NewRowInserts
    ) throws -> Bool {
        let claim = try inserts.claim(db)
        claim.bind(table.name, at: 1)
        claim.bind(change.syncID, at: 2)
        // Distinct columns: a change set never carries one twice (ChangeSetRecord checks).
        claim.bind(RowRegisters.encoded(change.columns, client: author), at: 3)
        guard try claim.executeCountingChanges() == 1 else { return false }
        let insert = try inserts.insert(db, table, columns: columns[table.name] ?? [])
        let inserted = try insert.withValuesBound(
            count: change.columns.count + 1, from: 1,
            { $0 == 0 ? .text(change.syncID) : change.columns[$0 - 1].value }
        ) {
            try insert.executeCountingChanges()
        }
        guard inserted == 1 else {
            // The row is there, without registers: it is merged as a known row, the claim undone.
            let release = try inserts.release(db)
            release.bind(table.name, at: 1)
            release.bind(change.syncID, at: 2)
            try release.execute()
            return false
        }
        clock.observe(change.columns.reduce(HybridTimestamp.zero) { max($0, $1.timestamp) })
        return true
    }

    private func applyChange(
        _ db: Database, _ change: SyncChange, author: String, localClient: String, checkUnpublished: Bool,
        resolutions: [ColumnKey: ConflictResolution], inserts: NewRowInserts, outcome: inout ApplyOutcome
    ) throws {
        guard let table = tablesByName[change.table], let known = columns[change.table] else {
            outcome.changesIgnored += 1
            outcome.warnings.append(
                SyncWarning(
                    kind: .unknownFile, message: "change to unknown table \(change.table) ignored",
                    table: change.table, syncID: change.syncID))
            return
        }
        let syncID = change.syncID
        if change.kind == .insert && change.columns.count == known.count
            && zip(change.columns, known).allSatisfy({ $0.column == $1 }),
            try insertNewRow(db, change, table: table, author: author, inserts: inserts)
        {
            outcome.changesApplied += 1
            outcome.changedRows.inserted(table.name, syncID)
            return
        }
        if change.kind == .delete {
            return try applyDelete(
                db, change, table: table, author: author, localClient: localClient, checkUnpublished: checkUnpublished,
                resolutions: resolutions, inserts: inserts, outcome: &outcome)
        }
        if let tombstone = try tombstone(db, table.name, syncID, localClient: localClient) {
            guard MergeRule.writeAfterDelete(policy: table.deletePolicy) == .apply else {
                outcome.changesIgnored += 1
                return
            }
            if try !rowExists(db, table: table, syncID: syncID) {
                return try applyToDeletedRow(
                    db, change, table: table, author: author, localClient: localClient,
                    tombstone: tombstone, outcome: &outcome)
            }
        }

        var state = try rowState(db, table: table, syncID: syncID, checkUnpublished: checkUnpublished)
        var assignments: [(String, DatabaseValue)] = []
        var markPending: [String] = []
        var dropPending: [String] = []
        for column in change.columns where known.contains(column.column) {
            clock.observe(column.timestamp)
            let name = column.column
            let unpublished = state.unpublished.contains(name)
            switch MergeRule.merge(
                ColumnKey(table: table.name, syncID: syncID, column: name),
                remote: ChangeStamp(timestamp: column.timestamp, clientIdentifier: author), value: column.value,
                over: state.registers.stamp(of: name, localClient: localClient), unpublished: unpublished,
                localValue: unpublished ? state.values.map { SyncValue($0[name] as DatabaseValue) } : nil,
                localClient: localClient, resolutions: resolutions, conflicts: &outcome.conflicts)
            {
            case .ignore:
                continue
            case .record(let decided):
                // A new local change, newer than both, so that every replica converges on the decision.
                state.registers.set(name, timestamp: try clock.tick(now: now()).rawValue, client: nil)
                assignments.append((name, decided.databaseValue))
                markPending.append(name)
            case .apply:
                assignments.append((name, column.value.databaseValue))
                state.registers.set(name, timestamp: column.timestamp.rawValue, client: author)
                guard unpublished else { continue }
                dropPending.append(name)
                if state.unpublished.contains(StoreSchema.createdMarker) { outcome.suppliedUnpublishedInsert = true }
            }
        }
        if assignments.isEmpty && (state.exists || change.kind != .insert) {
            outcome.changesIgnored += 1
            return
        }
        if !assignments.isEmpty { try saveRegisters(db, state.registers, table: table.name, syncID: syncID) }
        try updatePendingMarks(db, table: table.name, syncID: syncID, add: markPending, remove: dropPending)
        let id = table.syncIDColumn.quotedDatabaseIdentifier
        let quotedTable = table.name.quotedDatabaseIdentifier
        let names = assignments.map(\.0.quotedDatabaseIdentifier)
        var arguments = StatementArguments(assignments.map(\.1))
        if state.exists {
            arguments += [syncID]
            try db.cachedStatement(
                sql: "UPDATE \(quotedTable) SET \(names.map { "\($0) = ?" }.joined(separator: ", ")) WHERE \(id) = ?"
            )
            .execute(arguments: arguments)
            outcome.changedRows.updated(table.name, syncID, columns: assignments.map(\.0))
        } else {
            arguments = [syncID] + arguments
            let placeholders = Array(repeating: "?", count: assignments.count + 1).joined(separator: ", ")
            try db.cachedStatement(
                sql: "INSERT INTO \(quotedTable)(\(([id] + names).joined(separator: ", "))) VALUES (\(placeholders))"
            )
            .execute(arguments: arguments)
            outcome.changedRows.inserted(table.name, syncID)
        }
        outcome.changesApplied += 1
    }

    func rowExists(_ db: Database, table: SyncedTable, syncID: String) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT EXISTS (SELECT 1 FROM \(table.name.quotedDatabaseIdentifier) WHERE \(table.syncIDColumn.quotedDatabaseIdentifier) = ?)
                    """), arguments: [syncID]) ?? false
    }

    /// A remote delete, by the table's policy (``MergeRule/delete(_:policy:tombstone:rowExists:newestWrite:)``). The
    /// newest delete is kept either way. Delete wins drops the row's registers and its local changes not yet staged
    /// (and says so); last writer wins keeps both, and the row's values in the shadow table, for a newer write to bring
    /// back.
    private func applyDelete(
        _ db: Database, _ change: SyncChange, table: SyncedTable, author: String, localClient: String,
        checkUnpublished: Bool, resolutions: [ColumnKey: ConflictResolution], inserts: NewRowInserts,
        outcome: inout ApplyOutcome
    ) throws {
        let syncID = change.syncID
        if table.deletePolicy == .lastWriterWins, !change.columns.isEmpty {
            // First the writes the author made before deleting, like any update.
            let writes = SyncChange(kind: .update, table: change.table, syncID: syncID, columns: change.columns)
            try applyChange(
                db, writes, author: author, localClient: localClient, checkUnpublished: checkUnpublished,
                resolutions: resolutions, inserts: inserts, outcome: &outcome)
        }
        let timestamp = change.deletionTimestamp ?? .zero
        clock.observe(timestamp)
        let delete = ChangeStamp(timestamp: timestamp, clientIdentifier: author)
        let tombstone = try tombstone(db, table.name, syncID, localClient: localClient)
        if MergeRule.isNewer(delete, than: tombstone) {
            try db.cachedStatement(
                sql:
                    "INSERT OR REPLACE INTO \(StoreSchema.tombstonesTable)(tbl, sync_id, hlc, client) VALUES (?, ?, ?, ?)"
            )
            .execute(arguments: [table.name, syncID, Int64(bitPattern: timestamp.rawValue), author])
        }
        let exists = try rowExists(db, table: table, syncID: syncID)
        let newest = try registers(db, table: table.name, syncID: syncID)?.newest(localClient: localClient)
        guard
            MergeRule.delete(
                delete, policy: table.deletePolicy, tombstone: tombstone, rowExists: exists, newestWrite: newest)
                == .apply
        else {
            outcome.changesIgnored += 1
            return
        }
        let id = table.syncIDColumn.quotedDatabaseIdentifier
        let quoted = table.name.quotedDatabaseIdentifier
        switch table.deletePolicy {
        case .deleteWins:
            if checkUnpublished, try !unpublishedMarks(db, table: table.name, syncID: syncID).isEmpty {
                outcome.warnings.append(
                    SyncWarning(
                        kind: .changeToDeletedRow,
                        message:
                            "local changes to \(table.name) \(syncID) were dropped: client \(author) deleted the row",
                        table: table.name, syncID: syncID))
            }
            try db.cachedStatement(sql: "DELETE FROM \(StoreSchema.clocksTable) WHERE tbl = ? AND sync_id = ?").execute(
                arguments: [table.name, syncID])
            try db.cachedStatement(
                sql: "DELETE FROM \(StoreSchema.pendingChangesTable) WHERE tbl = ? AND sync_id = ? AND staged_in = 0"
            )
            .execute(arguments: [table.name, syncID])
        case .lastWriterWins:
            if let row = try Row.fetchOne(db, sql: "SELECT * FROM \(quoted) WHERE \(id) = ?", arguments: [syncID]) {
                for column in columns[table.name] ?? [] {
                    try db.execute(
                        sql:
                            "INSERT OR REPLACE INTO \(StoreSchema.shadowTable)(tbl, sync_id, col, value) VALUES (?, ?, ?, ?)",
                        arguments: [table.name, syncID, column, row[column] as DatabaseValue])
                }
            }
        // This client's unpublished writes, older than the delete, stay marked: they travel from the shadow table
        // (staging's `writesToDeletedRow`), so that the row, if a newer write brings it back, has them everywhere.
        }
        try db.cachedStatement(sql: "DELETE FROM \(quoted) WHERE \(id) = ?").execute(arguments: [syncID])
        if exists { outcome.changedRows.deleted(table.name, syncID) }
        outcome.changesApplied += 1
    }

    /// Last writer wins: column writes to a deleted row update its kept registers, and bring the row back when
    /// the newest of them is newer than the delete.
    private func applyToDeletedRow(
        _ db: Database, _ change: SyncChange, table: SyncedTable, author: String, localClient: String,
        tombstone: ChangeStamp, outcome: inout ApplyOutcome
    ) throws {
        var stamps = try registers(db, table: table.name, syncID: change.syncID) ?? RowRegisters()
        let known = Set(columns[table.name] ?? [])
        var changed = false
        for column in change.columns where known.contains(column.column) {
            clock.observe(column.timestamp)
            let remote = ChangeStamp(timestamp: column.timestamp, clientIdentifier: author)
            // The row is not here: no local value, so no conflict.
            guard
                MergeRule.write(
                    remote, value: column.value, over: stamps.stamp(of: column.column, localClient: localClient),
                    unpublished: false, localValue: nil, localClient: localClient) == .apply
            else { continue }
            stamps.set(column.column, timestamp: column.timestamp.rawValue, client: author)
            changed = true
            try db.execute(
                sql: "INSERT OR REPLACE INTO \(StoreSchema.shadowTable)(tbl, sync_id, col, value) VALUES (?, ?, ?, ?)",
                arguments: [table.name, change.syncID, column.column, column.value.databaseValue])
        }
        if changed { try saveRegisters(db, stamps, table: table.name, syncID: change.syncID) }
        guard MergeRule.isAlive(newestWrite: stamps.newest(localClient: localClient), deletedAt: tombstone) else {
            outcome.changesIgnored += 1
            return
        }
        try bringBack(db, table: table, syncID: change.syncID)
        outcome.changedRows.inserted(table.name, change.syncID)
        outcome.changesApplied += 1
    }

    /// Inserts a deleted row that comes back (last writer wins): `values` with the values kept for it while it was
    /// deleted (the shadow table) over them, whose kept values are then forgotten.
    func bringBack(_ db: Database, table: SyncedTable, syncID: String, values: [String: DatabaseValue] = [:]) throws {
        var values = values
        for kept in try Row.fetchAll(
            db, sql: "SELECT col, value FROM \(StoreSchema.shadowTable) WHERE tbl = ? AND sync_id = ?",
            arguments: [table.name, syncID])
        {
            values[kept[0]] = kept[1] as DatabaseValue
        }
        let names = values.keys.sorted()
        let columns = ([table.syncIDColumn] + names).map(\.quotedDatabaseIdentifier).joined(separator: ", ")
        try db.execute(
            sql: """
                INSERT INTO \(table.name.quotedDatabaseIdentifier)(\(columns))
                VALUES (\(Array(repeating: "?", count: names.count + 1).joined(separator: ", ")))
                """, arguments: [syncID] + StatementArguments(names.map { values[$0]! }))
        try db.execute(
            sql: "DELETE FROM \(StoreSchema.shadowTable) WHERE tbl = ? AND sync_id = ?",
            arguments: [table.name, syncID])
    }
}
