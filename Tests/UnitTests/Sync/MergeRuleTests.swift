import FolderSync
import FolderSyncTesting
import Testing

@testable import TestSupport

/// The merge rule alone, on random registers: the state it keeps per row is the newest write of each column and the
/// newest delete, whatever the order, the repetition or the grouping of the changes (invariant 1), under both
/// delete policies; and every answer to a conflict leaves both replicas with the answer.
@Suite("Merge rule")
struct MergeRuleTests {
    /// A remote change to one row: a column write or a delete. Stamps are unique, as a hybrid clock makes them.
    enum Change: Hashable {
        case write(String, ChangeStamp, SyncValue)
        case delete(ChangeStamp)
    }

    struct Register: Equatable {
        var stamp: ChangeStamp
        var value: SyncValue
    }

    /// One row of a replica, kept as the adapters keep it, every decision the rule's.
    struct Row: Equatable {
        var registers: [String: Register] = [:]
        var tombstone: ChangeStamp?
        var exists = false

        var newestWrite: ChangeStamp? { registers.values.map(\.stamp).max() }

        mutating func apply(_ change: Change, policy: DeletePolicy) {
            switch change {
            case .write(let column, let stamp, let value):
                if tombstone != nil, MergeRule.writeAfterDelete(policy: policy) == .ignore { return }
                let decision = MergeRule.write(
                    stamp, value: value, over: registers[column]?.stamp, unpublished: false,
                    localValue: exists ? registers[column]?.value : nil, localClient: "L")
                if decision == .apply { registers[column] = Register(stamp: stamp, value: value) }
                if let tombstone, !exists {
                    exists = MergeRule.isAlive(newestWrite: newestWrite, deletedAt: tombstone)
                } else {
                    exists = true
                }
            case .delete(let stamp):
                let decision = MergeRule.delete(
                    stamp, policy: policy, tombstone: tombstone, rowExists: exists, newestWrite: newestWrite)
                if MergeRule.isNewer(stamp, than: tombstone) { tombstone = stamp }
                guard decision == .apply else { return }
                exists = false
                if policy == .deleteWins { registers = [:] }
            }
        }

        mutating func apply(_ changes: [Change], policy: DeletePolicy) {
            for change in changes { apply(change, policy: policy) }
        }

        /// What this replica would send another so that it holds the same: its registers as writes, its delete.
        var changes: [Change] {
            registers.sorted { $0.key < $1.key }.map { Change.write($0.key, $0.value.stamp, $0.value.value) }
                + (tombstone.map { [.delete($0)] } ?? [])
        }

        /// What the rule must come to, by its specification: each column's newest write and the newest delete;
        /// delete wins keeps a deleted row deleted, last writer wins keeps it when a write is newer than every delete.
        static func expected(_ changes: [Change], policy: DeletePolicy) -> Row {
            var row = Row()
            for case .write(let column, let stamp, let value) in changes
            where row.registers[column].map({ stamp > $0.stamp }) ?? true {
                row.registers[column] = Register(stamp: stamp, value: value)
            }
            row.tombstone = changes.compactMap { if case .delete(let stamp) = $0 { stamp } else { nil } }.max()
            switch (policy, row.tombstone) {
            case (_, nil): row.exists = !row.registers.isEmpty
            case (.deleteWins, _?): row.registers = [:]
            case (.lastWriterWins, let deleted?): row.exists = row.newestWrite.map { $0 > deleted } ?? false
            }
            return row
        }
    }

    static let policies: [DeletePolicy] = [.deleteWins, .lastWriterWins]

    /// A stamp of `client` at a timestamp in `1...latest`.
    static func stamp(_ random: inout FolderSyncTesting.SeededGenerator, by client: String, latest: Int = 4)
        -> ChangeStamp
    {
        ChangeStamp(timestamp: HybridTimestamp(rawValue: UInt64(random.int(1...latest))), clientIdentifier: client)
    }

    /// 1–10 changes to columns a, b, c by clients A, B, C at timestamps 1–12, none sharing a stamp with `taken`.
    static func changes(_ random: inout FolderSyncTesting.SeededGenerator, taken: inout Set<ChangeStamp>) -> [Change] {
        var changes: [Change] = []
        let count = random.int(1...10)
        while changes.count < count {
            let stamp = Self.stamp(&random, by: random.pick(["A", "B", "C"])!, latest: 12)
            guard taken.insert(stamp).inserted else { continue }
            changes.append(
                random.chance(25)
                    ? .delete(stamp) : .write(random.pick(["a", "b", "c"])!, stamp, .text("v\(random.int(0...3))")))
        }
        return changes
    }

