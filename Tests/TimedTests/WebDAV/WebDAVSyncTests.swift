@_spi(Tooling) import FolderSync
import FolderSyncWebDAV
import Foundation
import GRDB
import Testing

@testable import TestSupport

/// Real FolderSync clients (GRDB stores, real managers) synchronizing through each WebDAV server.
@Suite("WebDAV synchronization")
struct WebDAVSyncTests {
    @Test("Three clients converge through the server", arguments: WebDAVTestServers.names)
    func threeClientsConverge(_ server: String) async throws {
        let directory = TemporaryDirectory()
        let remote = try await WebDAVTestServers.fileSystem(server)
        let a = try await TestClient.make(remote, name: "A", in: directory)
        let b = try await TestClient.make(remote, name: "B", in: directory)
        let c = try await TestClient.make(remote, name: "C", in: directory)
        try await convergeThroughEditsAndDelete(a, b, c)
        #expect(try b.value("SELECT name FROM folders WHERE id = 'f1'") == "Inbox é 🎉")
    }

    @Test(
        "Encrypted clients converge through the server, a whole store streaming up and down sealed",
        arguments: WebDAVTestServers.names)
    func encryptedConverge(_ server: String) async throws {
        let directory = TemporaryDirectory()
        let remote = try await WebDAVTestServers.fileSystem(server)
        let answers = EncryptionAnswers(.password("dav secret"), .password("dav secret"), .password("dav secret"))
        let a = try await TestClient.encrypted(remote, name: "A", in: directory, answers: answers)
        let b = try await TestClient.encrypted(remote, name: "B", in: directory, answers: answers)
        try a.execute(
            "INSERT INTO notes(id, title, body) VALUES ('n1', 'sealed title', ?)",
            [String(repeating: "long body ", count: 40_000)])
        try b.execute("INSERT INTO notes(id, title) VALUES ('n2', 'from B')")
        try await converge(a, b)
        let manifest = try #require(try await a.document.uploadWholeStore())
        let c = try await TestClient.encrypted(remote, name: "C", in: directory, answers: answers)
        try await converge(a, b, c)
        #expect(try NotesSchema.dump(c.store) == NotesSchema.dump(a.store))
        let wholeStore = a.document.layout.wholeStoreFile(
            a.document.documentIdentifier, client: manifest.clientIdentifier)
        let stored = try await remote.read(wholeStore)
        #expect(stored.prefix(8) == Data("FSYNCENC".utf8) && stored.range(of: Data("sealed title".utf8)) == nil)
    }

    @Test(
        "Attachments (a 3 MB file, a large value) travel through the server, are stored once, and gone ones are reported",
        arguments: WebDAVTestServers.names)
    func attachments(_ server: String) async throws {
        let directory = TemporaryDirectory()
        let remote = try await WebDAVTestServers.fileSystem(server)
        let (a, b) = try await TestClient.pair(remote, in: directory)
        let file = directory.url.appendingPathComponent("photo.jpg")
        let contents = pseudoRandomBytes(3_000_000, seed: 20)
        try contents.write(to: file)
        let photo = try a.document.attachFile(at: file, metadata: ["name": "photo.jpg"])
        let large = pseudoRandomBytes(200_000, seed: 21)
        try a.execute("INSERT INTO notes(id, title, body) VALUES ('n1', ?, ?)", [large, photo.databaseValue])
        try a.execute("INSERT INTO notes(id, body) VALUES ('n2', ?)", [photo.databaseValue])
        let sent = try await a.sync()
        #expect(sent.attachmentsUploaded == 2)
        let received = try await b.sync()
        #expect(received.attachmentsDownloaded == 2 && received.goneAttachments.isEmpty)
        #expect(try Data(contentsOf: try #require(b.document.localFile(for: photo))) == contents)
        #expect(try NotesSchema.dump(a.store) == NotesSchema.dump(b.store))
        let stored = try await remote.contentsOfDirectory(at: a.document.layout.attachmentsDirectory("DOC")).filter {
            !$0.name.hasPrefix(".")
        }
        #expect(stored.count == 2)

        try await remote.remove(a.document.layout.attachmentFile("DOC", sha256: photo.sha256))
        let c = try await TestClient.make(remote, name: "C", in: directory)
        let report = try await c.sync()
        #expect(Set(report.goneAttachments.map(\.key.syncID)) == ["n1", "n2"])
        #expect(try NotesSchema.dump(a.store) == NotesSchema.dump(c.store))
    }

    @Test("An idle sync costs a small, constant number of HTTP requests", arguments: WebDAVTestServers.names)
    func idleSyncRequestCount(_ server: String) async throws {
        let directory = TemporaryDirectory()
        let remote = try await WebDAVTestServers.fileSystem(server)
        let (a, b) = try await TestClient.pair(remote, in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'hello')")
        try await converge(a, b)
        // A server without ETags (nginx) tags a marker once it is settled, 2 s by its clock; until then, and in the
        // first sync after, each fresh marker is read again (WebDAVServerQuirkTests).
        let markers = a.document.layout.recentSyncsDirectory("DOC")
        for item in try await remote.contentsOfDirectory(at: markers) where !TemporaryName.isTemporary(item.name) {
            _ = try await WebDAVServerQuirkTests.settledTag(remote, markers.appending(item.name))
        }
        try await a.sync()

        var counts: [Int] = []
        for _ in 0..<3 {
            let before = remote.statistics.requests
            try await a.sync()
            counts.append(remote.statistics.requests - before)
        }
        print("idle sync on \(server): \(counts) HTTP requests")
        #expect(counts.allSatisfy { $0 == counts[0] }, "an idle sync's request count should not grow: \(counts)")
        #expect(counts[0] <= 12, "an idle sync should take a handful of requests, took \(counts[0])")
    }
}
