import FolderSyncTesting
import Foundation
import GRDB
import Testing

@_spi(ModelAdapter) @_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// A marker carries the small sets its sync published, written at the same time as they are (benchmark scenarios 9
/// and 10: one request per client with news, three round trips to publish); a client that only applied acknowledges
/// at most every `SyncPolicy.acknowledgementDelay`, and at once when its marker would claim more than its store holds.
@Suite("Change sets carried by markers, and acknowledgements")
struct CarriedChangeSetTests {
    /// Records every request in order, and fails the uploads of change sets while `failsUploads` is set.
    final class Recording: ForwardingFileSystem, @unchecked Sendable {
        let requests = Locked<[(request: Request, path: String)]>([])
        let failsUploads = Locked(false)

        override func willForward(_ request: Request, path: RemotePath) async throws {
            requests.withLock { $0.append((request, path.description)) }
            if request == .upload, path.name.hasSuffix(".syncchg"), failsUploads.current {
                throw FolderSyncError(.remoteIOFailed, "the upload failed (test)", path: path.description)
            }
        }

        func take() -> [(request: Request, path: String)] {
            requests.withLock { all in
                defer { all = [] }
                return all
            }
        }
    }

    static let markerOfA = "com.example.notes/Documents/DOC/RecentSyncs/client-A.recentsync"
    static let folderOfA = "com.example.notes/Documents/DOC/SyncChanges/client-A"

    func marker(_ remote: InMemoryFileSystem, _ path: String = markerOfA) async throws -> RecentSync {
        try PropertyListFile.decode(RecentSync.self, from: try await remote.read(try RemotePath(path)), path: path)
    }

    func setsOfA(_ remote: InMemoryFileSystem) async throws -> [String] {
        try await remote.contentsOfDirectory(at: try RemotePath(Self.folderOfA)).map(\.name).filter {
            $0.hasSuffix(".syncchg")
        }.sorted()
    }

