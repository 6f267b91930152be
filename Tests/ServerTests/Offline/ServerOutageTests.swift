@_spi(Tooling) import FolderSync
import FolderSyncWebDAV
import Foundation
import Testing

@testable import TestSupport

/// Issue 20 with a real WebDAV server (wsgidav behind `FaultProxy`) that stops answering and comes back: local
/// reads and writes and a relaunch work throughout, each sync says `remoteUnavailable` within the request
/// timeout and makes no backup, and once the server is back every replica converges with no write lost.
@Suite("Server outage")
struct ServerOutageTests {
    private static let timeout: TimeInterval = 2

    private static func fileSystem(_ proxy: FaultProxy) throws -> WebDAVFileSystem {
        var configuration = WebDAVFileSystem.Configuration(baseURL: proxy.url)
        configuration.requestTimeout = timeout
        configuration.retryPolicy = WebDAVRetryPolicy(maximumAttempts: 2, initialDelay: .milliseconds(50))
        return try WebDAVFileSystem(configuration: configuration)
    }

    @Test(
        "A WebDAV server stopped and restarted: remoteUnavailable within the timeout, local work goes on, and replicas converge"
    )
    func serverStoppedAndRestarted() async throws {
        let directory = TemporaryDirectory()
        let proxy = try await FaultProxy(root: directory.subdirectory("share"))
        let a = try await TestClient.launch(try Self.fileSystem(proxy), name: "A", in: directory)
        let b = try await TestClient.launch(try Self.fileSystem(proxy), name: "B", in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('a1', 'before the outage')")
        try await converge(a, b)

        proxy.send("down")
        try await proxy.waitFor("down")
        try a.execute("INSERT INTO notes(id, title) VALUES ('a2', 'written while the server was down')")
        try b.execute("UPDATE notes SET title = 'edited on B while the server was down' WHERE id = 'a1'")
        for client in [a, b] {
            let start = ContinuousClock.now
            await #expect { try await client.sync() } throws: { ($0 as? FolderSyncError)?.code == .remoteUnavailable }
            // Two attempts of at most the timeout each, and the pause between them.
            #expect(ContinuousClock.now - start < .seconds(2 * Self.timeout + 2))
            #expect(client.document.resetState == nil)
            #expect(!FileManager.default.fileExists(atPath: client.document.localLayout.backupsDirectory.path))
        }
        // A relaunch while the server is down comes up from the helper folder and reads its notes.
        let relaunched = try await TestClient.launch(try Self.fileSystem(proxy), name: "A", in: directory)
        #expect(try relaunched.value("SELECT title FROM notes WHERE id = 'a2'") == "written while the server was down")
        #expect(relaunched.document.lastSynchronization.lastError?.code == .remoteUnavailable)

        proxy.send("up")
        try await proxy.waitFor("up")
        try await converge(relaunched, b)
        #expect(try b.value("SELECT title FROM notes WHERE id = 'a2'") == "written while the server was down")
        #expect(
            try relaunched.value("SELECT title FROM notes WHERE id = 'a1'") == "edited on B while the server was down")
        #expect(try NotesSchema.dump(relaunched.store) == NotesSchema.dump(b.store))
        _ = await proxy.stop()
    }
}
