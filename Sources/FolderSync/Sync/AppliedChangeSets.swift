/// Per client, the change sets recorded in a ledger, held in a size that does not grow with history.
///
/// Sets are applied in sequence, so a client's ledger is almost always the run 1…n: it is kept as that one
/// number, and only the few sets recorded above a gap are kept one by one. A sync reads the ledger at every
/// step; holding 10,000 applied sets as 10,000 entries made a sync cost what exists rather than what is new.
@_spi(ModelAdapter) public struct AppliedChangeSets: Hashable, Sendable {
    /// Per client, the highest `n` such that sets 1…n are all recorded (clients with no such run are absent).
    public private(set) var contiguous: [String: Int64] = [:]
    /// Per client, the sets recorded above a gap after its contiguous run (clients with none are absent).
    public private(set) var beyond: [String: Set<Int64>] = [:]

    /// An empty ledger.
    public init() {}

    /// The ledger recording each `(client, sequence)` pair.
    public init(_ pairs: some Sequence<(client: String, sequence: Int64)>) {
        for pair in pairs { insert(pair.sequence, of: pair.client) }
    }

    /// Whether set `sequence` of `client` is recorded.
    public func contains(_ sequence: Int64, of client: String) -> Bool {
        (sequence >= 1 && sequence <= highestContiguousSequence(of: client))
            || beyond[client]?.contains(sequence) == true
    }

    /// The highest `n` such that sets 1…n of `client` are all recorded; 0 when set 1 is missing.
    public func highestContiguousSequence(of client: String) -> Int64 {
        contiguous[client] ?? 0
    }

    /// The recorded sets of `client`, in order.
    public func sequences(of client: String) -> [Int64] {
        Array(1..<highestContiguousSequence(of: client) + 1) + (beyond[client] ?? []).sorted()
    }

    /// Records set `sequence` of `client`; recording it again changes nothing. Sequences start at 1: others are
    /// ignored.
    public mutating func insert(_ sequence: Int64, of client: String) {
        insert(sequence...sequence, of: client)
    }

    /// Records the sets `sequences` of `client`; a run that extends the contiguous one costs the same at any length.
    public mutating func insert(_ sequences: ClosedRange<Int64>, of client: String) {
        var highest = highestContiguousSequence(of: client)
        guard sequences.upperBound > highest, sequences.upperBound >= 1 else { return }
        guard sequences.lowerBound <= highest + 1 else {
            beyond[client, default: []].formUnion(sequences)
            return
        }
        highest = sequences.upperBound
        if var above = beyond[client] {
            above = above.filter { $0 > highest }
            while above.remove(highest + 1) != nil { highest += 1 }
            beyond[client] = above.isEmpty ? nil : above
        }
        contiguous[client] = highest
    }
}