    @Test(
        "A reader takes a small set from its writer's marker: the listings and one read, no download; the file is published too"
    )
    func smallSetRidesTheMarker() async throws {
        let directory = TemporaryDirectory()
        let base = InMemoryFileSystem()
        let remote = Recording(base)
        let (a, b) = try await TestClient.pair(remote, in: directory)
        try await a.sync()
        try await b.sync()
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'carried')")
        try await a.sync()
        let written = try await marker(base)
        let names = try await setsOfA(base)
        #expect(names.count == 1)
        #expect(written.changeSetContents?.keys.sorted() == names, "the marker carries the set it announces")
        #expect(
            written.changeSetContents?[names[0]]
                == (try await base.read(try RemotePath("\(Self.folderOfA)/\(names[0])"))))

        _ = remote.take()
        let report = try await b.sync()
        let requests = remote.take()
        #expect(report.changesApplied == 1)
        #expect(try b.value("SELECT title FROM notes WHERE id = 'n1'") == "carried")
        #expect(!requests.contains { $0.request == .download || $0.path.hasSuffix(".syncchg") }, "\(requests)")
        #expect(requests.filter { $0.request == .read }.map(\.path) == [Self.markerOfA])
        #expect(report.remoteRequests == 3 && requests.count == 3, "two listings and A's marker: \(requests)")
    }

    @Test("Sets larger than a marker carries go out before the marker, which names them without their bytes")
    func largeSetGoesFirst() async throws {
        let directory = TemporaryDirectory()
        let base = InMemoryFileSystem()
        let remote = Recording(base)
        let (a, b) = try await TestClient.pair(remote, in: directory)
        // Text that zlib cannot shrink below the limit.
        var generator = SystemRandomNumberGenerator()
        let body = (0..<(RecentSync.inlineChangeSetLimit * 2)).map { _ in
            String(UInt8.random(in: 0...255, using: &generator), radix: 16)
        }.joined()
        try a.execute("INSERT INTO notes(id, title, body) VALUES ('n1', 'large', ?)", [body])
        _ = remote.take()
        try await a.sync()
        let order = remote.take().map(\.path)
        let upload = try #require(order.firstIndex { $0.hasSuffix(".syncchg") })
        let markerWrite = try #require(order.firstIndex { $0 == Self.markerOfA })
        #expect(upload < markerWrite, "the marker went out before the set it names: \(order)")
        let written = try await marker(base)
        #expect(written.changeSetContents == nil && written.recentChangeSets?.count == 1)
        // Every marker names its installation (format 3), carried sets or not.
        #expect(written.writtenFormatVersion == 3)
        try await b.sync()
        #expect(try b.value("SELECT length(body) FROM notes WHERE id = 'n1'") == String(body.count))
    }

    @Test(
        "A marker that went out while its set's upload failed: readers apply the set from it; the writer's next sync publishes the file under the same name and numbers nothing twice"
    )
    func setFailedMarkerWentOut() async throws {
        let directory = TemporaryDirectory()
        let base = InMemoryFileSystem()
        let remote = Recording(base)
        let (a, b) = try await TestClient.pair(remote, in: directory)
        try await a.sync()
        try await b.sync()
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'first')")
        remote.failsUploads.withLock { $0 = true }
        await #expect(throws: FolderSyncError.self) { try await a.sync() }
        remote.failsUploads.withLock { $0 = false }
        let written = try await marker(base)
        let name = try #require(written.changeSetContents?.keys.first)
        #expect(written.publishedSequence == 1)
        #expect(try await setsOfA(base).isEmpty, "the set's upload failed")

        let read = try await b.sync()
        #expect(read.changesApplied == 1, "B applies the set the marker carries")

        let again = try await a.sync()
        #expect(!again.warnings.contains { $0.kind == .restoredStore }, "\(again.warnings)")
        #expect(again.changeSetsSent == 1)
        #expect(try await setsOfA(base) == [name], "published under the name the marker gave it")
        try a.execute("INSERT INTO notes(id, title) VALUES ('n2', 'second')")
        try await a.sync()
        #expect(try await setsOfA(base).compactMap { RemoteLayout.parseChangeSetFileName($0)?.sequence } == [1, 2])

        // A new device, after A's marker moved on, reads the first set from its file.
        let c = try await TestClient.make(remote, name: "C", in: directory)
        try await converge(a, b, c)
        #expect(try NotesSchema.dump(c.store) == NotesSchema.dump(a.store))
        #expect(try NotesSchema.dump(b.store) == NotesSchema.dump(a.store))
        #expect(try c.value("SELECT count(*) FROM notes") == "2")
    }

    @Test(
        "More staged sets than a marker names, whose uploads kept failing while markers carrying them went out, are published under their names, not taken for a restore"
    )
    func manyStagedSetsFailedTogether() async throws {
        let directory = TemporaryDirectory()
        let base = InMemoryFileSystem()
        let remote = Recording(base)
        let (a, b) = try await TestClient.pair(remote, in: directory)
        try await a.sync()
        try await b.sync()
        let failing = RecentSync.announcedChangeSetLimit + 2
        remote.failsUploads.withLock { $0 = true }
        for index in 0..<failing {
            try a.execute("INSERT INTO notes(id, title) VALUES (?, 'staged')", ["n\(index)"])
            await #expect(throws: FolderSyncError.self) { try await a.sync() }
        }
        remote.failsUploads.withLock { $0 = false }
        #expect(try await marker(base).publishedSequence == Int64(failing))
        let again = try await a.sync()
        #expect(!again.warnings.contains { $0.kind == .restoredStore }, "\(again.warnings)")
        #expect(
            try await setsOfA(base).compactMap { RemoteLayout.parseChangeSetFileName($0)?.sequence }
                == Array(1...Int64(failing)))
        try await converge(a, b)
        #expect(try b.value("SELECT count(*) FROM notes") == String(failing))
    }

    @Test(
        "A sync that finds its sets gone from a restored folder owes a whole store even when it fails after rewriting its marker"
    )
    func lossFoundBeforeAFailureIsKept() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let copy = directory.url.appendingPathComponent("remote-copy")
        let remote = Recording(FileManagerFileSystem(rootURL: root))
        let (a, b) = try await TestClient.pair(remote, in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'one')")
        try await a.sync()
        try await b.sync()
        try FileManager.default.copyItem(at: root, to: copy)  // the folder's backup
        try a.execute("INSERT INTO notes(id, title) VALUES ('n2', 'two, lost with the folder')")
        try await a.sync()
        try await a.sync()  // A's marker read back
        try FileManager.default.removeItem(at: root)
        try FileManager.default.moveItem(at: copy, to: root)  // the folder restored
        try a.execute("INSERT INTO notes(id, title) VALUES ('n3', 'three')")
        // its marker goes out, its set does not
        remote.failsUploads.withLock { $0 = true }
        await #expect(throws: FolderSyncError.self) { try await a.sync() }
        remote.failsUploads.withLock { $0 = false }
        #expect(try a.store.loadSyncState().remote.owesWholeStore, "the loss was forgotten with the failed sync")
        let healed = try await a.sync()
        #expect(healed.uploadedWholeStore != nil)
        try await converge(a, b)
        #expect(try b.value("SELECT group_concat(id) FROM (SELECT id FROM notes ORDER BY id)") == "n1,n2,n3")
    }

    @Test(
        "A client that only applies acknowledges once its marker is acknowledgementDelay old; at once when it publishes"
    )
    func acknowledgementDelay() async throws {
        let directory = TemporaryDirectory()
        let base = InMemoryFileSystem()
        let clock = Locked(Date())
        var environment = Fixture.quietEnvironment()
        environment.now = { clock.current }
        let a = try await TestClient.make(base, name: "A", in: directory)
        let b = try await TestClient.make(base, name: "B", in: directory, environment: environment)
        let markerOfB = "com.example.notes/Documents/DOC/RecentSyncs/client-B.recentsync"
        try await a.sync()
        try await b.sync()

        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'one')")
        try await a.sync()
        let applied = try await b.sync()
        #expect(applied.changesApplied == 1)
        #expect(applied.remoteRequests == 3, "no write: two listings and A's marker")
        #expect(try await marker(base, markerOfB).acknowledgement["client-A"] ?? 0 == 0)

        clock.withLock { $0 += b.document.policy.acknowledgementDelay }
        try await b.sync()
        #expect(try await marker(base, markerOfB).acknowledgement["client-A"] == 1, "the delay passed")

        try a.execute("INSERT INTO notes(id, title) VALUES ('n2', 'two')")
        try await a.sync()
        try await b.sync()
        #expect(try await marker(base, markerOfB).acknowledgement["client-A"] == 1, "written less than the delay ago")
        try b.execute("INSERT INTO notes(id, title) VALUES ('b1', 'from B')")
        try await b.sync()
        #expect(
            try await marker(base, markerOfB).acknowledgement["client-A"] == 2, "a sync that publishes acknowledges")
    }

    @Test(
        "A store restored to before what its marker acknowledges writes its marker at once, so that vacuum does not remove what it lacks"
    )
    func restoredStoreCorrectsItsAcknowledgement() async throws {
        let directory = TemporaryDirectory()
        let base = InMemoryFileSystem()
        let writer = try await TestClient.make(base, name: "W", in: directory)
        var reader = try await RestoredStoreTests.Restorable(base, in: directory)  // client-A
        reader.client.document.policy.acknowledgementDelay = 0
        reader.client.document.massDeletionHandler = { _ in true }
        try await writer.sync()
        try await reader.client.sync()
        for index in 0..<120 { try writer.execute("INSERT INTO notes(id, title) VALUES (?, 'note')", ["n\(index)"]) }
        try await writer.sync()
        try await reader.client.sync()
        try reader.backUp()  // acknowledges W's first set
        try writer.execute("DELETE FROM notes")
        try await writer.sync()
        try await reader.client.sync()
        #expect(try await marker(base).acknowledgement["client-W"] == 2)

        // Restored, it lacks W's second set; it declines the mass deletion (no handler), so it cannot apply it again.
        try await reader.restore()
        await #expect(throws: FolderSyncError.self) { try await reader.client.sync() }
        #expect(
            try await marker(base).acknowledgement["client-W"] == 1, "the marker still claims a set the store lacks")
    }
}
