import Foundation
import GRDB

/// Tombstone collection in the store: each tombstone first gets a bound on the change set that carried its delete
/// (`foldersync_tombstone_sets`), then goes once that set is stable (``TombstoneHorizon``, <doc:TombstoneCollection>).
///
/// A bound, not the set itself: the store learns a delete from a set it applies, from a whole store, or from its own
/// write, and the set's number is not kept with the tombstone (whole stores would carry it). The bound is the highest
/// sequence of the author this client had applied or the folder showed when the tombstone was first met, which is at
/// least the set that carried it; it is kept while the tombstone holds the same delete.
extension GRDBStore {
    /// The key of the last horizon in `foldersync_meta`, which a snapshot is collected with before it is written.
    static let tombstoneHorizonKey = "tombstoneHorizon"

    /// Removes the tombstones `horizon` makes stable, with what a deleted row keeps under last writer wins (its
    /// registers and values); a row with an unpublished change keeps its tombstone. Saves `horizon` for the next
    /// snapshot. Returns how many tombstones went.
    @_spi(ModelAdapter) public func collectTombstones(_ horizon: TombstoneHorizon, localClient: String) throws -> Int {
        try wrap("collecting tombstones") {
            try database.write { db in
                try db.execute(
                    sql: "INSERT OR REPLACE INTO \(StoreSchema.metaTable)(key, value) VALUES (?, ?)",
                    arguments: [Self.tombstoneHorizonKey, try JSONEncoder().encode(horizon)])
                return try collectTombstones(db, horizon, localClient: localClient)
            }
        }
    }

    /// Collects with the horizon the last collection saved (nothing when there is none): a whole store never carries
    /// a tombstone this client knows to be collectable.
    func collectTombstonesWithSavedHorizon(localClient: String) throws {
        try wrap("collecting tombstones") {
            try database.write { db in
                guard
                    let saved = try Data.fetchOne(
                        db, sql: "SELECT value FROM \(StoreSchema.metaTable) WHERE key = ?",
                        arguments: [Self.tombstoneHorizonKey]),
                    let horizon = try? JSONDecoder().decode(TombstoneHorizon.self, from: saved)
                else { return }
                _ = try collectTombstones(db, horizon, localClient: localClient)
            }
        }
    }

    private func collectTombstones(_ db: Database, _ horizon: TombstoneHorizon, localClient: String) throws -> Int {
        let tombstones = StoreSchema.tombstonesTable
        let sets = StoreSchema.tombstoneSetsTable
        // Rows with a change not published yet: their tombstone is this client's own news, or meets it.
        let unpublished = """
            NOT EXISTS (SELECT 1 FROM \(StoreSchema.pendingChangesTable) p WHERE p.tbl = d.tbl AND p.sync_id = d.sync_id)
            AND NOT EXISTS (SELECT 1 FROM \(StoreSchema.stagedChangesTable) s WHERE s.tbl = d.tbl AND s.sync_id = d.sync_id)
            """
        try db.execute(
            sql: """
                DELETE FROM \(sets) WHERE NOT EXISTS (SELECT 1 FROM \(tombstones) d
                    WHERE d.tbl = \(sets).tbl AND d.sync_id = \(sets).sync_id AND d.hlc = \(sets).hlc AND d.client IS \(sets).client)
                """)
        try noteBounds(db, horizon, localClient: localClient, unpublished: unpublished)
        let removeTombstone = try db.makeStatement(sql: "DELETE FROM \(tombstones) WHERE tbl = ? AND sync_id = ?")
        let removeBound = try db.makeStatement(sql: "DELETE FROM \(sets) WHERE tbl = ? AND sync_id = ?")
        let removeRegisters = try db.makeStatement(
            sql: "DELETE FROM \(StoreSchema.clocksTable) WHERE tbl = ? AND sync_id = ?")
        let removeShadow = try db.makeStatement(
            sql: "DELETE FROM \(StoreSchema.shadowTable) WHERE tbl = ? AND sync_id = ?")
        // In batches by key, each read whole before anything of it is removed: memory does not grow with the store.
        let batch = try db.makeStatement(
            sql: """
                SELECT d.tbl, d.sync_id, ifnull(d.client, ?3), s.through FROM \(tombstones) d
                JOIN \(sets) s ON s.tbl = d.tbl AND s.sync_id = d.sync_id AND s.hlc = d.hlc AND s.client IS d.client
                WHERE (d.tbl, d.sync_id) > (?1, ?2) AND \(unpublished)
                ORDER BY d.tbl, d.sync_id LIMIT 10000
                """)
        var after = ("", "")
        var collected = 0
        while true {
            let rows = try Row.fetchAll(batch, arguments: [after.0, after.1, localClient])
            guard let last = rows.last else { break }
            after = (last[0], last[1])
            for row in rows
            where horizon.isStable(author: row[2], through: row[3])
                && tablesByName[row[0]]?.collectsTombstones == true
            {
                let arguments: StatementArguments = [row[0], row[1]]
                try removeTombstone.execute(arguments: arguments)
                try removeBound.execute(arguments: arguments)
                collected += 1
                // A row brought back by a newer write (last writer wins) keeps its registers; a deleted one keeps
                // nothing.
                if let table = tablesByName[row[0]], try rowExists(db, table: table, syncID: row[1]) { continue }
                try removeRegisters.execute(arguments: arguments)
                try removeShadow.execute(arguments: arguments)
            }
        }
        return collected
    }

    /// Gives each tombstone without one its bound: this client's own published delete is in a set at most its published
    /// sequence; another author's, in one at most the highest this client applied or the folder showed of it.
    private func noteBounds(_ db: Database, _ horizon: TombstoneHorizon, localClient: String, unpublished: String)
        throws
    {
        let ledger = try Self.appliedChangeSets(db)
        let published = try loadState(db).progress.publishedSequence
        func bound(_ author: String) -> Int64 {
            let applied = max(ledger.highestContiguousSequence(of: author), ledger.beyond[author]?.max() ?? 0)
            return max(applied, horizon.knownThrough[author] ?? 0, author == localClient ? published : 0)
        }
        let note = try db.makeStatement(
            sql: """
                INSERT OR REPLACE INTO \(StoreSchema.tombstoneSetsTable)(tbl, sync_id, hlc, client, through) VALUES (?, ?, ?, ?, ?)
                """)
        let unbounded = try Row.fetchCursor(
            db,
            sql: """
                SELECT d.tbl, d.sync_id, d.hlc, d.client FROM \(StoreSchema.tombstonesTable) d
                WHERE NOT EXISTS (SELECT 1 FROM \(StoreSchema.tombstoneSetsTable) s
                    WHERE s.tbl = d.tbl AND s.sync_id = d.sync_id AND s.hlc = d.hlc AND s.client IS d.client)
                  AND \(unpublished)
                """)
        // Each row noted is one the cursor has passed: SQLite keeps the cursor's place across writes of another table.
        while let row = try unbounded.next() {
            let client: String? = row[3]
            let through = bound(client ?? localClient)
            if through > 0 { try note.execute(arguments: [row[0], row[1], row[2], client, through]) }
        }
    }
}
