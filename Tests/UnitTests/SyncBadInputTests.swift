import FolderSyncTesting
import Foundation
import GRDB
import Testing

@_spi(Tooling) @_spi(ModelAdapter) @testable import FolderSync
@testable import TestSupport

@Suite("Synchronization with bad input")
struct SyncBadInputTests {
    /// A publishes one change set on a file-manager remote; returns the clients and the set's remote path and bytes.
    /// Its marker does not carry the set, so that B reads the file.
    private func published(_ directory: TemporaryDirectory) async throws -> (
        TestClient, TestClient, FileManagerFileSystem, RemotePath, Data
    ) {
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let a = try await TestClient.make(remote, name: "A", in: directory)
        a.document.policy.carriesChangeSetsInMarkers = false
        let b = try await TestClient.make(remote, name: "B", in: directory)
        try b.execute("INSERT INTO notes(id, title) VALUES ('b1', 'B was here')")
        try a.execute(
            "INSERT INTO notes(id, title, body) VALUES ('a1', 'from A', ?)", [String(repeating: "text ", count: 200)])
        try await a.sync()
        let folder = a.document.relativePathToThisDocumentSyncChangesThisClientDirectory
        let name = try #require(try await remote.contentsOfDirectory(at: folder).first?.name)
        let path = folder.appending(name)
        return (a, b, remote, path, try await remote.read(path))
    }

    /// B's sync goes on without the damaged file: it names it in a warning of `kind`, applies nothing of A's,
    /// and still publishes its own change.
    private func expectSkipped(_ b: TestClient, kind: SyncWarning.Kind = .unreadableFile, path: RemotePath) async throws
    {
        let before = try NotesSchema.dump(b.store)
        let ledgerBefore = try b.store.appliedChangeSets()
        let report = try await b.sync()
        #expect(report.warnings.contains { $0.kind == kind && $0.path == path.description }, "\(report.warnings)")
        #expect(report.changeSetsApplied == 0)
        #expect(try NotesSchema.dump(b.store) == before, "the local store changed")
        #expect(try b.store.appliedChangeSets() == ledgerBefore, "the ledger changed")
        #expect(try b.store.loadSyncState().progress.publishedSequence >= 1, "B's own change was not published")
    }

    @Test(
        "A truncated change set of another client is skipped with a warning naming it; the local store is unchanged, the sync goes on",
        arguments: [0.0, 0.1, 0.5, 0.9, 0.99])
    func truncated(fraction: Double) async throws {
        let directory = TemporaryDirectory()
        let (_, b, remote, path, bytes) = try await published(directory)
        try await remote.write(bytes.prefix(Int(Double(bytes.count) * fraction)), to: path)
        try await expectSkipped(b, path: path)
    }

    @Test(
        "A bit-flipped change set of another client is skipped with a warning naming it; the local store is unchanged")
    func bitFlipped() async throws {
        let directory = TemporaryDirectory()
        let (_, b, remote, path, bytes) = try await published(directory)
        for offset in stride(from: 9, to: bytes.count, by: max(1, bytes.count / 13)) {
            var damaged = bytes
            damaged[offset] ^= 0x10
            try await remote.write(damaged, to: path)
            try await expectSkipped(b, path: path)
        }
    }

    @Test("A change set of a newer format version is parked with a warning naming it")
    func foreignVersion() async throws {
        let directory = TemporaryDirectory()
        let (_, b, remote, path, bytes) = try await published(directory)
        var future = bytes
        future[8] = 2  // the version byte follows the 8-byte magic
        try await remote.write(future, to: path)
        try await expectSkipped(b, kind: .changeSetParked, path: path)
    }

