import FolderSyncTesting
import Foundation
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// Seeded multi-client simulations (invariants 1 and 2): 600 seeds on the in-memory adapter and remote,
/// 120 on SQLite with a file-manager remote, and the same schedules on both adapters.
///
/// Replay one seed with `FOLDERSYNC_SEED=<seed> swift test --filter <test>`: every simulation test then runs only it.
/// Explore other seeds with `FOLDERSYNC_SEED_OFFSET=<n>`.
@Suite("Simulator")
struct SimulatorTests {
    static let inMemoryChunks = 4, inMemorySeedsPerChunk: UInt64 = 150
    static let grdbChunks = 2, grdbSeedsPerChunk: UInt64 = 60

    @Test("Simulated clients converge and lose no write (in-memory adapter and remote)", arguments: 0..<inMemoryChunks)
    func inMemory(chunk: Int) async {
        let first = UInt64(chunk) * Self.inMemorySeedsPerChunk + 1
        let summary = await Self.simulate(
            first..<first + Self.inMemorySeedsPerChunk, test: "inMemory",
            remote: .inMemory, makeStore: ConvergenceSimulator.inMemoryStore)
        print(
            Self.describe(
                summary,
                "in-memory seeds \(first + Self.seedOffset)..<\(first + Self.seedOffset + Self.inMemorySeedsPerChunk)"))
    }

    @Test(
        "Simulated clients converge and lose no write (SQLite stores, file-manager remote)", arguments: 0..<grdbChunks)
    func grdbOnFileManagerRemote(chunk: Int) async {
        let first = 100_000 + UInt64(chunk) * Self.grdbSeedsPerChunk + 1
        let summary = await Self.simulate(
            first..<first + Self.grdbSeedsPerChunk, test: "grdbOnFileManagerRemote",
            remote: .fileManager, makeStore: GRDBSimulatorStore.factory)
        print(
            Self.describe(
                summary, "SQLite seeds \(first + Self.seedOffset)..<\(first + Self.seedOffset + Self.grdbSeedsPerChunk)"
            ))
    }

    @Test(
        "The same schedule gives the same result on the in-memory adapter and on GRDBStore, under either delete policy",
        arguments: [DeletePolicy.deleteWins, .lastWriterWins])
    func sameScheduleSameResultOnBothAdapters(deletePolicy: DeletePolicy) async throws {
        var total = ConvergenceSimulator.Summary()
        for seed in Self.seeds(200_001...200_030) {
            // Without cancelled syncs: where one is cancelled can depend on timing
            // (``ConvergenceSimulator/Configuration/interruptions``).
            let memory = try await Self.run(
                seed, remote: .inMemory, makeStore: ConvergenceSimulator.inMemoryStore(deletePolicy: deletePolicy),
                deletePolicy: deletePolicy, interruptions: false)
            let sqlite = try await Self.run(
                seed, remote: .inMemory, makeStore: GRDBSimulatorStore.factory(deletePolicy: deletePolicy),
                deletePolicy: deletePolicy, interruptions: false)
            // The schedule reads the stores to choose its next step, so any difference in merging shows up here.
            #expect(
                memory.rows == sqlite.rows,
                "seed \(seed): final rows differ between the adapters (replay: FOLDERSYNC_SEED=\(seed))")
            #expect(
                memory == sqlite, "seed \(seed): runs differ between the adapters (replay: FOLDERSYNC_SEED=\(seed))")
            total = total + memory
        }
        print(
            Self.describe(total, "\(deletePolicy) on both adapters")
                + ", \(total.deletes) deletes, \(total.reinserts) re-inserts")
        // The schedules went where the policies differ: deletes, and deleted sync IDs inserted again (refused or
        // brought back).
        #expect(total.steps > 0 && total.syncs > 0)
        #expect(deletePolicy == .deleteWins ? total.reinserts == 0 : total.refusedReinserts == 0)
        if Self.checksCoverage {
            #expect(total.deletes > 0)
            #expect((deletePolicy == .deleteWins ? total.refusedReinserts : total.reinserts) > 0)
        }
    }

    @Test("A seed replays exactly")
    func seedReplaysExactly() async throws {
        let seed = Self.replaySeed ?? 4242
        let first = try await Self.run(
            seed, remote: .inMemory, makeStore: ConvergenceSimulator.inMemoryStore, interruptions: false)
        let second = try await Self.run(
            seed, remote: .inMemory, makeStore: ConvergenceSimulator.inMemoryStore, interruptions: false)
        #expect(first == second)
        #expect(first.syncs > 0 && first.writes > 0)
    }

    // MARK: Running seeds

    /// `FOLDERSYNC_SEED=1234` runs only that seed in each simulation test.
    static let replaySeed: UInt64? = ProcessInfo.processInfo.environment["FOLDERSYNC_SEED"].flatMap { UInt64($0) }
    /// `FOLDERSYNC_SEED_OFFSET=1000000` shifts every seed range, to explore new schedules (a nightly job, say).
    static let seedOffset: UInt64 =
        ProcessInfo.processInfo.environment["FOLDERSYNC_SEED_OFFSET"].flatMap { UInt64($0) } ?? 0

    /// Whether a test's whole seed range runs, so that it can check the schedule exercised what it is about (a
    /// replayed seed or `scripts/test --quick` runs too few for that; they still check that the seeds did work).
    static var checksCoverage: Bool { replaySeed == nil && TestTier.scale >= 1 }

    /// The seeds a seeded test runs: `FOLDERSYNC_SEED` alone when set; else the first of `seeds` as many as the test
    /// tier asks (``TestTier/count(_:)``), each moved by `FOLDERSYNC_SEED_OFFSET` (how `scripts/soak` runs new ones).
    static func seeds(_ seeds: some Sequence<UInt64>) -> [UInt64] {
        if let replaySeed { return [replaySeed] }
        let all = Array(seeds)
        return all.prefix(TestTier.count(all.count)).map { $0 + seedOffset }
    }

    /// Plays `seed`; `hazards` switches on the scenario's situations (restores, outages, vacuum or identity hazards).
    static func run(
        _ seed: UInt64, remote: ConvergenceSimulator.Remote, makeStore: @escaping ConvergenceSimulator.StoreFactory,
        deletePolicy: DeletePolicy = .deleteWins, lifecycle: Bool = false, steps: ClosedRange<Int>? = nil,
        clockSkews: [TimeInterval]? = nil, interruptions: Bool = true,
        hazards: (inout ConvergenceSimulator.Configuration) -> Void = { _ in }
    ) async throws -> ConvergenceSimulator.Summary {
        let directory = ScratchDirectory(seed: seed)
        var configuration = ConvergenceSimulator.Configuration(seed: seed, directory: directory.url)
        configuration.remote = remote
        configuration.makeStore = makeStore
        configuration.deletePolicy = deletePolicy
        configuration.lifecycle = lifecycle
        if let steps { configuration.steps = steps }
        if let clockSkews { configuration.clockSkews = clockSkews }
        configuration.interruptions = interruptions
        hazards(&configuration)
        return try await ConvergenceSimulator(configuration).run()
    }

    /// Runs `seeds` (or only the replay seed), recording one issue per failing seed with a replay line.
    static func simulate(
        _ seeds: some Sequence<UInt64>, test: String, remote: ConvergenceSimulator.Remote,
        makeStore: @escaping ConvergenceSimulator.StoreFactory, deletePolicy: DeletePolicy = .deleteWins,
        lifecycle: Bool = false,
        steps: ClosedRange<Int>? = nil, skipping known: Set<UInt64> = [],
        suite: String = "SimulatorTests", clockSkews: [TimeInterval]? = nil,
        hazards: (inout ConvergenceSimulator.Configuration) -> Void = { _ in }
    ) async -> ConvergenceSimulator.Summary {
        var total = ConvergenceSimulator.Summary()
        var failures = 0
        for seed in Self.seeds(seeds.filter { !known.contains($0) }) {
            do {
                total =
                    total
                    + (try await run(
                        seed, remote: remote, makeStore: makeStore, deletePolicy: deletePolicy, lifecycle: lifecycle,
                        steps: steps,
                        clockSkews: clockSkews, hazards: hazards))
            } catch {
                failures += 1
                Issue.record("\(error)\nreplay: FOLDERSYNC_SEED=\(seed) swift test --filter '\(suite)/\(test)'")
                if failures >= 3 { break }
            }
        }
        if failures == 0 {
            #expect(total.steps > 0 && total.writes > 0 && total.syncs > 0, "the seeds of \(test) did nothing")
        }
        return total
    }

    static func describe(_ s: ConvergenceSimulator.Summary, _ what: String) -> String {
        "\(what): \(s.steps) steps, \(s.writes) writes, \(s.syncs) syncs (\(s.duplicatedSyncs) duplicated, "
            + "\(s.interruptedSyncs) cancelled), \(s.restarts) restarts, \(s.conflicts) conflicts, "
            + "\(s.refusedReinserts) refused re-inserts, \(s.finalRows) rows at the end"
    }
}

