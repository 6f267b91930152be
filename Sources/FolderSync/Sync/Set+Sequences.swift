extension Set<Int64> {
    /// The highest `n` such that 1…n are all present (0 when 1 is missing): how far a client's change sets,
    /// applied strictly in sequence, are covered without a gap.
    var highestContiguousSequence: Int64 {
        var highest: Int64 = 0
        while contains(highest + 1) { highest += 1 }
        return highest
    }
}
