import GRDB

/// The ledger of applied change sets, and beside it each client's run: `foldersync_applied_runs` holds, for
/// every client in the ledger, the highest `through` such that every number 1…through holds a set recorded in the
/// ledger, or was covered by an installed whole store or a restore (0 without set 1).
///
/// The ledger records each applied set by client, number and change-set identifier (bookkeeping version 7): two
/// installations of one client (a device copied to a second computer) can publish two sets under one number, and
/// a reader applies both, so it must know which of them it applied. What a whole store or a restore covers is
/// recorded as a run alone, without a row per set: a run costs one row whatever number a manifest claims, and a
/// number covered that way names no set (a reader that finds two sets there applies both again, which changes
/// nothing it holds).
///
/// Every sync reads the ledger. With the runs kept, a read costs a row per client plus the sets above a run;
/// counting the ledger instead cost 2–3 ms a sync with 10,000 sets applied, and grew with history.
/// Every write of the ledger goes through here, so that the runs never disagree with it.
extension GRDBStore {

    /// Records set `sequence` of `client` and advances the client's run; a set recorded already is left as it is.
    static func recordApplied(_ db: Database, client: String, sequence: Int64, changeSetIdentifier: String) throws {
        let ledger = StoreSchema.appliedChangeSetsTable
        try db.execute(
            sql: "INSERT OR IGNORE INTO \(ledger)(client, sequence, change_set_id) VALUES (?, ?, ?)",
            arguments: [client, sequence, changeSetIdentifier])
        guard db.changesCount > 0 else { return }
        let run = try appliedRun(db, client: client)
        var through = run ?? 0
        // Sets recorded above a gap join the run once the gap is filled.
        while try through + 1 == sequence || isApplied(db, client: client, sequence: through + 1) { through += 1 }
        if through != run {
            try db.execute(
                sql: "INSERT OR REPLACE INTO \(StoreSchema.appliedRunsTable)(client, through) VALUES (?, ?)",
                arguments: [client, through])
        }
    }

    /// The highest sequence of `client` up to which every set is in the ledger (its run); `nil` when it has none.
    static func appliedRun(_ db: Database, client: String) throws -> Int64? {
        try Int64.fetchOne(
            db, sql: "SELECT through FROM \(StoreSchema.appliedRunsTable) WHERE client = ?", arguments: [client])
    }

    /// Whether a set numbered `sequence` of `client` has a row in the ledger.
    static func isApplied(_ db: Database, client: String, sequence: Int64) throws -> Bool {
        try Bool.fetchOne(
            db,
            sql:
                "SELECT EXISTS (SELECT 1 FROM \(StoreSchema.appliedChangeSetsTable) WHERE client = ? AND sequence = ?)",
            arguments: [client, sequence]) == true
    }

    /// Whether the set `changeSetIdentifier`, numbered `sequence`, of `client` has a row in the ledger.
    static func isApplied(_ db: Database, client: String, sequence: Int64, changeSetIdentifier: String) throws -> Bool {
        try Bool.fetchOne(
            db,
            sql: """
                SELECT EXISTS (SELECT 1 FROM \(StoreSchema.appliedChangeSetsTable) WHERE client = ? AND sequence = ? AND change_set_id = ?)
                """, arguments: [client, sequence, changeSetIdentifier]) == true
    }

    /// The ledger: each client's run, and the sets above it, found by the ledger's primary key from the run's end.
    static func appliedChangeSets(_ db: Database) throws -> AppliedChangeSets {
        var applied = AppliedChangeSets()
        let rows = try Row.fetchCursor(
            db,
            sql: """
                SELECT r.client, r.through, l.sequence FROM \(StoreSchema.appliedRunsTable) r
                LEFT JOIN \(StoreSchema.appliedChangeSetsTable) l ON l.client = r.client AND l.sequence > r.through
                """)
        while let row = try rows.next() {
            let client: String = row[0]
            let through: Int64 = row[1]
            if through > 0 { applied.insert(1...through, of: client) }
            if let above: Int64 = row[2] { applied.insert(above, of: client) }
        }
        return applied
    }

    /// The identifiers of the sets of `client` the ledger records under each of `sequences`.
    static func appliedIdentifiers(_ db: Database, client: String, sequences: [Int64]) throws -> [Int64: Set<String>] {
        var found: [Int64: Set<String>] = [:]
        let statement = try db.makeStatement(
            sql: """
                SELECT change_set_id FROM \(StoreSchema.appliedChangeSetsTable) WHERE client = ? AND sequence = ?
                """)
        for sequence in Set(sequences) {
            found[sequence] = Set(try String.fetchAll(statement, arguments: [client, sequence]))
        }
        return found
    }

    /// Records that sets 1…`through` of `client` are covered (a run, no row per set) and extends the run over the
    /// sets recorded above it.
    static func recordAppliedRun(_ db: Database, client: String, through: Int64) throws {
        guard through > 0 else { return }
        var run = max(through, try appliedRun(db, client: client) ?? 0)
        while try isApplied(db, client: client, sequence: run + 1) { run += 1 }
        try db.execute(
            sql: "INSERT OR REPLACE INTO \(StoreSchema.appliedRunsTable)(client, through) VALUES (?, ?)",
            arguments: [client, run])
    }

    /// Replaces the ledger by the runs 1…n of each client in `covers` (an installed store's), or empties it.
    static func replaceLedger(_ db: Database, covers: [String: Int64] = [:]) throws {
        try db.execute(sql: "DELETE FROM \(StoreSchema.appliedChangeSetsTable)")
        try db.execute(sql: "DELETE FROM \(StoreSchema.appliedRunsTable)")
        let run = try db.makeStatement(
            sql: "INSERT INTO \(StoreSchema.appliedRunsTable)(client, through) VALUES (?, ?)")
        for (client, highest) in covers where highest > 0 { try run.execute(arguments: [client, highest]) }
    }
}
