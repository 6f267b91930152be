import FolderSyncTesting
import Foundation
import GRDB
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

@Suite("Whole stores and bootstrap")
struct WholeStoreTests {
    /// Manual policy: no automatic uploads, so tests decide when whole stores appear.
    static func manual(_ client: TestClient) -> TestClient {
        var policy = SyncPolicy()
        policy.wholeStoreUploadAfterChangeSets = nil
        policy.wholeStoreUploadAfterBytes = nil
        client.document.policy = policy
        return client
    }

    @Test(
        "A new client starts from the whole store, applies only later change sets, and keeps a write made before its first sync"
    )
    func bootstrap() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let a = Self.manual(try await TestClient.make(remote, name: "A", in: directory))
        for index in 0..<5 {
            try a.execute(
                "INSERT INTO notes(id, title, body) VALUES (?, ?, ?)",
                ["n\(index)", "title \(index)", String(repeating: "x", count: 100)])
            try await a.sync()
        }
        let manifest = try #require(try await a.document.uploadWholeStore())
        #expect(manifest.covers == ["client-A": 5])
        #expect(
            manifest.attachmentReferenceCount == 0,
            "no attachment: a joining client does not search the snapshot for references")
        try a.execute("UPDATE notes SET title = 'after the store' WHERE id = 'n0'")
        try await a.sync()

        let c = Self.manual(try await TestClient.make(remote, name: "C", in: directory))
        try c.execute("INSERT INTO notes(id, title) VALUES ('mine', 'written before the first sync')")
        var replaced: [String] = []
        final class Observer: DocumentSyncManagerDelegate, @unchecked Sendable {
            let events = Locked<[String]>([])
            func documentSyncManager(
                _ manager: DocumentSyncManager, willReplaceLocalDataWith wholeStore: WholeStoreManifest
            ) {
                events.withLock { $0.append("will") }
            }
            func documentSyncManager(
                _ manager: DocumentSyncManager, didReplaceLocalDataWith wholeStore: WholeStoreManifest
            ) {
                events.withLock { $0.append("did") }
            }
        }
        let observer = Observer()
        c.document.delegate = observer
        let report = try await c.sync()
        replaced = observer.events.current
        #expect(replaced == ["will", "did"])
        #expect(report.installedWholeStore?.wholeStoreIdentifier == manifest.wholeStoreIdentifier)
        #expect(report.changeSetsApplied == 1, "only the set after the whole store should be applied")
        try await a.sync()
        #expect(try NotesSchema.dump(a.store) == NotesSchema.dump(c.store))
        #expect(try a.value("SELECT title FROM notes WHERE id = 'mine'") == "written before the first sync")
        #expect(try c.value("SELECT title FROM notes WHERE id = 'n0'") == "after the store")
    }

    @Test("A whole store is not uploaded while local changes are unpublished, and carries no app-local table")
    func uploadRules() async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let a = Self.manual(try await TestClient.make(remote, name: "A", in: directory))
        try await a.store.database.write { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS local_settings(key TEXT PRIMARY KEY, secret TEXT)")
            try db.execute(sql: "INSERT INTO local_settings VALUES ('token', 'do-not-share')")
            try db.execute(sql: "INSERT INTO notes(id, title) VALUES ('n1', 'hello')")
        }
        #expect(try await a.document.uploadWholeStore() == nil)
        try await a.sync()
        let manifest = try #require(try await a.document.uploadWholeStore())
        let file = directory.url.appendingPathComponent("remote").appendingPathComponent(
            a.document.relativePathToThisDocumentWholeStoreThisClientDirectoryWholeStoreFile.description)
        let snapshot = directory.url.appendingPathComponent("check.sqlite")
        _ = try WholeStoreFile.read(file, to: snapshot, path: "test")
        let tables = try await DatabaseQueue(path: snapshot.path).read {
            try String.fetchAll($0, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        #expect(!tables.contains("local_settings"))
        #expect(!tables.contains(StoreSchema.pendingChangesTable) && !tables.contains(StoreSchema.stagedChangesTable))
        #expect(manifest.wholeStoreByteCount == Int64(try Data(contentsOf: file).count))
        #expect(
            treeListing(of: directory.url.appendingPathComponent("remote")).filter { $0.contains(TemporaryName.prefix) }
                .isEmpty)
    }

    @Test("The store that covers the most is chosen, not the newest; a damaged one is skipped for the next best")
    func choiceAndDamage() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let (a, b) = try await TestClient.pair(remote, in: directory)
        for client in [a, b] { _ = Self.manual(client) }
        for index in 0..<3 {
            try a.execute("INSERT INTO notes(id, title) VALUES (?, 'a')", ["a\(index)"])
            try await a.sync()
        }
        try await b.sync()
        let best = try #require(try await b.document.uploadWholeStore())  // covers A's 3 sets
        try b.execute("INSERT INTO notes(id, title) VALUES ('b', 'b')")
        try await b.sync()
        let older = try #require(try await a.document.uploadWholeStore())  // covers A's 3 sets only, uploaded later
        #expect(best.coveredCount == 3 && older.coveredCount == 3)
        let c = Self.manual(try await TestClient.make(remote, name: "C", in: directory))
        let installed = try await c.document.downloadWholeStore()
        #expect(installed?.clientIdentifier == "client-A" || installed?.clientIdentifier == "client-B")

        // B re-uploads covering its own set too: now B's is strictly best. Damage it: C must skip it.
        let newest = try #require(try await b.document.uploadWholeStore())
        #expect(newest.coveredCount == 4)
        let path = b.document.relativePathToThisDocumentWholeStoreThisClientDirectoryWholeStoreFile
        var bytes = try await remote.read(path)
        bytes[bytes.count / 2] ^= 0xFF
        try await remote.write(bytes, to: path)
        let d = Self.manual(try await TestClient.make(remote, name: "D", in: directory))
        #expect(try await d.document.downloadWholeStore()?.clientIdentifier == "client-A")
        try await converge(a, b, d)
        #expect(try NotesSchema.dump(a.store) == NotesSchema.dump(d.store))
    }

    @Test("The upload policy uploads a whole store after N published change sets")
    func uploadPolicy() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let a = try await TestClient.make(remote, name: "A", in: directory)
        var policy = SyncPolicy()
        policy.wholeStoreUploadAfterChangeSets = 3
        policy.wholeStoreUploadAfterBytes = nil
        a.document.policy = policy
        var uploads = 0
        for index in 0..<7 {
            try a.execute("INSERT INTO notes(id, title) VALUES (?, 'x')", ["n\(index)"])
            if try await a.sync().uploadedWholeStore != nil { uploads += 1 }
        }
        #expect(uploads == 2)
        #expect(
            try await remote.exists(
                a.document.relativePathToThisDocumentWholeStoreThisClientDirectoryAppliedSyncChangeSetsFile))
    }
}