    @Test("A change set renamed to another client's sequence is skipped as corrupt")
    func misplaced() async throws {
        let directory = TemporaryDirectory()
        let (a, b, remote, path, _) = try await published(directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('a2', 'second')")
        try await a.sync()
        // Swap the two files' contents: each name now holds the other's sequence.
        let folder = path.parent
        let names = try await remote.contentsOfDirectory(at: folder).map(\.name).sorted()
        let first = try await remote.read(folder.appending(names[0]))
        let second = try await remote.read(folder.appending(names[1]))
        try await remote.write(second, to: folder.appending(names[0]))
        try await remote.write(first, to: folder.appending(names[1]))
        try await expectSkipped(b, path: folder.appending(names[0]))
    }

    @Test(
        "A change set of a newer schema is parked, not applied and not acknowledged, and applied after the app updates")
    func newerSchemaParked() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let newer = try await TestClient.make(remote, name: "A", in: directory, schemaVersion: 2)
        let older = try await TestClient.make(remote, name: "B", in: directory, schemaVersion: 1)
        try newer.execute("INSERT INTO notes(id, title) VALUES ('n1', 'from v2')")
        try await newer.sync()
        let report = try await older.sync()
        #expect(report.parkedChangeSets.count == 1)
        #expect(report.warnings.contains { $0.kind == .changeSetParked })
        #expect(try older.value("SELECT count(*) FROM notes") == "0")
        #expect(try older.store.appliedChangeSets().sequences(of: "client-A").isEmpty)

        // The app is updated: the same database, opened with schema version 2.
        let updated = try NotesSchema.open(URL(fileURLWithPath: older.store.database.path), schemaVersion: 2)
        let manager = try await DocumentSyncManager(
            applicationSyncManager: older.app, registering: older.document.configuration,
            store: updated)
        let after = try await manager.synchronize()
        #expect(after.changeSetsApplied == 1)
        #expect(
            try await updated.database.read { try String.fetchOne($0, sql: "SELECT title FROM notes") } == "from v2")
    }

    @Test(
        "Files the layout does not know (desktop-agent copies, stray files, temporaries) are ignored and reported where listed; markers without change-set names still work"
    )
    func strayFiles() async throws {
        let directory = TemporaryDirectory()
        let (a, b, remote, path, bytes) = try await published(directory)
        let copy = path.parent.appending(path.name.replacingOccurrences(of: ".syncchg", with: " (1).syncchg"))
        try await remote.write(bytes, to: copy)
        try await remote.write(Data("x".utf8), to: path.parent.appending("notes.txt"))
        try await remote.write(
            Data("x".utf8), to: path.parent.appending(TemporaryName.make(for: "000000000002-X.syncchg")))
        try await remote.write(
            Data("x".utf8), to: a.document.relativePathToThisDocumentRecentSyncsDirectory.appending("stray.txt"))
        // A marker written before markers named their change sets: B lists A's folder (as it does whenever it needs
        // more than a marker names), where the strays are.
        let markerPath = a.document.relativePathToThisDocumentRecentSyncsDirectory.appending(
            "\(a.document.clientIdentifier).recentsync")
        var marker = try PropertyListFile.decode(
            RecentSync.self, from: try await remote.read(markerPath), path: markerPath.description)
        #expect(marker.recentChangeSets == [path.name])
        marker.recentChangeSets = nil
        try await remote.write(try PropertyListFile.encode(marker), to: markerPath)
        let report = try await b.sync()
        #expect(report.changeSetsApplied == 1)
        let reported = Set(report.warnings.filter { $0.kind == .unknownFile }.compactMap(\.path))
        #expect(reported.contains(copy.description))
        #expect(reported.contains(path.parent.appending("notes.txt").description))
        #expect(
            reported.contains(
                a.document.relativePathToThisDocumentRecentSyncsDirectory.appending("stray.txt").description))
        #expect(!reported.contains { $0.contains(TemporaryName.prefix) }, "a temporary was reported as unknown")
        #expect(try b.value("SELECT count(*) FROM notes") == "2")
    }

    @Test(
        "A remote document wiped after registration stops sync with integrityKeyMismatch; the local store is unchanged")
    func wipedRemote() async throws {
        let directory = TemporaryDirectory()
        let (a, b, remote, _, _) = try await published(directory)
        try await b.sync()
        let before = try NotesSchema.dump(b.store)
        try await remote.remove(a.document.relativePathToThisDocumentDirectory)
        await #expect { try await b.sync() } throws: { ($0 as? FolderSyncError)?.code == .integrityKeyMismatch }
        #expect(try NotesSchema.dump(b.store) == before)
    }
}

/// Reads through to a remote, but serves the first read of each file matching `damaged` cut in half, as a read
/// that catches a non-atomic replacement (WebDAV MOVE as delete then rename) half done would.
final class HalfReplacingFileSystem: ForwardingFileSystem, @unchecked Sendable {
    let damaged: @Sendable (RemotePath) -> Bool
    let served = Locked<Set<RemotePath>>([])

    init(base: InMemoryFileSystem, damaged: @escaping @Sendable (RemotePath) -> Bool) {
        self.damaged = damaged
        super.init(base, transfersThroughReadAndWrite: true)
    }

    override func read(_ path: RemotePath) async throws -> Data {
        let data = try await base.read(path)
        guard damaged(path), served.withLock({ $0.insert(path).inserted }) else { return data }
        return data.prefix(data.count / 2)
    }
}

@Suite("Reads that catch a replacement half done")
struct HalfReplacedReadTests {
    @Test("A recent-sync marker or change set damaged on one read only is read again, and the sync succeeds")
    func transientDamage() async throws {
        let directory = TemporaryDirectory()
        let base = InMemoryFileSystem()
        let a = try await TestClient.make(base, name: "A", in: directory)
        a.document.policy.carriesChangeSetsInMarkers = false
        let flaky = HalfReplacingFileSystem(base: base) {
            $0.name.hasSuffix(".recentsync") || $0.name.hasSuffix(".syncchg")
        }
        let b = try await TestClient.make(flaky, name: "B", in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'hello')")
        try await a.sync()
        let report = try await b.sync()
        #expect(report.changeSetsApplied == 1)
        #expect(try b.value("SELECT title FROM notes") == "hello")
        #expect(flaky.served.current.count == 2, "both the marker and the change set were damaged once")
    }
}
