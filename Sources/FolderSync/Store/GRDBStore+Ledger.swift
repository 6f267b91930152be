import GRDB

/// The ledger of applied change sets, and beside it each client's run: `foldersync_applied_runs` holds, for
/// every client in the ledger, the highest `through` such that sets 1…through are all in it (0 without set 1).
///
/// Every sync reads the ledger. With the runs kept, a read costs a row per client plus the sets above a gap;
/// counting the ledger instead cost 2–3 ms a sync with 10,000 sets applied, and grew with history.
/// Every write of the ledger goes through here, so that the runs never disagree with it.
extension GRDBStore {

    /// Records set `sequence` of `client` and advances the client's run; a set recorded already is left as it is.
    static func recordApplied(_ db: Database, client: String, sequence: Int64, changeSetIdentifier: String) throws {
        let ledger = StoreSchema.appliedChangeSetsTable
        try db.execute(sql: "INSERT OR IGNORE INTO \(ledger)(client, sequence, change_set_id) VALUES (?, ?, ?)",
                       arguments: [client, sequence, changeSetIdentifier])
        guard db.changesCount > 0 else { return }
        let run = try appliedRun(db, client: client)
        var through = run ?? 0
        // Sets recorded above a gap join the run once the gap is filled.
        while try through + 1 == sequence || isApplied(db, client: client, sequence: through + 1) { through += 1 }
        if through != run {
            try db.execute(sql: "INSERT OR REPLACE INTO \(StoreSchema.appliedRunsTable)(client, through) VALUES (?, ?)", arguments: [client, through])
        }
    }

    /// The highest sequence of `client` up to which every set is in the ledger (its run); `nil` when it has none.
    static func appliedRun(_ db: Database, client: String) throws -> Int64? {
        try Int64.fetchOne(db, sql: "SELECT through FROM \(StoreSchema.appliedRunsTable) WHERE client = ?", arguments: [client])
    }

    /// Whether set `sequence` of `client` is in the ledger.
    static func isApplied(_ db: Database, client: String, sequence: Int64) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(StoreSchema.appliedChangeSetsTable) WHERE client = ? AND sequence = ?)",
                          arguments: [client, sequence]) == true
    }

    /// The ledger: each client's run, and the sets above it, found by the ledger's primary key from the run's end.
    static func appliedChangeSets(_ db: Database) throws -> AppliedChangeSets {
        var applied = AppliedChangeSets()
        let rows = try Row.fetchCursor(db, sql: """
            SELECT r.client, r.through, l.sequence FROM \(StoreSchema.appliedRunsTable) r
            LEFT JOIN \(StoreSchema.appliedChangeSetsTable) l ON l.client = r.client AND l.sequence > r.through
            """)
        while let row = try rows.next() {
            let client: String = row[0], through: Int64 = row[1]
            if through > 0 { applied.insert(1...through, of: client) }
            if let above: Int64 = row[2] { applied.insert(above, of: client) }
        }
        return applied
    }

    /// Gives a ledger written before the runs its runs, read the slow way once (when the store is opened).
    static func addRuns(_ db: Database) throws {
        var applied = AppliedChangeSets()
        let rows = try Row.fetchCursor(db, sql: "SELECT client, sequence FROM \(StoreSchema.appliedChangeSetsTable)")
        while let row = try rows.next() { applied.insert(row[1], of: row[0]) }
        let run = try db.makeStatement(sql: "INSERT INTO \(StoreSchema.appliedRunsTable)(client, through) VALUES (?, ?)")
        for client in Set(applied.contiguous.keys).union(applied.beyond.keys) {
            try run.execute(arguments: [client, applied.highestContiguousSequence(of: client)])
        }
    }

    /// Records sets 1…`through` of `client` (those not recorded yet) and extends its run over them.
    static func recordAppliedRun(_ db: Database, client: String, through: Int64) throws {
        guard through > 0 else { return }
        let ledger = try db.makeStatement(sql: "INSERT OR IGNORE INTO \(StoreSchema.appliedChangeSetsTable)(client, sequence, change_set_id) VALUES (?, ?, '')")
        for sequence in 1...through { try ledger.execute(arguments: [client, sequence]) }
        var run = max(through, try appliedRun(db, client: client) ?? 0)
        while try isApplied(db, client: client, sequence: run + 1) { run += 1 }
        try db.execute(sql: "INSERT OR REPLACE INTO \(StoreSchema.appliedRunsTable)(client, through) VALUES (?, ?)", arguments: [client, run])
    }

    /// Replaces the ledger by sets 1…n of each client in `covers` (an installed store's), or empties it.
    static func replaceLedger(_ db: Database, covers: [String: Int64] = [:]) throws {
        try db.execute(sql: "DELETE FROM \(StoreSchema.appliedChangeSetsTable)")
        try db.execute(sql: "DELETE FROM \(StoreSchema.appliedRunsTable)")
        let ledger = try db.makeStatement(sql: "INSERT INTO \(StoreSchema.appliedChangeSetsTable)(client, sequence, change_set_id) VALUES (?, ?, '')")
        let run = try db.makeStatement(sql: "INSERT INTO \(StoreSchema.appliedRunsTable)(client, through) VALUES (?, ?)")
        for (client, highest) in covers where highest > 0 {
            for sequence in 1...highest { try ledger.execute(arguments: [client, sequence]) }
            try run.execute(arguments: [client, highest])
        }
    }
}
