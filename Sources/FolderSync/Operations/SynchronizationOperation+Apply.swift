import Foundation
import Logging

/// Applying downloaded change sets in causal order, each in one local transaction with its ledger entry, after the
/// deletion fail-safe and the conflict resolver had their say.
extension SynchronizationOperation {
    /// Applies `available` unless a mass deletion among them is declined (``checkMassDeletion(_:)``), which is
    /// kept in `declined` and leaves every set unapplied. Returns the sets left waiting.
    func applyUnlessDeclined(_ available: [Available], declined: inout FolderSyncError?, _ run: inout Run) async throws
        -> [Available]
    {
        do {
            if !isReadOnly { try await checkMassDeletion(available, &run) }
        } catch let error as FolderSyncError where error.code == .massDeletionDeclined {
            declined = error
            return []
        }
        return try await applyInCausalOrder(available, &run)
    }

    /// Downloads and applies change sets so that each set comes after the sets its author had applied when writing it.
    /// Returns the sets left waiting for others (parked ones aside).
    func applyInCausalOrder(_ available: [Available], _ run: inout Run) async throws -> [Available] {
        var pending = available
        var ledger = try acknowledgement(&run)
        // This client's own sets it holds need no order: under their numbers, another installation's (a shared
        // identity) apply at once.
        let own = try store.loadSyncState().progress
        let ownHeld = own.ownChangeSetsToReapplyAfter ?? own.publishedSequence
        var parkedClients = Set<String>()
        var index = 0
        var progress = true
        while progress && !pending.isEmpty {
            progress = false
            // Positions in `pending`, not a Set<Int>: a process's first Set of a type costs a conformance lookup
            // across every loaded image.
            var applied = [Bool](repeating: false, count: pending.count)
            for (position, candidate) in pending.enumerated() {
                try Task.checkCancellation()
                // The next number of its client, or one applied already: a second set under one number.
                guard !parkedClients.contains(candidate.client), !run.unreadable.contains(candidate.client),
                    candidate.sequence <= (ledger[candidate.client] ?? 0) + 1
                        || candidate.client == clientIdentifier && candidate.sequence <= ownHeld
                else { continue }
                guard let set = try await downloadOnce(candidate, &run) else { continue }
                let header = set.header
                if header.schemaVersion > store.schemaVersion {
                    parkedClients.insert(candidate.client)
                    run.report.parkedChangeSets.append(candidate.path.description)
                    run.report.warnings.append(
                        SyncWarning(
                            kind: .changeSetParked,
                            message:
                                "change set uses schema version \(header.schemaVersion); this app has \(store.schemaVersion)",
                            path: candidate.path.description))
                    continue
                }
                let missing = header.dependencies.filter { client, sequence in
                    client != clientIdentifier && client != candidate.client && (ledger[client] ?? 0) < sequence
                }
                guard missing.isEmpty else { continue }
                if run.unmetConstraints[candidate.path.description] == nil { index += 1 }  // tried again: counted once
                emit(.applyingChangeSet(index: index, count: available.count, changes: header.changeCount))
                guard let found = try await prescan(candidate, &run),
                    try await apply(
                        run.downloaded[candidate.path.description] ?? set, prescan: found, path: candidate.path, &run)
                else { continue }
                try? FileManager.default.removeItem(at: set.url)
                ledger[candidate.client] = max(ledger[candidate.client] ?? 0, candidate.sequence)
                applied[position] = true
                progress = true
            }
            // Removed after the pass: removing each set as it was applied made a catch-up quadratic.
            pending = pending.enumerated().filter { !applied[$0.offset] }.map(\.element)
        }
        return pending.filter { !parkedClients.contains($0.client) }
    }

    /// Before applying anything: when the change sets about to be applied would delete more rows than the
    /// fail-safe allows, asks the app, and stops the sync with the local store untouched unless it agrees.
    func checkMassDeletion(_ available: [Available], _ run: inout Run) async throws {
        guard let failSafe = deletionFailSafe, !available.isEmpty else { return }
        var streams: [ChangeStream] = []
        var paths: [String] = []
        var changes = 0
        // Every set downloaded first, so that their prescans run while the next ones download.
        var sets: [(Available, Downloaded)] = []
        for candidate in available {
            if let set = try await downloadOnce(candidate, &run) { sets.append((candidate, set)) }
        }
        // Sets too small to trip it even if every change were a delete, or a store whose tables are all too small to
        // trip it (at most `minimumTableRows` rows: a new device's, catching up): the prescans are not waited for, and
        // the first set is applied while the others' still run, not after the last of them.
        guard failSafe.couldTrip(changes: sets.reduce(0) { $0 + $1.1.header.changeCount }),
            try store.hasTable(largerThan: failSafe.minimumTableRows)
        else { return }
        for (candidate, set) in sets {
            // Only deletes can trip it: a set without one is not read again, and in one with, the other records
            // are skipped, not decoded.
            // Parked, damaged, or without a delete.
            guard set.header.schemaVersion <= store.schemaVersion, try await prescan(candidate, &run)?.deletes == true
            else { continue }
            changes += set.header.changeCount
            paths.append(candidate.path.description)
            let url = set.url
            streams.append { body in
                try ChangeSetReader.forEachChange(at: url, path: candidate.path.description, selecting: .deletes, body)
            }
        }
        guard failSafe.couldTrip(changes: changes) else { return }
        let deletion = MassDeletion(
            tables: try store.rowsDeleted(by: streams).filter(failSafe.trips), changeSets: paths)
        guard !deletion.tables.isEmpty else { return }
        if let confirm = confirmMassDeletion, await confirm(deletion) {
            environment.logger.notice("Applying a mass deletion the app confirmed: \(deletion)")
            run.report.confirmedMassDeletion = deletion
            return
        }
        throw FolderSyncError(
            .massDeletionDeclined,
            "the sync would delete \(deletion) and the deletion was declined: "
                + "no other device's change was applied",
            path: layout.syncChangesDirectory(documentIdentifier).description)
    }

