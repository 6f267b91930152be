import FolderSyncTesting
import Foundation
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// Defects found from outside (issue 19, items 3 and 4; issue 25, item 7): a file one client writes and the
/// others only read never stops the others, and another client's legitimate mass delete never silences this one.
@Suite("Files of other clients")
struct OtherClientsFilesTests {
    /// A, B and C on a real folder; A and C have each published a note, B has synced them.
    private func threeClients(_ directory: TemporaryDirectory) async throws -> (
        TestClient, TestClient, TestClient, FileManagerFileSystem
    ) {
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let a = try await TestClient.make(remote, name: "A", in: directory)
        let b = try await TestClient.make(remote, name: "B", in: directory)
        let c = try await TestClient.make(remote, name: "C", in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('a1', 'from A')")
        try c.execute("INSERT INTO notes(id, title) VALUES ('c1', 'from C')")
        try await converge(a, b, c)
        return (a, b, c, remote)
    }

    static let damages: [String: Data] = [
        "empty": Data(),
        "truncated": Data(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><plist version=\"1.0\"><dict><key>kind</key>".utf8),
        "zero-filled": Data(count: 4096),
        "larger than any property list": Data(count: PropertyListFile.maximumByteCount + 1),
    ]

    @Test(
        "A damaged recent sync of another client is a warning: the sync lists that client's folder instead and goes on",
        arguments: damages.keys.sorted())
    func damagedMarker(_ damage: String) async throws {
        let directory = TemporaryDirectory()
        let (a, b, c, remote) = try await threeClients(directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('a2', 'A again')")
        try await a.sync()
        try c.execute("INSERT INTO notes(id, title) VALUES ('c2', 'C again')")
        try await c.sync()
        let marker = a.document.relativePathToThisDocumentRecentSyncsDirectory.appending("client-A.recentsync")
        try await remote.write(Self.damages[damage]!, to: marker)
        try b.execute("INSERT INTO notes(id, title) VALUES ('b1', 'from B')")

        let report = try await b.sync()
        #expect(
            report.warnings.contains { $0.kind == .unreadableFile && $0.path == marker.description },
            "\(report.warnings)")
        #expect(
            report.warnings.filter { $0.kind == .unreadableFile }.count == 1, "the damage was reported more than once")
        // A's new set was found by listing A's folder; C's came as usual; B's own note went out.
        #expect(try b.value("SELECT group_concat(id) FROM (SELECT id FROM notes ORDER BY id)") == "a1,a2,b1,c1,c2")
        try await c.sync()
        #expect(try c.value("SELECT count(*) FROM notes WHERE id = 'b1'") == "1")
        // A writes its marker again at its next sync; everyone is healthy again.
        try a.execute("INSERT INTO notes(id, title) VALUES ('a3', 'A heals')")
        try await a.sync()
        let healed = try await b.sync()
        #expect(!healed.warnings.contains { $0.kind == .unreadableFile })
        #expect(try b.value("SELECT count(*) FROM notes WHERE id = 'a3'") == "1")
    }

    @Test(
        "Listings and vacuum go on past another client's damaged marker and device info: that client is shown without them",
        arguments: damages.keys.sorted())
    func damagedFilesInListings(_ damage: String) async throws {
        let directory = TemporaryDirectory()
        let (a, b, _, remote) = try await threeClients(directory)
        let layout = a.document.layout
        try await remote.write(
            Self.damages[damage]!,
            to: a.document.relativePathToThisDocumentRecentSyncsDirectory.appending("client-C.recentsync"))
        try await remote.write(Self.damages[damage]!, to: layout.deviceInfoFile("client-C"))

        let clients = try await b.document.registeredClients()
        #expect(clients.map(\.identifier) == ["client-A", "client-B", "client-C"])
        let c = try #require(clients.last)
        #expect(c.clientDescription == nil && c.lastSyncDate == nil)
        #expect(try await b.app.registeredClients().map(\.identifier) == ["client-A", "client-B", "client-C"])
        let documents = try await b.app.previouslySynchronizedDocuments()
        #expect(documents.map(\.identifier) == ["DOC"] && documents[0].lastActivityDate != nil)
        let vacuum = try await b.document.vacuum()
        #expect(vacuum.skipped.contains { $0.path.name == "client-C.recentsync" }, "\(vacuum.skipped)")
    }

