import Foundation
import GRDB

/// A store restored from an earlier copy of itself continues after what its client already published (see
/// ``ModelAdapter/continueAfterRestore(remotePublishedSequence:localClient:)``).
extension GRDBStore {
    @_spi(ModelAdapter) public func continueAfterRestore(remotePublishedSequence remote: Int64, localClient: String) throws {
        try wrap("continuing after a restored copy") {
            try database.write { db in
                var state = try loadState(db)
                let local = state.publishedSequence
                guard remote > local else { return }
                // Staged in sets whose numbers the remote gave to other changes: back to pending, marks merged.
                let staged = try Row.fetchAll(db, sql: "SELECT tbl, sync_id, marks FROM \(StoreSchema.stagedChangesTable) WHERE staged_in > ?",
                                              arguments: [local])
                for row in staged {
                    let table: String = row[0], syncID: String = row[1]
                    try updatePendingMarks(db, table: table, syncID: syncID, add: try PendingMarks(row[2] as Data?).names, remove: [])
                }
                try db.execute(sql: "DELETE FROM \(StoreSchema.stagedChangesTable) WHERE staged_in > ?", arguments: [local])
                try Self.recordAppliedRun(db, client: localClient, through: local)
                state.ownChangeSetsToReapplyAfter = local
                state.publishedSequence = remote
                state.nextSequence = max(state.nextSequence, remote + 1)
                state.recentlyPublished = []
                state.announcedSequence = 0
                try Self.save(state: try JSONEncoder().encode(state), db)
            }
        }
    }
}
