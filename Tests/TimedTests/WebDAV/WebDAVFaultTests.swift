@_spi(Tooling) import FolderSync
import FolderSyncWebDAV
import Foundation
import GRDB
import Testing

@testable import TestSupport

/// Faults against a real WebDAV server (wsgidav, started by the test behind `FaultProxy`): the server killed
/// in the middle of an upload and restarted; a proxy answering 503 with Retry-After, dropping connections,
/// tearing uploads and delaying answers. Syncs resume and converge, and no published file is half-written.
@Suite("WebDAV faults")
struct WebDAVFaultTests {
    private static func fileSystem(_ proxy: FaultProxy) throws -> WebDAVFileSystem {
        var configuration = WebDAVFileSystem.Configuration(baseURL: proxy.url)
        configuration.requestTimeout = 10
        configuration.retryPolicy = WebDAVRetryPolicy(maximumAttempts: 3, initialDelay: .milliseconds(50))
        return try WebDAVFileSystem(configuration: configuration)
    }

    @Test(
        "The server killed in the middle of an upload and restarted: the sync resumes, nothing half-written is published"
    )
    func serverKilledMidUpload() async throws {
        let directory = TemporaryDirectory()
        let share = directory.subdirectory("share")
        let proxy = try await FaultProxy(root: share, hold: ".syncchg")
        let remote = try Self.fileSystem(proxy)
        let (a, b) = try await TestClient.pair(remote, in: directory)
        // One transaction of 2,000 rows: a change set of a few hundred kilobytes, so the upload can be caught half-way.
        try a.execute(
            """
            WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 1999)
            INSERT INTO notes(id, title, body) SELECT 'n' || i, 'note ' || i, printf('%040d', i * 7919) FROM n
            """)

        let sync = Task { try await a.sync() }
        let held = try await proxy.waitFor("midupload ")
        proxy.send("kill")
        try await proxy.waitFor("killed")
        proxy.send("restart")
        try await proxy.waitFor("ready")
        proxy.send("continue")
        let first = await sync.result
        print(
            "sync with the server killed under its upload (\(held)): \(first.map { "sent \($0.changeSetsSent) sets" })")

        try await converge(a, b)
        #expect(try b.value("SELECT count(*) FROM notes") == "2000")
        #expect(try NotesSchema.dump(a.store) == (try NotesSchema.dump(b.store)))
        let log = await proxy.stop()
        #expect(log.contains { $0.hasPrefix("held-upload PUT") }, "the upload was not held: \(log.prefix(5))")
        try Self.expectNothingHalfWritten(in: share)
    }

    @Test("Through a proxy that answers 503, drops connections, tears uploads and delays, syncs resume and converge")
    func faultyProxy() async throws {
        let directory = TemporaryDirectory()
        let share = directory.subdirectory("share")
        let proxy = try await FaultProxy(root: share, seed: 20_261_122)
        let remote = try Self.fileSystem(proxy)
        let a = try await TestClient.make(remote, name: "A", in: directory)
        let b = try await TestClient.make(remote, name: "B", in: directory)
        let c = try await TestClient.make(remote, name: "C", in: directory)
        proxy.send("storm")
        try await proxy.waitFor("storm")
        var outcomes: [String: Int] = [:]
        for round in 0..<4 {
            for (name, client) in [("A", a), ("B", b), ("C", c)] {
                try client.execute(
                    "INSERT INTO notes(id, title) VALUES (?, ?)", ["\(name)-\(round)", "round \(round) of \(name)"])
                try client.execute("UPDATE notes SET body = ? WHERE id = 'shared' OR id LIKE ?", ["by \(name)", "%-0"])
                do {
                    try await client.sync()
                    outcomes["synced", default: 0] += 1
                } catch let error as FolderSyncError {
                    outcomes[String(describing: error.code), default: 0] += 1
                }
            }
        }
        proxy.send("calm")
        try await proxy.waitFor("calm")
        try await converge(a, b, c)

        let rows = try NotesSchema.dump(a.store)
        #expect(rows == (try NotesSchema.dump(b.store)))
        #expect(rows == (try NotesSchema.dump(c.store)))
        #expect(try c.value("SELECT count(*) FROM notes") == "12", "every committed insert reached every replica")
        let log = await proxy.stop()
        let kinds = ["forward", "503", "drop-before", "drop-after", "delay", "torn-upload"]
        var faults: [String: Int] = [:]
        for line in log {
            if let kind = kinds.first(where: { line.hasPrefix($0 + " ") }) { faults[kind, default: 0] += 1 }
        }
        print(
            "faulty proxy: \(log.count) requests, faults \(faults), sync outcomes during the storm \(outcomes), "
                + "\(remote.statistics.retries) retries")
        for kind in kinds.dropFirst() {
            #expect(faults[kind, default: 0] > 0, "the proxy never injected \(kind): \(faults)")
        }
        try Self.expectNothingHalfWritten(in: share)
    }

    /// Every change set and marker under its final name in the server's folder is whole (temporaries may be torn).
    private static func expectNothingHalfWritten(in share: URL) throws {
        var checked = 0
        let files =
            FileManager.default.enumerator(at: share, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
        for file in files where !TemporaryName.isTemporary(file.lastPathComponent) {
            switch file.pathExtension {
            case "syncchg":
                _ = try ChangeSetReader.verify(at: file, path: file.path)
                checked += 1
            case "recentsync":
                _ = try PropertyListFile.decode(RecentSync.self, from: try Data(contentsOf: file), path: file.path)
                checked += 1
            default:
                continue
            }
        }
        #expect(checked > 0, "no published file found under \(share.path)")
    }
}