    static func shuffled(_ changes: [Change], _ random: inout FolderSyncTesting.SeededGenerator) -> [Change] {
        var changes = changes
        for index in changes.indices.dropLast().reversed() {
            changes.swapAt(index, random.int(index...changes.count - 1))
        }
        return changes
    }

    static let seeds: ClosedRange<UInt64> = 1...500

    /// Calls `body` for each seed and delete policy, with `count` random histories (no two changes share a stamp)
    /// and the seed's generator; returns how many cases ran.
    static func cases(
        histories count: Int,
        _ body: (
            _ seed: UInt64, _ policy: DeletePolicy, _ histories: [[Change]],
            _ random: inout FolderSyncTesting.SeededGenerator
        ) -> Void
    ) -> Int {
        var ran = 0
        for seed in seeds {
            var random = FolderSyncTesting.SeededGenerator(seed: seed)
            var taken = Set<ChangeStamp>()
            let histories = (0..<count).map { _ in changes(&random, taken: &taken) }
            for policy in policies {
                body(seed, policy, histories, &random)
                ran += 1
            }
        }
        return ran
    }

    /// Expects `row`, merged from `changes`, to equal `other` (the same changes merged another way) and what the
    /// specification says `changes` give.
    static func expectSame(
        _ row: Row, _ other: Row, from changes: [Change], _ policy: DeletePolicy, seed: UInt64,
        _ how: @autoclosure () -> String
    ) {
        #expect(row == other, "seed \(seed), \(policy): \(changes) merged \(how()) gives \(other), not \(row)")
        #expect(row == Row.expected(changes, policy: policy), "seed \(seed), \(policy): \(changes) merge to \(row)")
    }

    static func replica(_ changes: [Change], _ policy: DeletePolicy) -> Row {
        var row = Row()
        row.apply(changes, policy: policy)
        return row
    }

    /// `into` after applying what `other` holds, as a sync between the two replicas does.
    static func merge(_ into: Row, _ other: Row, _ policy: DeletePolicy) -> Row {
        var row = into
        row.apply(other.changes, policy: policy)
        return row
    }

    @Test("Changes applied in any order give the newest write of each column and the newest delete (commutative)")
    func commutative() {
        let ran = Self.cases(histories: 1) { seed, policy, histories, random in
            let reordered = Self.shuffled(histories[0], &random)
            Self.expectSame(
                Self.replica(histories[0], policy), Self.replica(reordered, policy), from: histories[0], policy,
                seed: seed,
                "in the order \(reordered)")
        }
        #expect(ran == 2 * Self.seeds.count)
    }

    @Test("A change applied again changes nothing (idempotent)")
    func idempotent() {
        var repeated = 0
        let ran = Self.cases(histories: 1) { seed, policy, histories, random in
            let changes = histories[0]
            let once = Self.replica(changes, policy)
            // Each change also once more, at a random later place: a change set applied twice, or seen again.
            var withRepeats = changes
            for change in changes {
                withRepeats.insert(change, at: random.int(withRepeats.firstIndex(of: change)! + 1...withRepeats.count))
            }
            Self.expectSame(
                once, Self.replica(withRepeats, policy), from: changes, policy, seed: seed, "as \(withRepeats)")
            for change in changes {
                var again = once
                again.apply(change, policy: policy)
                #expect(again == once, "seed \(seed), \(policy): \(change) applied again changed the row")
                repeated += 1
            }
        }
        #expect(ran == 2 * Self.seeds.count && repeated >= ran)
    }

    @Test("Replicas merged in any grouping hold the same (associative)")
    func associative() {
        let ran = Self.cases(histories: 3) { seed, policy, histories, _ in
            let (a, b, c) = (
                Self.replica(histories[0], policy), Self.replica(histories[1], policy),
                Self.replica(histories[2], policy)
            )
            Self.expectSame(
                Self.merge(Self.merge(a, b, policy), c, policy), Self.merge(a, Self.merge(b, c, policy), policy),
                from: histories.flatMap { $0 }, policy, seed: seed, "as a ∪ (b ∪ c) of \(histories)")
        }
        #expect(ran == 2 * Self.seeds.count)
    }

