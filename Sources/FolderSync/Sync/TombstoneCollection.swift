import Foundation

/// How far back deletes can no longer matter to anyone: what tombstone collection compares each tombstone with
/// (see <doc:TombstoneCollection>).
@_spi(ModelAdapter) public struct TombstoneHorizon: Sendable, Hashable, Codable {
    /// Per author, the sequence through which every change set is applied by every live client and covered by every
    /// whole store in the folder. A delete carried by one of those sets can no longer meet a write that did not see it.
    public var stableThrough: [String: Int64]
    /// Per author, the highest sequence the folder showed of its change sets (present, or announced by its marker):
    /// with the ledger, a bound on the set that carried a delete this client holds.
    public var knownThrough: [String: Int64]

    /// A horizon; the empty one collects nothing.
    public init(stableThrough: [String: Int64] = [:], knownThrough: [String: Int64] = [:]) {
        self.stableThrough = stableThrough
        self.knownThrough = knownThrough
    }

    /// Whether a delete carried by a set of `author` numbered at most `sequence` can no longer matter.
    public func isStable(author: String, through sequence: Int64) -> Bool {
        sequence > 0 && sequence <= stableThrough[author] ?? 0
    }
}

/// The tombstone collection rule, as a pure function of what the folder shows and what this client applied: the only
/// place the rule is written.
///
/// A tombstone exists to meet a write to its row that was made without seeing the delete, or the delete again: a
/// change set applied later, or a whole store installed later. It can no longer matter once
/// 1. every live client (registered, not deleted) has applied the change set that carried the delete: a client's
///    own later writes then come after the delete, and under delete wins it has no row left to write to;
/// 2. this client has applied every change set the folder shows or a marker announces: every write a client made
///    before it applied the delete, published when it announced that, is merged here already against the tombstone;
/// 3. every whole store in the folder covers that change set: no install brings back the row without the delete
///    (and vacuum keeps a set until every kept store covers it).
/// 4. no client awaits a client of an earlier epoch (``RecentSync/awaiting``): after the folder or the document was
///    wiped, a client that has not re-joined yet may hold rows this epoch deleted, and it records every row it has as
///    new when it re-joins; only the tombstone makes those writes lose (under either policy).
/// A client that is deleted or expired holds nothing back: it comes back through a reset and a whole store, and its
/// unpublished writes to a row whose delete every other device has forgotten are dropped as writes to a deleted row
/// (``GRDBStore`` re-applies them only to rows the store could still receive).
enum TombstoneCollection {
    /// The horizon `inventory` (a survey of the document's folder) and this client's ledger allow; empty when this
    /// client lags behind the folder or a live client's marker cannot be read.
    static func horizon(
        _ inventory: DocumentInventory, ledger: AppliedChangeSets, localClient: String,
        publishedSequence: Int64
    ) -> TombstoneHorizon {
        var known: [String: Int64] = [:]
        for (client, sets) in inventory.changeSets { known[client] = sets.map(\.sequence).max() ?? 0 }
        for (client, marker) in inventory.recentSyncs {
            known[client] = max(known[client] ?? 0, marker.publishedSequence)
        }
        let live = inventory.registeredClients.subtracting(inventory.deletedClients).subtracting([localClient])
        // Conditions 2 and 4, and every live client's acknowledgement readable: otherwise nothing is stable yet.
        let lagging = known.contains { client, highest in
            client != localClient && ledger.highestContiguousSequence(of: client) < highest
        }
        let awaited = Set(inventory.recentSyncs.values.flatMap { $0.awaiting ?? [] })
            .subtracting(inventory.registeredClients).subtracting(inventory.deletedClients)
        guard !lagging, awaited.isEmpty, live.allSatisfy({ inventory.recentSyncs[$0] != nil }) else {
            return TombstoneHorizon(knownThrough: known)
        }
        var stable: [String: Int64] = [:]
        let authors = Set(known.keys).union(ledger.contiguous.keys).union([localClient])
        for author in authors {
            var through = author == localClient ? publishedSequence : ledger.highestContiguousSequence(of: author)
            for client in live where client != author {
                through = min(through, inventory.recentSyncs[client]?.acknowledgement[author] ?? 0)
            }
            for manifest in inventory.wholeStores.values { through = min(through, manifest.covers[author] ?? 0) }
            if through > 0 { stable[author] = through }
        }
        return TombstoneHorizon(stableThrough: stable, knownThrough: known)
    }
}
