import FolderSyncTesting
import Foundation
import Testing

@_spi(Tooling) @_spi(ModelAdapter) @testable import FolderSync
@testable import TestSupport

/// The in-memory adapter and GRDBStore, fed the same app writes and the same change sets, end in the same state.
@Suite("Simulator seam")
struct SimulatorSeamTests {
    @Test(
        "Same operations and change sets, same rows, stamps, conflicts and pending changes (Simulator)",
        arguments: [DeletePolicy.deleteWins, .lastWriterWins])
    func sameOperationsSameState(deletePolicy: DeletePolicy) throws {
        let directory = TemporaryDirectory()
        let time = SimulatedTime()
        let tables = SimulatedNotes.tables(deletePolicy: deletePolicy)
        let memory = InMemoryModelAdapter(tables: tables, now: time.clock(skew: 0))
        let sqlite = try GRDBSimulatorStore(
            url: directory.url.appendingPathComponent("notes.sqlite"), deletePolicy: deletePolicy,
            now: time.clock(skew: 0))
        let stores: [any SimulatorStore] = [memory, sqlite]
        let remoteA = InMemoryModelAdapter(tables: tables, now: time.clock(skew: 86_400))
        let remoteB = InMemoryModelAdapter(tables: tables, now: time.clock(skew: -86_400))

        // Local writes, and a shared history the remote authors start from.
        for store in stores {
            try store.insert(table: "folders", syncID: "f1", values: ["name": .text("Work")])
            try store.insert(
                table: "notes", syncID: "n1",
                values: ["title": .text("one"), "body": .text("b"), "folder_id": .text("f1")])
            try store.insert(table: "notes", syncID: "n2", values: ["title": .text("two")])
            try store.insert(table: "tags", syncID: "t1", values: ["name": .text("todo")])
        }
        for remote in [remoteA, remoteB] {
            try remote.insert(table: "notes", syncID: "n1", values: ["title": .text("remote"), "body": .text("rb")])
            try remote.insert(table: "notes", syncID: "n3", values: ["title": .text("three")])
        }
        time.advance(byMilliseconds: 5)
        var sets: [(ChangeSetHeader, [SyncChange])] = []
        try remoteA.update(table: "notes", syncID: "n1", values: ["title": .text("from A")])
        try remoteA.delete(table: "notes", syncID: "n2")
        sets.append(try RowRegistersTests.changeSet(from: remoteA, client: "A", sequence: 1))
        try remoteB.update(table: "notes", syncID: "n1", values: ["body": .text("from B"), "folder_id": .text("f9")])
        try remoteB.insert(table: "note_tags", syncID: "nt1", values: ["note_id": .text("n3"), "tag_id": .text("t1")])
        sets.append(try RowRegistersTests.changeSet(from: remoteB, client: "B", sequence: 1))
        try remoteA.delete(table: "folders", syncID: "f1")
        sets.append(try RowRegistersTests.changeSet(from: remoteA, client: "A", sequence: 2))

        for store in stores {
            try store.update(
                table: "notes", syncID: "n1", values: ["title": .text("local"), "body": .text("local body")])
            try store.update(table: "notes", syncID: "n2", values: ["body": .text("edited")])
            try store.delete(table: "tags", syncID: "t1")
        }
        switch deletePolicy {
        case .deleteWins:
            #expect(throws: FolderSyncError.self) {
                try memory.insert(table: "tags", syncID: "t1", values: ["name": .text("again")])
            }
            #expect(throws: FolderSyncError.self) {
                try sqlite.insert(table: "tags", syncID: "t1", values: ["name": .text("again")])
            }
        case .lastWriterWins:
            // A deleted sync ID comes back, newer than its delete.
            for store in stores { try store.insert(table: "tags", syncID: "t1", values: ["name": .text("again")]) }
        }

        let resolutions: [ColumnKey: ConflictResolution] = [
            ColumnKey(table: "notes", syncID: "n1", column: "body"): .merged(.text("merged"))
        ]
        var outcomes: [[ApplyOutcome]] = [[], []]
        var conflicts: [[SyncConflict]] = [[], []]
        func apply(_ sets: [(ChangeSetHeader, [SyncChange])]) throws {
            for (index, store) in stores.enumerated() {
                for (header, changes) in sets {
                    let stream: ChangeStream = { body in for change in changes { try body(change) } }
                    conflicts[index] += try store.adapter.conflicts(
                        author: header.clientIdentifier, localClient: "L", changes: stream)
                    outcomes[index].append(
                        try store.adapter.apply(header, localClient: "L", changes: stream, resolutions: resolutions))
                }
            }
        }
        try apply(sets + [sets[0]])  // the last one again: applying twice changes nothing

        // Deletes against writes each way: a local delete that a newer remote write meets (it brings the row back
        // under last writer wins), a remote delete older than local writes not yet published, and a newer one.
        for store in stores {
            try store.delete(table: "note_tags", syncID: "nt1")  // the app's foreign keys hold
            try store.delete(table: "notes", syncID: "n3")
        }
        time.advance(byMilliseconds: 5)  // past what the local clocks saw of A's (a day ahead)
        try remoteA.update(table: "notes", syncID: "n3", values: ["body": .text("A, after the delete")])
        try remoteA.delete(table: "notes", syncID: "n1")
        try remoteB.delete(table: "notes", syncID: "n1")
        try apply([
            try RowRegistersTests.changeSet(from: remoteA, client: "A", sequence: 3),
            try RowRegistersTests.changeSet(from: remoteB, client: "B", sequence: 2),
        ])

        #expect(outcomes[0].map(\.changesApplied) == outcomes[1].map(\.changesApplied))
        #expect(outcomes[0].map(\.applied) == [true, true, true, false, true, true])
        #expect(outcomes[0].map(\.conflicts) == outcomes[1].map(\.conflicts))
        #expect(Set(outcomes[0].flatMap(\.warnings)) == Set(outcomes[1].flatMap(\.warnings)))
        #expect(conflicts[0] == conflicts[1] && !conflicts[0].isEmpty)
        #expect(outcomes[0].map(\.changesIgnored) == outcomes[1].map(\.changesIgnored))
        #expect(try memory.allRows() == sqlite.allRows())
        // Where the policies part: n3, deleted here and written later by A, is back only under last writer wins.
        #expect(
            memory.rows(table: "notes")["n3"]
                == (deletePolicy == .lastWriterWins
                    ? ["title": .text("three"), "body": .text("A, after the delete"), "folder_id": .null] : nil))
        #expect(try memory.appliedChangeSets() == sqlite.adapter.appliedChangeSets())
        for table in SimulatedNotes.tables {
            for id in ["f1", "n1", "n2", "n3", "t1", "nt1"] {
                #expect(
                    memory.deletionStamp(table: table.name, syncID: id, localClient: "L")
                        == (try sqlite.deletionStamp(table: table.name, syncID: id, localClient: "L")))
                for column in table.columns {
                    let key = ColumnKey(table: table.name, syncID: id, column: column)
                    #expect(
                        memory.stamp(of: key, localClient: "L") == (try sqlite.stamp(of: key, localClient: "L")),
                        "\(key)")
                }
            }
        }

        // What each would publish next is the same too.
        var staged: [[SyncChange]] = [[], []]
        for (index, store) in stores.enumerated() {
            _ = try store.adapter.stageChanges(sequence: 1, emit: { staged[index].append($0) }, seal: { 1 })
        }
        #expect(staged[0] == staged[1] && !staged[0].isEmpty)
        // Last writer wins: the local writes to n1, which A's newer delete removed, still travel (kept for a later
        // write).
        #expect(
            staged[0].contains { $0.syncID == "n1" && $0.kind == .update && !$0.columns.isEmpty }
                == (deletePolicy == .lastWriterWins))

        // A restart keeps exactly what was committed.
        let restarted = memory.restarted()
        #expect(try restarted.allRows() == memory.allRows())
        #expect(try restarted.adapter.hasUnpublishedChanges() == memory.hasUnpublishedChanges())
        #expect(try restarted.adapter.loadSyncState() == memory.loadSyncState())
    }
}
