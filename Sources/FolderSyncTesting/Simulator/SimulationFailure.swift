/// A simulation that broke an invariant: names the seed (replayable), what broke, and the end of the schedule.
public struct SimulationFailure: Error, CustomStringConvertible, Sendable {
    /// The seed of the failing run: set `FOLDERSYNC_SEED` to it to replay the run.
    public var seed: UInt64
    /// Which invariant broke and how, or the unexpected error.
    public var message: String
    /// The last steps of the schedule, oldest first.
    public var trace: [String]

    public var description: String {
        "seed \(seed): \(message)\n(replay with FOLDERSYNC_SEED=\(seed))\nlast steps:\n  "
            + trace.joined(separator: "\n  ")
    }

    /// A failure without the seed yet; the simulator adds it.
    struct Detail: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
