/// What the merge rule makes of one remote write or delete.
package enum MergeDecision: Sendable, Hashable {
    /// The remote write or delete is the newer: take it.
    case apply
    /// What this replica holds is the newer, or the row's delete stands: keep it.
    case ignore
    /// This client changed the column to another value and has not published it: the resolver decides.
    case conflict
}

/// What a remote column write does to a replica once its conflict, if it is one, is settled.
package enum ColumnMerge: Sendable, Hashable {
    /// Store the remote value and its register.
    case apply
    /// Keep the local value.
    case ignore
    /// Store this value as a new local write, newer than both, to be published: the answer to a conflict that last
    /// writer wins would not give.
    case record(SyncValue)
}

/// The merge rule, written once: what counts as a conflict and who wins (see <doc:ConflictsAndMergeRules>).
///
/// Every ``ModelAdapter`` asks it and keeps only the storage to itself, so that `GRDBStore` and the in-memory
/// adapter the simulator runs cannot drift apart. It decides from plain values (stamps, a policy, whether a mark
/// or a row exists) and reads nothing: the apply path calls it once per column without allocating.
///
/// The state it maintains per row is a join: each column's register keeps its newest write (``ChangeStamp``
/// order) and the row's tombstone its newest delete; whether the row is there follows from the two and the
/// table's ``DeletePolicy``. So applying changes in any order, any grouping, any number of times gives the same
/// replica. Conflicts do not break that: a resolution that differs from what last writer wins gives is recorded
/// as a new write, newer than both.
package enum MergeRule {
    /// Last writer wins: whether a write or delete stamped `remote` replaces one stamped `local` (anything replaces
    /// nothing).
    package static func isNewer(_ remote: ChangeStamp, than local: ChangeStamp?) -> Bool {
        local.map { remote > $0 } ?? true
    }

    /// A remote write of one column against the column's register here.
    ///
    /// A conflict is a column this client wrote last, has not published, and holds a different value in:
    /// whichever stamp is newer, the user saw a value the other client never did. Otherwise the newer write wins.
    /// - Parameters:
    ///   - remote: The write's stamp (its timestamp, its author).
    ///   - remoteValue: The value written.
    ///   - local: The column's register here (a register with no client is `localClient`'s); `nil` when it has none.
    ///   - unpublished: Whether the column holds a local change not yet published (pending or staged).
    ///   - localValue: The column's value here, `nil` when the row is not here. Read only for a conflict: a caller
    ///     may pass `nil` when `unpublished` is false.
    ///   - localClient: This client's identifier.
    package static func write(
        _ remote: ChangeStamp, value remoteValue: SyncValue, over local: ChangeStamp?,
        unpublished: Bool, localValue: SyncValue?, localClient: String
    ) -> MergeDecision {
        if unpublished, let local, local.clientIdentifier == localClient, let localValue, localValue != remoteValue {
            return .conflict
        }
        return isNewer(remote, than: local) ? .apply : .ignore
    }

    /// The conflict a remote write of `key` by `author` makes with this replica's unpublished `localValue`, when
    /// ``write(_:value:over:unpublished:localValue:localClient:)`` finds one: what an adapter's `conflicts` reports
    /// for each column it holds a local change of.
    package static func conflict(
        _ key: ColumnKey, remote column: ColumnChange, author: String, over local: ChangeStamp?,
        localValue: SyncValue, localClient: String
    ) -> SyncConflict? {
        let remote = ChangeStamp(timestamp: column.timestamp, clientIdentifier: author)
        guard
            write(
                remote, value: column.value, over: local, unpublished: true, localValue: localValue,
                localClient: localClient) == .conflict, let local
        else { return nil }
        return SyncConflict(
            key: key, localValue: localValue, remoteValue: column.value, localStamp: local, remoteStamp: remote)
    }

    /// A remote write of one column as an adapter applies it:
    /// ``write(_:value:over:unpublished:localValue:localClient:)``, a conflict settled by the resolver's answer for
    /// `key` in `resolutions`, or else by last writer wins, and reported in `conflicts`.
    /// - Returns: ``ColumnMerge/record(_:)`` when the answer differs from what last writer wins gives
    ///   (``recordedValue(settling:by:)``); else whether the remote write wins.
    package static func merge(
        _ key: ColumnKey, remote: ChangeStamp, value remoteValue: SyncValue, over local: ChangeStamp?,
        unpublished: Bool, localValue: SyncValue?, localClient: String,
        resolutions: [ColumnKey: ConflictResolution], conflicts: inout [ResolvedConflict]
    ) -> ColumnMerge {
        let decision = write(
            remote, value: remoteValue, over: local, unpublished: unpublished, localValue: localValue,
            localClient: localClient)
        guard decision == .conflict, let local, let localValue else { return decision == .apply ? .apply : .ignore }
        let conflict = SyncConflict(
            key: key, localValue: localValue, remoteValue: remoteValue, localStamp: local, remoteStamp: remote)
        let resolution = resolutions[key] ?? conflict.lastWriterWins
        conflicts.append(
            ResolvedConflict(conflict: conflict, resolution: resolution, decidedByResolver: resolutions[key] != nil))
        if let recorded = recordedValue(settling: conflict, by: resolution) { return .record(recorded) }
        return isNewer(remote, than: local) ? .apply : .ignore
    }

    /// A remote write to a row this replica holds a delete of (a tombstone), before its columns are merged.
    ///
    /// Delete wins: the row stays deleted and the write is dropped. Last writer wins: the columns merge by
    /// ``write(_:value:over:unpublished:localValue:localClient:)`` into the row, or into the registers a deleted row
    /// keeps, and the row comes back when ``isAlive(newestWrite:deletedAt:)`` says so.
    package static func writeAfterDelete(policy: DeletePolicy) -> MergeDecision {
        switch policy {
        case .deleteWins: .ignore
        case .lastWriterWins: .apply
        }
    }

    /// A remote delete of a row, by its table's policy. Never a conflict: the policy settles a delete against
    /// concurrent writes. Whatever the decision, the replica keeps the newer of `remote` and `tombstone`
    /// (``isNewer(_:than:)``), so that every replica stores the same delete.
    /// - Parameters:
    ///   - remote: The delete's stamp.
    ///   - policy: The table's delete policy.
    ///   - tombstone: The row's delete here, `nil` when it has none.
    /// - rowExists: Whether the row is here. - newestWrite: The newest register of the row here (kept after a delete
    ///     under last writer wins), `nil` when none.
    /// - Returns: Delete wins: `apply` unless the row is already deleted. Last writer wins: `apply` when the row is
    ///   here and the delete is newer than every write to it.
    package static func delete(
        _ remote: ChangeStamp, policy: DeletePolicy, tombstone: ChangeStamp?,
        rowExists: Bool, newestWrite: ChangeStamp?
    ) -> MergeDecision {
        switch policy {
        case .deleteWins: tombstone == nil ? .apply : .ignore
        case .lastWriterWins: rowExists && isNewer(remote, than: newestWrite) ? .apply : .ignore
        }
    }

    /// Last writer wins: whether a deleted row is alive again, its newest write being newer than its newest delete.
    package static func isAlive(newestWrite: ChangeStamp?, deletedAt delete: ChangeStamp) -> Bool {
        newestWrite.map { isNewer($0, than: delete) } ?? false
    }

    /// The value a conflict's resolution records as a new local write, newer than both, so that every replica
    /// converges on it; `nil` when the resolution keeps what last writer wins gives (nothing new to publish).
    package static func recordedValue(settling conflict: SyncConflict, by resolution: ConflictResolution) -> SyncValue?
    {
        let decided: SyncValue =
            switch resolution {
            case .localWins: conflict.localValue
            case .remoteWins: conflict.remoteValue
            case .merged(let value): value
            }
        let natural =
            isNewer(conflict.remoteStamp, than: conflict.localStamp) ? conflict.remoteValue : conflict.localValue
        return decided == natural ? nil : decided
    }
}