    @Test("A conflict is a column changed here, not published, to another value; otherwise the newer write wins")
    func conflicts() {
        var found = 0
        for seed in Self.seeds {
            var random = FolderSyncTesting.SeededGenerator(seed: seed)
            let remote = Self.stamp(&random, by: "R")
            let local = random.chance(80) ? Self.stamp(&random, by: random.pick(["L", "Q"])!) : nil
            let unpublished = random.chance(70)
            let localValue: SyncValue? = random.chance(80) ? .text("v\(random.int(0...1))") : nil
            let remoteValue = SyncValue.text("v\(random.int(0...1))")
            let decision = MergeRule.write(
                remote, value: remoteValue, over: local, unpublished: unpublished, localValue: localValue,
                localClient: "L")
            let conflict =
                unpublished && local?.clientIdentifier == "L" && localValue != nil && localValue != remoteValue
            let newer = local.map { remote > $0 } ?? true
            #expect(
                decision == (conflict ? .conflict : newer ? .apply : .ignore),
                "seed \(seed): \(remote) \(remoteValue) over \(String(describing: local)) \(String(describing: localValue)), unpublished \(unpublished)"
            )
            if decision == .conflict { found += 1 }
        }
        #expect(found > 0)
    }

    @Test(
        "Every answer to a conflict leaves both replicas with it, and only an answer last writer wins would not give is recorded"
    )
    func settledConflictsConverge() {
        var recorded = 0
        for seed in Self.seeds {
            var random = FolderSyncTesting.SeededGenerator(seed: seed)
            // This client wrote x at `mine`, not published; R wrote y at `theirs`. No answer: last writer wins.
            let mine = Self.stamp(&random, by: "L")
            let theirs = Self.stamp(&random, by: "R")
            let x = SyncValue.text("x")
            let y = SyncValue.text("y")
            let key = ColumnKey(table: "t", syncID: "r", column: "c")
            let answer = random.pick([ConflictResolution?.none, .localWins, .remoteWins, .merged(.text("m"))])!
            var reported: [ResolvedConflict] = []
            let merged = MergeRule.merge(
                key, remote: theirs, value: y, over: mine, unpublished: true, localValue: x, localClient: "L",
                resolutions: answer.map { [key: $0] } ?? [:], conflicts: &reported)
            guard let report = reported.first, reported.count == 1 else {
                Issue.record("seed \(seed): \(reported.count) conflicts reported, not 1")
                continue
            }
            #expect(
                report.conflict
                    == SyncConflict(key: key, localValue: x, remoteValue: y, localStamp: mine, remoteStamp: theirs))
            #expect(
                report.decidedByResolver == (answer != nil)
                    && report.resolution == answer ?? report.conflict.lastWriterWins)
            // Here: a recorded answer is a new write, newer than both, and published; else the local write stays
            // published, or loses and is not.
            var here = Register(stamp: mine, value: x)
            var published: Register? = here
            switch merged {
            case .record(let value):
                here = Register(
                    stamp: ChangeStamp(
                        timestamp: HybridTimestamp(rawValue: max(mine.timestamp, theirs.timestamp).rawValue + 1),
                        clientIdentifier: "L"), value: value)
                published = here
                recorded += 1
                #expect(
                    report.resolution != report.conflict.lastWriterWins,
                    "seed \(seed): \(report.resolution) recorded although last writer wins gives it")
            case .apply:
                here = Register(stamp: theirs, value: y)
                published = nil
            case .ignore:
                break
            }
            // There: what this client publishes merges like any remote write.
            var there = Register(stamp: theirs, value: y)
            if let published,
                MergeRule.write(
                    published.stamp, value: published.value, over: there.stamp, unpublished: false,
                    localValue: there.value, localClient: "R") == .apply
            {
                there = published
            }
            let value: SyncValue =
                switch report.resolution {
                case .localWins: x
                case .remoteWins: y
                case .merged(let value): value
                }
            #expect(
                here.value == value && there.value == value,
                "seed \(seed): \(report.resolution) left \(here.value) here and \(there.value) there")
        }
        #expect(recorded > 0)
    }
}