    @Test("A recent sync that names another client, or a link to an unrelated file, is a warning, never a stop")
    func foreignMarker() async throws {
        let directory = TemporaryDirectory()
        let (a, b, c, remote) = try await threeClients(directory)
        let folder = a.document.relativePathToThisDocumentRecentSyncsDirectory
        // A's marker replaced by C's (valid, checksummed, but about C).
        try await remote.write(
            try await remote.read(folder.appending("client-C.recentsync")), to: folder.appending("client-A.recentsync"))
        var report = try await b.sync()
        #expect(
            report.warnings.contains {
                $0.kind == .unreadableFile && $0.path == folder.appending("client-A.recentsync").description
            })
        // A's marker a symbolic link to a file that is no marker.
        let unrelated = directory.url.appendingPathComponent("unrelated.txt")
        try Data("not a marker".utf8).write(to: unrelated)
        let markerURL = remote.url(for: folder.appending("client-A.recentsync"))
        try FileManager.default.removeItem(at: markerURL)
        try FileManager.default.createSymbolicLink(at: markerURL, withDestinationURL: unrelated)
        try c.execute("INSERT INTO notes(id, title) VALUES ('c2', 'C again')")
        try await c.sync()
        report = try await b.sync()
        #expect(
            report.warnings.contains {
                $0.kind == .unreadableFile && $0.path == folder.appending("client-A.recentsync").description
            })
        #expect(try b.value("SELECT count(*) FROM notes WHERE id = 'c2'") == "1")
    }

    @Test("An empty or foreign deletion marker does not delete a client; a real one does")
    func forgedDeletionMarker() async throws {
        let directory = TemporaryDirectory()
        let (_, b, _, remote) = try await threeClients(directory)
        let path = b.document.relativePathToThisDocumentDeletedClientsDirectory.appending("client-B.plist")
        for forged in [
            Data(), Data("deleted".utf8),
            try PropertyListFile.encode(
                DeletedClientInfo(clientIdentifier: "client-C", deletedBy: "x", deletionDate: Fixture.date)),
        ] {
            try await remote.write(forged, to: path)
            // The check runs when B's own marker is gone, as after a real deletion.
            try await remote.remove(
                b.document.relativePathToThisDocumentRecentSyncsDirectory.appending("client-B.recentsync"))
            let report = try await b.sync()
            #expect(
                report.warnings.contains { $0.kind == .unreadableFile && $0.path == path.description },
                "\(report.warnings)")
        }
        let real = try PropertyListFile.encode(
            DeletedClientInfo(clientIdentifier: "client-B", deletedBy: "operator", deletionDate: Fixture.date))
        try await remote.write(real, to: path)
        try await remote.remove(
            b.document.relativePathToThisDocumentRecentSyncsDirectory.appending("client-B.recentsync"))
        await #expect { try await b.sync() } throws: { ($0 as? FolderSyncError)?.code == .clientDeleted }
    }

    @Test("An empty deletion marker in an encrypted folder, written without the key, does not delete a client")
    func forgedDeletionMarkerEncrypted() async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let encrypt: (ApplicationSyncManager) -> Void = { app in
            app.encryptionHandler = { _ in .password("correct horse battery staple") }
        }
        let a = try await TestClient.make(remote, name: "A", in: directory, configure: encrypt)
        let b = try await TestClient.make(remote, name: "B", in: directory, configure: encrypt)
        try await converge(a, b)
        let path = b.document.relativePathToThisDocumentDeletedClientsDirectory.appending("client-B.plist")
        let clear = try PropertyListFile.encode(
            DeletedClientInfo(clientIdentifier: "client-B", deletedBy: "provider", deletionDate: Fixture.date))
        for forged in [Data(), clear] {
            try await remote.write(forged, to: path)
            try await remote.remove(
                b.document.relativePathToThisDocumentRecentSyncsDirectory.appending("client-B.recentsync"))
            let report = try await b.sync()
            #expect(
                report.warnings.contains { $0.kind == .unreadableFile && $0.path == path.description },
                "\(report.warnings)")
        }
    }

    @Test("A declined mass deletion still publishes this client's own changes, and stops with the error once")
    func declinedMassDeletionPublishes() async throws {
        let directory = TemporaryDirectory()
        let (a, b) = try await DeletionFailSafeTests.shared(notes: 120, in: directory)
        try a.execute("DELETE FROM notes WHERE id < 'n070'")
        try await a.sync()
        try b.execute("INSERT INTO notes(id, title) VALUES ('b-new', 'written on B')")
        let before = try NotesSchema.dump(b.store)

        for _ in 0..<2 {
            let error = await #expect(throws: FolderSyncError.self) { try await b.sync() }
            #expect(error?.code == .massDeletionDeclined)
        }
        #expect(try NotesSchema.dump(b.store) == before, "a declined sync applied remote changes")
        let report = try await a.sync()
        #expect(report.changeSetsApplied == 1)
        #expect(try a.value("SELECT title FROM notes WHERE id = 'b-new'") == "written on B")
    }
}
