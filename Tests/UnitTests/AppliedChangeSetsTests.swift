import FolderSyncTesting
import Foundation
import GRDB
import Testing

@_spi(Tooling) @_spi(ModelAdapter) @testable import FolderSync
@testable import TestSupport

/// The ledger a sync reads at every step is held as one run per client plus the sets above a gap.
@Suite("Applied change sets")
struct AppliedChangeSetsTests {
    @Test("Recording sets in any order answers exactly as the set of recorded sequences does")
    func matchesASetOfSequences() {
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<200 {
            var ledger = AppliedChangeSets()
            var model: [String: Set<Int64>] = [:]
            for _ in 0..<Int.random(in: 0...40, using: &generator) {
                let client = ["A", "B"].randomElement(using: &generator)!
                let sequence = Int64.random(in: -1...30, using: &generator)
                if Bool.random(using: &generator), sequence > 0 {
                    let upper = sequence + Int64.random(in: 0...5, using: &generator)
                    ledger.insert(sequence...upper, of: client)
                    model[client, default: []].formUnion(sequence...upper)
                } else {
                    ledger.insert(sequence, of: client)
                    if sequence > 0 { model[client, default: []].insert(sequence) }
                }
            }
            for client in ["A", "B", "C"] {
                let recorded = model[client, default: []]
                var run: Int64 = 0
                while recorded.contains(run + 1) { run += 1 }
                #expect(ledger.highestContiguousSequence(of: client) == run)
                #expect(ledger.sequences(of: client) == recorded.sorted())
                #expect((-1...40).allSatisfy { ledger.contains($0, of: client) == recorded.contains($0) })
                // Held compactly: the run as one number, only the sets above its gap one by one.
                #expect(ledger.beyond[client, default: []] == recorded.filter { $0 > run + 1 })
            }
            #expect(
                ledger == AppliedChangeSets(model.flatMap { client, sets in sets.map { (client, $0) } }),
                "equal ledgers compare equal")
        }
    }

    @Test(
        "A store's ledger, recorded in any order, reads back whole, and a ledger from before the runs is read the same")
    func storeKeepsRuns() throws {
        let directory = TemporaryDirectory()
        let url = directory.url.appendingPathComponent("notes.sqlite")
        var store: GRDBStore? = try NotesSchema.open(url)
        var generator = SeededGenerator(seed: 11)
        let entries: [(client: String, sequence: Int64)] =
            ((1...300).map { ("client-A", $0) } + [1, 2, 3, 5, 9, 4].map { ("client-B", $0) }
            + [2, 3].map { ("client-C", $0) }).shuffled(using: &generator)
        try store!.database.write { db in
            for (client, sequence) in entries + entries.prefix(10) {  // recording a set twice changes nothing
                try GRDBStore.recordApplied(db, client: client, sequence: sequence, changeSetIdentifier: "x")
            }
        }
        let expected = AppliedChangeSets(entries)
        #expect(expected.contiguous == ["client-A": 300, "client-B": 5])
        #expect(expected.beyond == ["client-B": [9], "client-C": [2, 3]])
        #expect(try store!.appliedChangeSets() == expected)
        // Each client's run is one row: reading the ledger does not read the sets inside the runs.
        #expect(
            try store!.database.read {
                try Row.fetchAll($0, sql: "SELECT client, through FROM \(StoreSchema.appliedRunsTable) ORDER BY client")
            }
                == [
                    ["client": "client-A", "through": 300], ["client": "client-B", "through": 5],
                    ["client": "client-C", "through": 0],
                ])

        // The layout before the runs (bookkeeping version 4, which recorded no version): only the ledger. Opening
        // the store gives it its runs.
        try store!.database.write { db in
            try db.execute(sql: "DROP TABLE \(StoreSchema.appliedRunsTable)")
            try db.execute(
                sql: "DELETE FROM foldersync_meta WHERE key = ?", arguments: [StoreSchema.bookkeepingVersionKey])
        }
        try store!.close()
        store = nil
        store = try NotesSchema.open(url)
        #expect(try store!.appliedChangeSets() == expected)
        try store!.database.write { db in
            try GRDBStore.recordApplied(db, client: "client-C", sequence: 1, changeSetIdentifier: "x")
        }
        #expect(
            try store!.appliedChangeSets().highestContiguousSequence(of: "client-C") == 3,
            "filling the gap joins the sets above it")
    }
}
