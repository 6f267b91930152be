@_spi(ModelAdapter) import FolderSync
import Foundation

/// Resets and re-joins (invariant 5): a stopped client keeps its data and a backup, then re-joins without losing
/// writes.
extension SimulationRun {
    /// The codes of a remote wiped, replaced or deleted (as opposed to this client alone being deleted).
    static let wipeCodes: Set<FolderSyncError.Code> = [.integrityKeyMismatch, .documentDeleted]

    /// What a reset must leave untouched: the rows and whether changes wait to be published.
    struct LocalState: Equatable {
        var rows: [CanonicalRow]
        var hasUnpublishedChanges: Bool
    }

    func isReset(_ error: FolderSyncError) -> Bool {
        configuration.lifecycle && error.isReset
    }

    func localState(_ client: SimulatedClient) throws -> LocalState {
        LocalState(
            rows: try client.store.allRows(), hasUnpublishedChanges: try client.store.adapter.hasUnpublishedChanges())
    }

    /// Checks a reset the client reported: an expected code, a backup on disk, local data as it was. Then marks it
    /// stopped. `rejoining`: found by a re-join, which is a new reset even when its code is the one the client was
    /// stopped on.
    func noteReset(_ client: SimulatedClient, _ error: FolderSyncError, before: LocalState, rejoining: Bool = false)
        throws
    {
        if !rejoining, let reset = client.reset, error.code == reset {
            // The reset the client is stopped on, remembered (no new backup): what it is due to find next still stands.
            guard try localState(client) == before else {
                throw SimulationFailure.Detail(
                    "\(client.name) stopped again with \(error.code) but its local data changed")
            }
            return log("\(client.name) is still stopped by \(reset)")
        }
        // A client already stopped may find its reset again; once someone re-creates a deleted document, it is a
        // mismatch.
        var allowed = client.expectedResets.union(client.reset.map { [$0] } ?? [])
        if let reset = client.reset, Self.wipeCodes.contains(reset) { allowed.formUnion(Self.wipeCodes) }
        // Either installation of a copied client may be the one to find the other, and either may be the one that finds
        // their deletion (the other may re-join first, which removes the deletion marker).
        if sharedIdentity.contains(client.index) { allowed.formUnion([.clientIdentityShared, .clientDeleted]) }
        guard allowed.contains(error.code) else {
            throw SimulationFailure.Detail(
                "\(client.name) stopped with \(error.code) (\(error.message)), expected one of \(allowed)")
        }
        guard let backup = error.backupPath, FileManager.default.fileExists(atPath: backup) else {
            throw SimulationFailure.Detail(
                "\(client.name) stopped with \(error.code) without a backup on disk (backupPath \(error.backupPath ?? "nil"))"
            )
        }
        // A shared identity found by a re-join's sync comes after the re-join changed the store (it installed a whole
        // store).
        guard try localState(client) == before || (rejoining && error.code == .clientIdentityShared) else {
            throw SimulationFailure.Detail("\(client.name) stopped with \(error.code) but its local data changed")
        }
        client.reset = error.code
        // What it was due to find is found; but an installation of a copied client may find its deletion by the other
        // installation in a document wiped since, and still has the wipe to find.
        client.expectedResets =
            sharedIdentity.contains(client.index)
            ? client.expectedResets.intersection(Self.wipeCodes).subtracting([error.code]) : []
        summary.resets += 1
        if error.code == .clientIdentityShared { summary.sharedIdentitiesFound += 1 }
        log("\(client.name) stops with \(error.code), backup kept")
    }

    /// Re-joins a stopped client. After a wipe, records in the journal what the re-join re-publishes.
    ///
    /// `rejoin()` resets the local merge history before its first remote request, giving every local row fresh stamps;
    /// the journal reads them back at that request (see ``WriteJournal/rejoined(client:rows:unpublishedDeletes:)``).
    func rejoin(_ client: SimulatedClient) async throws {
        guard let document = client.document, let reset = client.reset,
            let store = client.store as? any SnapshottingSimulatorStore
        else { return }
        log("\(client.name) re-joins after \(reset)")
        let before = try localState(client)
        let restamped = RestampedRows()
        var unpublishedDeletes: Set<RowReference> = []
        if Self.wipeCodes.contains(reset) {
            unpublishedDeletes = try store.unpublishedDeletions()
            let identifier = client.identifier
            client.interruptions.beforeNextRequest { restamped.read(store, client: identifier) }
        }
        func recordRestamped() throws {
            guard Self.wipeCodes.contains(reset) else { return }
            guard let rows = try restamped.take() else {
                throw SimulationFailure.Detail("\(client.name)'s re-join made no remote request")
            }
            journal.rejoined(client: client.identifier, rows: rows, unpublishedDeletes: unpublishedDeletes)
        }
        do {
            let report = try await document.rejoin()
            try recordRestamped()
            client.reset = nil
            // A re-join absorbs what happened while the client was stopped (another wipe, its deletion again):
            // it registers afresh, so nothing it was due to find is left.
            client.expectedResets = []
            summary.rejoins += 1
            try completed(report, client, "re-joins")
        } catch let error as FolderSyncError where isReset(error) {
            try recordRestamped()
            try noteReset(client, error, before: before, rejoining: true)
        } catch let failure as SimulationFailure.Detail {
            throw failure
        } catch {
            throw SimulationFailure.Detail("\(client.name) failed to re-join after \(reset): \(error)")
        }
    }

    /// Before the final rounds: passes over every client (re-joining stopped ones, syncing the others, which may
    /// find a deletion or wipe not noticed yet) until a whole pass finds no reset.
    func settleResets() async throws {
        for pass in 1...6 {
            let resetsBefore = summary.resets
            let reclaimedBefore = markersReclaimed
            for client in clients {
                log("settling pass \(pass): \(client.name)")
                if client.reset == nil { try await sync(client) }
                var attempts = 0
                while client.reset != nil {
                    attempts += 1
                    guard attempts <= 3 else {
                        throw SimulationFailure.Detail(
                            "\(client.name) cannot re-join: still stopped by \(client.reset!) after 3 attempts")
                    }
                    try await rejoin(client)
                }
            }
            try await settleSharedIdentity()
            // A marker reclaimed from another installation of its client is read back by that one at its next sync.
            if summary.resets == resetsBefore && markersReclaimed == reclaimedBefore { return }
        }
        throw SimulationFailure.Detail("resets kept happening after 6 passes over every client")
    }

    /// The two installations of a copied client, both still under one identity, sync in turn a few times: each reads
    /// the marker the other wrote last, so that one finds the other (the one whose clock is not ahead, when the other
    /// reclaims the marker), as two devices in use do within their next syncs. Two that write nothing stay as they are:
    /// neither has anything the other lacks.
    private func settleSharedIdentity() async throws {
        let pair = clients.filter { sharedIdentity.contains($0.index) }
        guard pair.count == 2, pair[0].identifier == pair[1].identifier else { return }
        for turn in 0..<4 where pair.allSatisfy({ $0.reset == nil }) {
            let client = pair[turn % 2]
            log("settling the copied client: \(client.name)")
            try await sync(client)
        }
    }
}

/// The rows and stamps of a store read from inside a re-join (on the re-join's task), handed back to the run.
final class RestampedRows: Sendable {
    private let result = Locked<Result<[WriteJournal.ColumnWrite], any Error>?>(nil)

    func read(_ store: any SimulatorStore, client: String) {
        let read = Result { try WriteJournal.currentWrites(of: store, client: client) }
        result.withLock { $0 = read }
    }

    func take() throws -> [WriteJournal.ColumnWrite]? {
        try result.current?.get()
    }
}