/// A folder for one simulation, on tmpfs when there is one (the simulator fsyncs a lot and tests nothing about disks).
final class ScratchDirectory {
    let url: URL

    init(seed: UInt64) {
        let shm = URL(fileURLWithPath: "/dev/shm", isDirectory: true)
        let base =
            FileManager.default.isWritableFile(atPath: shm.path) ? shm : URL(fileURLWithPath: NSTemporaryDirectory())
        url = base.appendingPathComponent(
            "FolderSyncSimulator-\(seed)-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}

@Suite("Simulator with attachments")
struct SimulatorAttachmentTests {
    @Test("Simulated clients writing large values and attached files converge, lose no write, and all get every file")
    func attachments() async {
        var total = ConvergenceSimulator.Summary()
        var failures = 0
        let seeds = SimulatorTests.seeds(300_001...300_045)
        for seed in seeds {
            do {
                total = total + (try await Self.run(seed))
            } catch {
                failures += 1
                Issue.record("\(error)\nreplay: FOLDERSYNC_SEED=\(seed) swift test --filter 'SimulatorAttachmentTests'")
                if failures >= 3 { break }
            }
        }
        #expect(
            !SimulatorTests.checksCoverage || total.attachmentWrites > 100,
            "\(total.attachmentWrites) attachment writes")
        print(SimulatorTests.describe(total, "attachment seeds") + ", \(total.attachmentWrites) attachment writes")
    }

    /// Seeds alternate adapters and remotes; every third one has the lifecycle (whole stores, vacuum, wipes, re-joins).
    static func run(_ seed: UInt64) async throws -> ConvergenceSimulator.Summary {
        let directory = ScratchDirectory(seed: seed)
        var configuration = ConvergenceSimulator.Configuration(seed: seed, directory: directory.url)
        configuration.attachments = true
        switch seed % 3 {
        case 0: configuration.remote = .inMemory
        case 1:
            configuration.remote = .fileManager
            configuration.makeStore = GRDBSimulatorStore.factory
        default:
            configuration.remote = .fileManager
            configuration.makeStore = GRDBSimulatorStore.factory
            configuration.lifecycle = true
        }
        return try await ConvergenceSimulator(configuration).run()
    }
}
