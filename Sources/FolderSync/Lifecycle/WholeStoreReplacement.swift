/// When a whole store may go because another one stays: the one rule vacuum (for dominated stores) and client
/// deletion (for the deleted client's store) both apply.
///
/// A store may go when a single store that stays, read whole and matching its manifest, holds everything it holds
/// that the folder no longer has as change sets: a new device installs one store and applies the sets after it, so
/// one store must cover every set that is gone. Vacuum counts on no change set (it may remove them in the same run):
/// for it this is dominance (``WholeStoreManifest/dominates(_:)``).
enum WholeStoreReplacement {
    /// Whether a store covering `kept` (per author, the highest sequence it contains; empty for no store at all)
    /// holds every change set `store` holds that `present` (per author, the sequences still in the folder) lacks.
    static func replaces(_ kept: [String: Int64], _ store: WholeStoreManifest, present: [String: Set<Int64>] = [:])
        -> Bool
    {
        store.covers.allSatisfy { author, highest in
            (kept[author] ?? 0) >= highestGone(of: author, through: highest, present: present[author] ?? [])
        }
    }

    /// The highest sequence of `author` at or below `highest` that `present` lacks; 0 when every one is present.
    private static func highestGone(of author: String, through highest: Int64, present: Set<Int64>) -> Int64 {
        var sequence = highest
        while sequence > 0, present.contains(sequence) { sequence -= 1 }
        return sequence
    }
}
