import FolderSyncTesting
import Foundation
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// Defects the kill torture found (Tests/TestWorker/Torture.swift), each reproduced in one process.
@Suite("Defects found by the kill torture")
struct TortureRegressionTests {
    /// A whole store that covers less than this client published hid the client's own writes until its change sets
    /// came back: a delete made in that window hit a missing row and was lost.
    @Test("After installing an older whole store, own published rows stay visible, and a delete of one sticks")
    func ownWritesStay() async throws {
        let directory = TemporaryDirectory()
        let (a, b) = try await TestClient.pair(InMemoryFileSystem(), in: directory)
        try await b.document.uploadWholeStore()  // covers nothing of A
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'one'), ('n2', 'two')")
        try await a.sync()  // published, not in B's store
        try a.execute("UPDATE notes SET title = 'two, edited' WHERE id = 'n2'")
        try await a.sync()
        let installed = try await a.document.downloadWholeStore()
        #expect(installed?.clientIdentifier == "client-B")
        let rows = try NotesSchema.dump(a.store)
        #expect(rows.count == 2, "own published rows vanished: \(rows)")
        #expect(try a.value("SELECT title FROM notes WHERE id = 'n2'") == "two, edited")
        try a.execute("DELETE FROM notes WHERE id = 'n1'")
        try await converge(a, b)
        #expect(try a.value("SELECT group_concat(id) FROM notes") == "n2")
        #expect(try NotesSchema.dump(a.store) == NotesSchema.dump(b.store))
    }
}

/// A remote whose first change-set upload lands but reports a failure, as a sync killed between publishing a
/// change set and its bookkeeping leaves things.
final class LostAcknowledgementFileSystem: ForwardingFileSystem, @unchecked Sendable {
    let failed = Locked(false)

    override func upload(fromLocalFile url: URL, to path: RemotePath) async throws {
        try await base.upload(fromLocalFile: url, to: path)
        if path.name.hasSuffix(".syncchg"),
            failed.withLock({
                let first = !$0
                $0 = true
                return first
            })
        {
            throw FolderSyncError(.remoteIOFailed, "the answer to the upload was lost", path: path.description)
        }
    }
}

extension TortureRegressionTests {
    @Test("A whole-store install between a change set's upload and its bookkeeping does not number a new set the same")
    func noSequenceTwice() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let flaky = LostAcknowledgementFileSystem(remote)
        let b = try await TestClient.make(remote, name: "B", in: directory)
        let a = try await TestClient.make(flaky, name: "A", in: directory)
        try await b.document.uploadWholeStore()
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'one')")
        // set 1 is on the remote, not marked published
        await #expect(throws: FolderSyncError.self) { try await a.sync() }
        try a.execute("INSERT INTO notes(id, title) VALUES ('n2', 'two')")
        try await a.document.downloadWholeStore()
        try await converge(a, b)
        let names = try await remote.contentsOfDirectory(
            at: a.document.layout.syncChangesDirectory("DOC", client: "client-A")
        ).map(\.name)
        let sequences = names.compactMap { RemoteLayout.parseChangeSetFileName($0)?.sequence }.sorted()
        #expect(sequences == Array(Set(sequences)).sorted(), "a sequence was used twice: \(names.sorted())")
        #expect(try b.value("SELECT group_concat(id) FROM (SELECT id FROM notes ORDER BY id)") == "n1,n2")
        #expect(try NotesSchema.dump(a.store) == NotesSchema.dump(b.store))
    }
}

/// Removes this client's whole-store folder just before the first manifest is published into it, as another
/// client's vacuum does when it judges the store there dominated.
final class VacuumingRaceFileSystem: ForwardingFileSystem, @unchecked Sendable {
    let raced = Locked(false)

    override func move(from source: RemotePath, to destination: RemotePath, replacing: Bool) async throws {
        if destination.name == RemoteLayout.appliedSyncChangeSetsFileName,
            raced.withLock({
                let first = !$0
                $0 = true
                return first
            })
        {
            try await base.remove(destination.parent)
        }
        try await base.move(from: source, to: destination, replacing: replacing)
    }
}

extension TortureRegressionTests {
    @Test("A whole-store upload whose folder another client's vacuum removes half way uploads again")
    func uploadRacingVacuum() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let racing = VacuumingRaceFileSystem(remote)
        let a = try await TestClient.make(racing, name: "A", in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'one')")
        try await a.sync()
        let manifest = try #require(try await a.document.uploadWholeStore())
        #expect(racing.raced.current)
        let b = try await TestClient.make(remote, name: "B", in: directory)
        let report = try await b.sync()
        #expect(report.installedWholeStore == manifest)
        #expect(try b.value("SELECT title FROM notes") == "one")
    }
}
