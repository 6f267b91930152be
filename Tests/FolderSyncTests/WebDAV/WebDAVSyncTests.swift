import Foundation
import FolderSync
import FolderSyncWebDAV
import Testing

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
        try a.execute("INSERT INTO folders(id, name) VALUES ('f1', 'Inbox é 🎉')")
        try a.execute("INSERT INTO notes(id, title, body, folder_id) VALUES ('n1', 'from A', 'body', 'f1')")
        try b.execute("INSERT INTO notes(id, title, body) VALUES ('n2', 'from B', 'body')")
        try c.execute("INSERT INTO tags(id, name) VALUES ('t1', 'from C')")
        try await converge(a, b, c)
        try b.execute("UPDATE notes SET title = 'edited by B' WHERE id = 'n1'")
        try c.execute("UPDATE notes SET body = 'edited by C' WHERE id = 'n1'")
        try a.execute("DELETE FROM notes WHERE id = 'n2'")
        try await converge(a, b, c)

        let rows = try NotesSchema.dump(a.store)
        #expect(rows == (try NotesSchema.dump(b.store)))
        #expect(rows == (try NotesSchema.dump(c.store)))
        #expect(try a.value("SELECT title || '/' || body FROM notes WHERE id = 'n1'") == "edited by B/edited by C")
        #expect(try c.value("SELECT count(*) FROM notes") == "1")
        #expect(try b.value("SELECT name FROM folders WHERE id = 'f1'") == "Inbox é 🎉")
    }

    @Test("Encrypted clients converge through the server, a whole store streaming up and down sealed", arguments: WebDAVTestServers.names)
    func encryptedConverge(_ server: String) async throws {
        let directory = TemporaryDirectory()
        let remote = try await WebDAVTestServers.fileSystem(server)
        let answers = EncryptionAnswers(.password("dav secret"), .password("dav secret"), .password("dav secret"))
        let a = try await TestClient.encrypted(remote, name: "A", in: directory, answers: answers)
        let b = try await TestClient.encrypted(remote, name: "B", in: directory, answers: answers)
        try a.execute("INSERT INTO notes(id, title, body) VALUES ('n1', 'sealed title', ?)", [String(repeating: "long body ", count: 40_000)])
        try b.execute("INSERT INTO notes(id, title) VALUES ('n2', 'from B')")
        try await converge(a, b)
        let manifest = try #require(try await a.document.uploadWholeStore())
        let c = try await TestClient.encrypted(remote, name: "C", in: directory, answers: answers)
        try await converge(a, b, c)
        #expect(try NotesSchema.dump(c.store) == NotesSchema.dump(a.store))
        let wholeStore = a.document.layout.wholeStoreFile(a.document.documentIdentifier, client: manifest.clientIdentifier)
        let stored = try await remote.read(wholeStore)
        #expect(stored.prefix(8) == Data("FSYNCENC".utf8) && stored.range(of: Data("sealed title".utf8)) == nil)
    }

    @Test("An idle sync costs a small, constant number of HTTP requests", arguments: WebDAVTestServers.names)
    func idleSyncRequestCount(_ server: String) async throws {
        let directory = TemporaryDirectory()
        let remote = try await WebDAVTestServers.fileSystem(server)
        let (a, b) = try await TestClient.pair(remote, in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'hello')")
        try await converge(a, b)

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
