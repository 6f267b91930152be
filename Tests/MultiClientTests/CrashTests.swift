import Foundation
import GRDB
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// Real client processes killed with SIGKILL while staging, applying and publishing lose nothing and converge.
@Suite("Crashes", .serialized)
struct CrashTests {
    /// Two worker clients on one shared folder.
    struct Setup {
        let directory = TemporaryDirectory("crash")
        var root: URL { directory.url.appendingPathComponent("remote") }

        init() { _ = directory.subdirectory("remote") }

        func arguments(_ command: String, client: String, _ extra: [String] = []) -> [String] {
            [
                command, "--root", root.path, "--client", client, "--document", "DOC",
                "--db", directory.url.appendingPathComponent("\(client).sqlite").path,
            ] + extra
        }

        @discardableResult
        func run(_ command: String, client: String, _ extra: [String] = [], expectSuccess: Bool = true) async throws
            -> String
        {
            let result = try await ChildProcess("foldersync-test-worker", arguments(command, client: client, extra))
                .finish()
            if expectSuccess {
                #expect(result.status == 0, "\(command) \(client) \(extra): \(result.errors)")
            }
            return result.output
        }

        func items(_ client: String) throws -> [String: String] {
            let queue = try DatabaseQueue(path: directory.url.appendingPathComponent("\(client).sqlite").path)
            return try queue.read { db in
                Dictionary(
                    uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT id, value FROM items").map {
                        ($0[0], $0[1])
                    })
            }
        }

