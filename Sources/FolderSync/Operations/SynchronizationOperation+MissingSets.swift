import Foundation

/// This client's own change sets gone from the folder (its folder put back from an older copy, a file removed by
/// hand): found within a bounded time, and covered by a whole store.
///
/// The author is the only client that can bring back what its sets held (its own writes are in its data), so it
/// looks at its own folder whenever it lists it anyway (a sync of a launch with something to publish), and whenever
/// another client says in its marker that it waits for one of this client's sets (``RecentSync/waitingFor``): a
/// reader stuck on a gap says so at its next sync, and the author answers at its own next sync. A set that is gone
/// but covered by a whole store was vacuumed: the reader downloads that store, and nothing is owed. Otherwise this
/// client owes a whole store that covers its sets (``LocalSyncState/RemoteKnowledge/owesWholeStore``), uploaded by
/// the manager after the sync; readers waiting on the gap install it and go on.
extension SynchronizationOperation {
    /// Looks at this client's sets in `listing` (its own folder): a number missing between the lowest present and the
    /// published sequence, or `asked` (a set another client waits for) missing, is owed a whole store unless one
    /// covers it. Counted from the sets present, not by walking the range.
    func checkOwnSetsPresent(
        in listing: [RemoteItem], askedFor asked: Int64?, _ state: inout LocalSyncState, _ run: inout Run
    ) async throws {
        let published = state.progress.publishedSequence
        guard !isReadOnly, !state.remote.owesWholeStore, published > 0 else { return }
        let present = Set(
            listing.compactMap { RemoteLayout.parseChangeSetFileName($0.name)?.sequence }.filter { $0 <= published })
        // The highest gap above the lowest set present (vacuum removes from the bottom, never leaves such a gap), and
        // the set another client waits for.
        var lost: ClosedRange<Int64>?
        if let lowest = present.min() {
            var expected = published
            for sequence in present.sorted(by: >) where sequence == expected { expected -= 1 }
            if expected > lowest { lost = ((present.filter { $0 < expected }.max() ?? lowest) + 1)...expected }
        }
        if let asked, asked <= published, !present.contains(asked), (lost?.upperBound ?? 0) < asked {
            lost = asked...asked
        }
        guard let lost, try await wholeStoreCoverage(&run) < lost.upperBound else { return }
        // Saved now: the debt must outlive a sync that fails after this.
        state.remote.owesWholeStore = true
        try store.updateRemoteKnowledge { $0.owesWholeStore = true }
        run.report.warnings.append(
            SyncWarning(
                kind: .changeSetMissing,
                message: "this client's change "
                    + (lost.count == 1 ? "set \(lost.lowerBound) is" : "sets \(lost.lowerBound)–\(lost.upperBound) are")
                    + " gone from the folder (put back from an older copy?) and no whole store covers them: "
                    + "a whole store that covers them is uploaded, so that devices waiting on them go on",
                path: layout.syncChangesDirectory(documentIdentifier, client: clientIdentifier).description))
    }

    /// The highest of this client's sequences a whole store's manifest says it covers (0 when none does).
    func wholeStoreCoverage(_ run: inout Run) async throws -> Int64 {
        run.report.remoteRequests += 1
        var highest: Int64 = 0
        let clients = try await fetchWholeStoreClients()
        for item in clients where item.kind == .directory && DocumentInventory.isIdentifierName(item.name) {
            run.report.remoteRequests += 1
            let path = layout.appliedSyncChangeSetsFile(documentIdentifier, client: item.name).description
            // A manifest that does not read covers nothing.
            guard let data = try await fetchWholeStoreManifest(client: item.name),
                let manifest = try? PropertyListFile.decode(WholeStoreManifest.self, from: data, path: path)
            else { continue }
            highest = max(highest, manifest.covers[clientIdentifier] ?? 0)
        }
        return highest
    }
}
