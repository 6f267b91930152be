import Foundation
import GRDB

/// A store restored from an earlier copy of itself continues after what its client already published (see
/// ``ModelAdapter/continueAfterRestore(remotePublishedSequence:localClient:)``).
extension GRDBStore {
    @_spi(ModelAdapter) public func continueAfterRestore(remotePublishedSequence remote: Int64, localClient: String)
        throws
    {
        try wrap("continuing after a restored copy") {
            try database.write { db in
                try settleDeletions(db)
                let local = try loadState(db).progress.publishedSequence
                guard remote > local else { return }
                // Staged in sets whose numbers the remote gave to other changes: back to pending, marks merged.
                let staged = try Row.fetchAll(
                    db, sql: "SELECT tbl, sync_id, marks FROM \(StoreSchema.stagedChangesTable) WHERE staged_in > ?",
                    arguments: [local])
                for row in staged {
                    let table: String = row[0]
                    let syncID: String = row[1]
                    try updatePendingMarks(
                        db, table: table, syncID: syncID, add: try PendingMarks(row[2] as Data?).names, remove: [])
                }
                try db.execute(
                    sql: "DELETE FROM \(StoreSchema.stagedChangesTable) WHERE staged_in > ?", arguments: [local])
                try Self.recordAppliedRun(db, client: localClient, through: local)
                try updateProgress(db) { progress in
                    progress.ownChangeSetsToReapplyAfter = local
                    progress.publishedSequence = remote
                    progress.nextSequence = max(progress.nextSequence, remote + 1)
                }
            }
        }
    }

    /// Once this client's own sets applied again reach its published sequence, nothing of its own is missing any
    /// more: ``LocalSyncState/Progress/ownChangeSetsToReapplyAfter`` is cleared, in the apply's transaction.
    func finishReapplyingOwnChangeSets(_ db: Database, localClient: String) throws {
        let progress = try loadState(db).progress
        guard progress.ownChangeSetsToReapplyAfter != nil else { return }
        guard try Self.appliedRun(db, client: localClient) ?? 0 >= progress.publishedSequence else { return }
        try updateProgress(db) { $0.ownChangeSetsToReapplyAfter = nil }
    }
}