@Suite("Resets keep local data")
struct ResetTests {
    @Test(
        "Remote replaced by an empty folder: every client stops with a typed error and a backup; re-join converges with everyone's data",
        arguments: ["empty", "other application"])
    func remoteReplaced(replacement: String) async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let remote = FileManagerFileSystem(rootURL: root)
        let clients = [
            try await TestClient.make(remote, name: "A", in: directory),
            try await TestClient.make(remote, name: "B", in: directory),
            try await TestClient.make(remote, name: "C", in: directory),
        ]
        for (index, client) in clients.enumerated() {
            try client.execute("INSERT INTO notes(id, title) VALUES (?, ?)", ["shared-\(index)", "pushed by \(index)"])
            try await client.sync()
        }
        for client in clients { try await client.sync() }
        // Offline writes nobody has seen yet.
        for (index, client) in clients.enumerated() {
            try client.execute("INSERT INTO notes(id, title) VALUES (?, ?)", ["offline-\(index)", "unpushed \(index)"])
        }
        let before = try clients.map { try NotesSchema.dump($0.store) }

        try FileManager.default.removeItem(at: root)
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        if replacement == "other application" {
            let other = ApplicationSyncManager(remote: remote, environment: Fixture.quietEnvironment())
            try await other.register(
                .init(applicationIdentifier: "com.example.notes", clientIdentifier: "stranger", clientDescription: "x"))
            _ = try await DocumentSyncManager(
                applicationSyncManager: other,
                registering: .init(
                    documentIdentifier: "DOC", documentDescription: "someone else's",
                    helperDirectory: directory.subdirectory("stranger")),
                remoteDocumentCreationHandler: { _ in true })
        }
        if replacement == "empty" {
            // An empty folder is what an unmounted share looks like: unavailable, nothing written, no backup…
            for client in clients {
                await #expect { try await client.sync() } throws: {
                    ($0 as? FolderSyncError)?.code == .remoteUnavailable
                }
                #expect(!FileManager.default.fileExists(atPath: client.document.localLayout.backupsDirectory.path))
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: root.path).isEmpty)
            // …until the app says the remote was really replaced.
            for client in clients { client.app.remoteReplacementHandler = { _ in true } }
        }
        for (index, client) in clients.enumerated() {
            do {
                try await client.sync()
                Issue.record("client \(index) synced with a replaced remote")
            } catch let error as FolderSyncError {
                #expect(error.code == .integrityKeyMismatch, "\(error)")
                let backup = try #require(error.backupPath)
                #expect(FileManager.default.fileExists(atPath: backup))
            }
            #expect(try NotesSchema.dump(client.store) == before[index], "local data changed")
        }
        for client in clients { try await client.document.rejoin() }
        try await converge(clients[0], clients[1], clients[2])
        let final = try clients.map { try NotesSchema.dump($0.store) }
        #expect(final[0] == final[1] && final[1] == final[2])
        for index in 0..<3 {
            #expect(
                try clients[0].value("SELECT title FROM notes WHERE id = ?", ["shared-\(index)"])
                    == "pushed by \(index)")
            #expect(
                try clients[0].value("SELECT title FROM notes WHERE id = ?", ["offline-\(index)"])
                    == "unpushed \(index)")
        }
    }
}