    /// A declined mass deletion as the sync ends with it: it also says that this device's own changes went out.
    func declined(_ error: FolderSyncError, afterPublishing sent: Int) -> FolderSyncError {
        let published =
            sent == 0
            ? "this device had no change of its own to publish"
            : "this device's own \(sent) change(s) were published"
        return FolderSyncError(error.code, error.message + "; " + published, path: error.path)
    }

    /// Applies one set; returns false, having changed nothing, when a constraint of the store refuses it as it
    /// stands (``ApplyOutcome/unmetConstraint``): it is tried again after the others.
    func apply(_ set: Downloaded, prescan: ChangeSetPrescan, path: RemotePath, _ run: inout Run) async throws -> Bool {
        let header = set.header
        let url = set.url
        try await fetchAttachments(prescan.references, &run)
        let newest = NewestTimestamp()
        let fetched = run.fetchedValues
        let stream: ChangeStream = { body in
            try Self.forEachChangeReadingAhead(at: url, path: path.description) { change in
                newest.take(change)
                try body(try self.restoringLargeValues(of: change, fetched: fetched))
            }
        }
        var resolutions: [ColumnKey: ConflictResolution] = [:]
        if let resolver, try store.hasUnpublishedChanges() {
            for conflict in try store.conflicts(
                author: header.clientIdentifier, localClient: clientIdentifier, changes: stream)
            {
                if let answer = await resolver(conflict) { resolutions[conflict.key] = answer }
            }
        }
        let limit = context.policy.changedRowIDLimit
        let knowledge = run.unsavedKnowledge
        let outcome = try ChangedRowLog.$currentLimit.withValue(limit) {
            if let knowledge {
                return try store.apply(
                    header, localClient: clientIdentifier, changes: stream, resolutions: resolutions,
                    savingRemoteKnowledge: knowledge)
            }
            return try store.apply(header, localClient: clientIdentifier, changes: stream, resolutions: resolutions)
        }
        // Saved with the set, or after it when the set was not applied.
        run.unsavedKnowledge = nil
        if let constraint = outcome.unmetConstraint {
            run.unmetConstraints[path.description] = constraint
            return false
        }
        guard outcome.applied else { return true }
        // A client's sets are applied in sequence order: the last one is the highest.
        if outcome.suppliedUnpublishedInsert {
            run.suppliersOfUnpublishedInserts[header.clientIdentifier] = header.sequence
        }
        let changed = outcome.changedRows.changes(by: header.clientIdentifier)
        if !changed.isEmpty {
            emit(.rowsChanged(changed))
            run.report.rowChanges.merge(changed, limit: limit)
        }
        let now = environment.now()
        if newest.value > HybridLogicalClock.driftLimit(now: now) {
            let hours = Int((Double(newest.value.milliseconds) / 1000 - now.timeIntervalSince1970) / 3600)
            run.report.warnings.append(
                SyncWarning(
                    kind: .clockSkew,
                    message:
                        "client \(header.clientIdentifier) stamped changes \(hours) hours ahead of this device's clock: the clock of one of "
                        + "the two is wrong, and its changes win or lose by the wrong time until it is fixed (they apply as stamped on every device)",
                    path: path.description))
        }
        run.ledger?.insert(header.sequence, of: header.clientIdentifier)
        run.report.changeSetsApplied += 1
        run.report.changesApplied += outcome.changesApplied
        run.report.changesIgnored += outcome.changesIgnored
        run.report.conflicts += outcome.conflicts
        run.report.warnings += outcome.warnings
        return true
    }

    /// The newest timestamp of the changes a stream delivered (read on the stream's thread, then after it).
    final class NewestTimestamp {
        private(set) var value = HybridTimestamp.zero
        func take(_ change: SyncChange) {
            for column in change.columns where column.timestamp > value { value = column.timestamp }
            if let deleted = change.deletionTimestamp, deleted > value { value = deleted }
        }
    }
}