        /// Every change set a client published, with its header; fails on a temporary left behind, unless
        /// `allowingTemporaries`.
        func publishedChangeSets(_ client: String, allowingTemporaries: Bool = false) throws -> [ChangeSetHeader] {
            let layout = try RemoteLayout(applicationIdentifier: "com.example.race")
            let folder = root.appendingPathComponent(layout.syncChangesDirectory("DOC", client: client).description)
            let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
            if !allowingTemporaries {
                #expect(!names.contains { TemporaryName.isTemporary($0) }, "temporaries left in \(names)")
            }
            return try names.filter { !TemporaryName.isTemporary($0) }.map {
                try ChangeSetReader.verify(at: folder.appendingPathComponent($0), path: $0)
            }
        }
    }

    @Test(
        "A writer killed while staging, after sealing, after publishing or before its recent sync loses nothing",
        arguments: [("staging", 100), ("sealed", 0), ("published", 0), ("recent-sync", 0)])
    func writerCrash(point: String, after: Int) async throws {
        let setup = Setup()
        try await setup.run("write", client: "A", ["--count", "300", "--prefix", "a", "--value", "v1"])
        let output = try await setup.run(
            "sync", client: "A", ["--crash-at", point, "--crash-after", String(after)], expectSuccess: false)
        #expect(output.contains("crashing at \(point)"), "the crash point was not reached: \(output)")

        try await setup.run("sync", client: "A")
        try await setup.run("sync", client: "B")
        try await setup.run("sync", client: "A")
        let expected = Dictionary(uniqueKeysWithValues: (0..<300).map { ("a-\($0)", "v1") })
        #expect(try setup.items("A") == expected)
        #expect(try setup.items("B") == expected)
        // A marker that carries its sets goes out while they upload: killed as it starts, a set's upload may be half
        // done, its temporary left for doctor to clear (readers ignore such names).
        let sets = try setup.publishedChangeSets("A", allowingTemporaries: point == "recent-sync")
        #expect(sets.map(\.sequence) == Array(1...Int64(sets.count)), "sequences \(sets.map(\.sequence))")
        #expect(sets.reduce(0) { $0 + $1.changeCount } == 300, "a change was published twice or not at all")
    }

    @Test(
        "A new client killed in the middle of a whole store's page install keeps its old store, then installs the store"
    )
    func killedDuringPageInstall() async throws {
        let setup = Setup()
        try await setup.run(
            "write", client: "A", ["--count", "300", "--prefix", "a", "--value", String(repeating: "v", count: 1000)])
        #expect(try await setup.run("sync", client: "A", ["--upload-whole-store", "yes"]).contains("uploaded"))
        let path = setup.directory.url.appendingPathComponent("B.sqlite").path
        try await DatabaseQueue(path: path).write { db in
            try db.execute(
                sql:
                    "CREATE TABLE local_settings(key TEXT PRIMARY KEY, value TEXT); INSERT INTO local_settings VALUES ('theme', 'dark')"
            )
            try db.execute(sql: "PRAGMA user_version = 3")
        }
        let output = try await setup.run("sync", client: "B", ["--kill-in-page-install", "0.5"], expectSuccess: false)
        #expect(output.contains("crashing at page-install"), "the page copy was not reached: \(output)")

        // Opening the file rolls the half-copied pages back: B's store as it was, not a mix.
        let before = try await DatabaseQueue(path: path).read { db in
            [
                try String.fetchOne(db, sql: "PRAGMA integrity_check"),
                try String.fetchOne(db, sql: "SELECT CAST(count(*) AS TEXT) FROM items"),
                try String.fetchOne(db, sql: "SELECT value FROM local_settings WHERE key = 'theme'"),
                try String.fetchOne(db, sql: "SELECT CAST(user_version AS TEXT) FROM pragma_user_version"),
            ]
        }
        #expect(before == ["ok", "0", "dark", "3"])
        #expect(try await setup.run("sync", client: "B").contains("installed"))
        #expect(try setup.items("B") == setup.items("A"))
        #expect(try setup.items("B").count == 300)
        let after = try await DatabaseQueue(path: path).read { db in
            [
                try String.fetchOne(db, sql: "SELECT value FROM local_settings WHERE key = 'theme'"),
                try String.fetchOne(db, sql: "SELECT CAST(user_version AS TEXT) FROM pragma_user_version"),
            ]
        }
        #expect(after == ["dark", "3"])
        // B's writes after the install are captured and reach A.
        try await setup.run("write", client: "B", ["--count", "3", "--prefix", "b", "--value", "from B"])
        try await setup.run("sync", client: "B")
        try await setup.run("sync", client: "A")
        #expect(try setup.items("A") == setup.items("B"))
        #expect(try setup.items("A").count == 303)
    }

    @Test("A reader killed in the middle of applying a change set rolls back, then applies it whole")
    func readerCrash() async throws {
        let setup = Setup()
        try await setup.run("write", client: "A", ["--count", "300", "--prefix", "a", "--value", "v1"])
        try await setup.run("sync", client: "A")
        try await setup.run("write", client: "B", ["--count", "5", "--prefix", "b", "--value", "mine"])
        let output = try await setup.run(
            "sync", client: "B", ["--crash-at", "applying", "--crash-after", "150"], expectSuccess: false)
        #expect(output.contains("crashing at applying"))
        #expect(try setup.items("B").keys.filter { $0.hasPrefix("a-") }.isEmpty, "a half-applied change set is visible")

        try await setup.run("sync", client: "B")
        try await setup.run("sync", client: "A")
        let a = try setup.items("A")
        let b = try setup.items("B")
        #expect(a == b)
        #expect(a.count == 305)
    }

    @Test("Two processes syncing the same local document take turns: nothing is staged or published twice")
    func sameDocumentTwoProcesses() async throws {
        let setup = Setup()
        try await setup.run("write", client: "A", ["--count", "400", "--prefix", "a", "--value", "v"])
        let first = try ChildProcess("foldersync-test-worker", setup.arguments("sync", client: "A"))
        let second = try ChildProcess("foldersync-test-worker", setup.arguments("sync", client: "A"))
        for process in [first, second] {
            let result = await process.finish()
            #expect(result.status == 0, "\(result.errors)")
        }
        #expect(try setup.publishedChangeSets("A").reduce(0) { $0 + $1.changeCount } == 400)
        try await setup.run("sync", client: "B")
        #expect(try setup.items("B").count == 400)
    }
}
