@_spi(Tooling) import FolderSync
import FolderSyncTesting
import Foundation
import GRDB
import TestProcesses
import Testing

@testable import TestSupport

/// What `notes` says and does in the small situations of issue 38, item 13, through the built binary: status
/// without a shared folder, a mistyped database, password files and password changes, a full disk, a declined mass
/// deletion, and a re-join after the device was deleted.
@Suite("notes messages", .serialized)
struct NotesMessageTests {
    typealias Device = NotesToolTests.Device

    /// `notes ARGUMENTS`, exactly as given (no `--db` or `--remote` added).
    private static func notes(_ arguments: [String]) async throws -> Subprocess.Result {
        try await Subprocess.start(buildProductsDirectory.appendingPathComponent("notes").path, arguments).finished()
    }

    private static func oneLine(_ errors: String) -> Bool {
        errors.trimmingCharacters(in: .newlines).split(separator: "\n").count == 1
    }

    @Test("notes status needs no --remote and never touches the shared folder, there or away")
    func statusWithoutRemote() async throws {
        let directory = TemporaryDirectory()
        let device = NotesToolTests.devices(["a"], in: directory)[0]
        try await device.succeed(["add", "x"])
        try await device.succeed(["sync"])
        try await device.succeed(["add", "y"])
        for remote in [
            [], ["--remote", directory.url.appendingPathComponent("nowhere").path],
            ["--remote", "http://127.0.0.1:1/dav/"],
        ] {
            let result = try await Self.notes(["--db", device.database.path] + remote + ["status"])
            #expect(result.status == 0, "\(remote): \(result.errors)")
            #expect(
                result.output.contains("registered\n") && result.output.contains("notes wait to be published"),
                "\(result.output)")
        }
        let shared = treeListing(of: device.remote)
        try FileManager.default.moveItem(at: device.remote, to: directory.url.appendingPathComponent("moved"))
        let away = try await Self.notes([
            "--db", device.database.path, "--remote", device.remote.path, "status", "--json",
        ])
        #expect(away.status == 0 && away.output.contains("\"registered\" : true"), "\(away.errors)")
        #expect(!FileManager.default.fileExists(atPath: device.remote.path), "status created the shared folder")
        #expect(treeListing(of: directory.url.appendingPathComponent("moved")) == shared)
    }

    @Test(
        "A mistyped --db is said, not made into an empty database, by every command but add and sync",
        arguments: [
            ["list"], ["status"], ["edit", "n1", "x"], ["tag", "n1", "t"], ["delete", "n1"], ["rejoin"],
        ])
    func mistypedDatabase(_ command: [String]) async throws {
        let directory = TemporaryDirectory()
        let typo = directory.url.appendingPathComponent("notse.sqlite")
        let result = try await Self.notes(
            ["--db", typo.path, "--remote", directory.subdirectory("shared").path] + command)
        #expect(result.status == 1)
        #expect(
            Self.oneLine(result.errors) && result.errors.contains("no notes database at \(typo.path)"),
            "\(result.errors)")
        #expect(!FileManager.default.fileExists(atPath: typo.path), "\(command) created the database")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["shared"])
    }

    @Test(
        "A CRLF password file opens the folder; an empty password is refused before anything is written into the share")
    func passwordFiles() async throws {
        let directory = TemporaryDirectory()
        let devices = NotesToolTests.devices(["a", "b"], in: directory)
        let unix = directory.url.appendingPathComponent("unix")
        let windows = directory.url.appendingPathComponent("windows")
        let empty = directory.url.appendingPathComponent("empty")
        try Data("pass phrase\n".utf8).write(to: unix)
        try Data("pass phrase\r\n".utf8).write(to: windows)
        try Data("\r\n".utf8).write(to: empty)

        let refused = try await devices[0].run(["--password-file", empty.path, "sync"])
        #expect(
            refused.status == 1 && Self.oneLine(refused.errors) && refused.errors.contains("empty"), "\(refused.errors)"
        )
        #expect(
            treeListing(of: devices[0].remote).isEmpty, "written into the share: \(treeListing(of: devices[0].remote))")

        try await devices[0].succeed(["--password-file", unix.path, "add", "Meet Zed at noon"])
        try await devices[0].succeed(["--password-file", unix.path, "sync"])
        try await devices[1].succeed(["--password-file", windows.path, "sync"])
        #expect(try await devices[1].succeed(["list"]).contains("Meet Zed at noon"))
    }

    @Test(
        "notes change-password: this device syncs on; another is told that the password changed until it gives the new one"
    )
    func changePassword() async throws {
        let directory = TemporaryDirectory()
        let devices = NotesToolTests.devices(["a", "b", "c"], in: directory)
        let (a, b, c) = (devices[0], devices[1], devices[2])
        let old = directory.url.appendingPathComponent("old")
        let new = directory.url.appendingPathComponent("new")
        try Data("old secret\n".utf8).write(to: old)
        try Data("new secret\n".utf8).write(to: new)
        try await a.succeed(["--password-file", old.path, "add", "before"])
        try await a.succeed(["--password-file", old.path, "sync"])
        try await b.succeed(["--password-file", old.path, "sync"])

        let wrong = try await a.run(["--password-file", new.path, "change-password", "--new-password-file", old.path])
        #expect(wrong.status == 1 && wrong.errors.contains("wrongPassword"), "\(wrong.errors)")
        let changed = try await a.succeed([
            "--password-file", old.path, "change-password", "--new-password-file", new.path,
        ])
        #expect(changed.contains("changed the password"), "\(changed)")
        try await a.succeed(["add", "after"])
        try await a.succeed(["sync"])

        for given in [[], ["--password-file", old.path]] {
            let told = try await b.run(given + ["sync"])
            #expect(told.status == 1 && Self.oneLine(told.errors), "\(given): \(told.errors)")
            #expect(
                told.errors.contains("password") && told.errors.contains("changed")
                    && !told.errors.contains("registrationCancelled")
                    && !told.errors.contains("gave no password"), "\(given): \(told.errors)")
        }
        try await b.succeed(["--password-file", new.path, "sync"])
        #expect(try await b.succeed(["list"]).contains("after"))
        let newcomer = try await c.run(["--password-file", old.path, "sync"])
        #expect(newcomer.status == 1 && newcomer.errors.contains("wrongPassword"), "\(newcomer.errors)")
        try await c.succeed(["--password-file", new.path, "sync"])
        #expect(try await c.succeed(["list"]).contains("before"))
    }

    /// Fills the disk of `folder` (a small tmpfs) to the last byte; returns the filler file.
    private static func fill(_ folder: URL) throws -> URL {
        let filler = folder.appendingPathComponent("filler")
        let descriptor = open(filler.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let chunk = [UInt8](repeating: 0, count: 4096)
        while chunk.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) > 0 {}
        return filler
    }

    @Test(
        "A full disk is localStoreFull naming the database, in one line; with space again the next write goes through")
    func fullDisk() async throws {
        let directory = TemporaryDirectory()
        let small = directory.subdirectory("small")
        guard try LocalDiskFaultTests.mountTmpfs(small, size: "2m") else { return }
        defer { _ = try? Subprocess.run("/bin/umount", [small.path]) }
        let device = Device(
            database: small.appendingPathComponent("notes.sqlite"), remote: directory.subdirectory("shared"))
        try await device.succeed(["add", "before the disk filled"])
        let filler = try Self.fill(small)
        let full = try await device.run(["add", String(repeating: "a long note ", count: 2_000)])
        #expect(full.status == 1 && Self.oneLine(full.errors), "\(full.errors)")
        #expect(
            full.errors.hasPrefix("notes: localStoreFull: ") && full.errors.contains(device.database.path)
                && !full.errors.contains("SQLite error") && !full.errors.contains("INSERT"), "\(full.errors)")
        try FileManager.default.removeItem(at: filler)
        #expect(try await device.succeed(["list"]).split(separator: "\n").count == 1)
        try await device.succeed(["add", "after"])
        #expect(try await device.succeed(["list"]).split(separator: "\n").count == 2)
    }

    @Test(
        "After this device was deleted and re-joined, the re-join says nothing of a marker restored from an older copy")
    func rejoinAfterDeletion() async throws {
        let directory = TemporaryDirectory()
        let devices = NotesToolTests.devices(["a", "b"], in: directory)
        let (a, b) = (devices[0], devices[1])
        try await a.succeed(["add", "a1"])
        try await a.succeed(["sync"])
        try await b.succeed(["sync"])
        let queue = try DatabaseQueue(path: a.database.path)
        let identifier = try await queue.read {
            try String.fetchOne($0, sql: "SELECT value FROM settings WHERE key = 'client'")
        }
        let client = try #require(identifier)
        let deleted = try await FoldersyncTool.run([
            "clients", "delete", client, "--remote", a.remote.path, "--document", "notes", "--yes",
        ])
        #expect(deleted.status == 0, "\(deleted.errors)")
        try await a.succeed(["add", "a2"])
        let stopped = try await a.run(["sync"])
        #expect(stopped.status == 1 && stopped.errors.contains("clientDeleted"), "\(stopped.errors)")

        let rejoined = try await a.succeed(["rejoin"])
        #expect(!rejoined.contains("staleRecentSync") && !rejoined.contains("older copy"), "\(rejoined)")
        let again = try await a.succeed(["sync"])
        #expect(!again.contains("warning"), "\(again)")
        try await b.succeed(["sync"])
        #expect(try await b.succeed(["list"]).contains("a2"))
    }

    @Test("foldersync lists a client whose clock is ahead as ahead, not as synced (0s ago)")
    func futureSync() async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("shared"))
        var ahead = Fixture.quietEnvironment()
        ahead.now = { Date().addingTimeInterval(400 * 86_400) }
        let fast = try await TestClient.make(remote, name: "fast", in: directory, document: "notes", environment: ahead)
        try fast.execute("INSERT INTO notes(id, title) VALUES ('n1', 'from the future')")
        try await fast.sync()
        let listed = try await FoldersyncTool.run([
            "clients", "list", "--remote", directory.url.appendingPathComponent("shared").path,
        ])
        #expect(listed.status == 0, "\(listed.errors)")
        let line = try #require(listed.output.split(separator: "\n").first { $0.contains("client-fast") })
        #expect(line.contains("d ahead of this computer's clock)") && !line.contains("ago"), "\(line)")
    }

    @Test("Every DURATION example that foldersync vacuum --help gives is accepted")
    func vacuumHelpExamples() async throws {
        let help = try await FoldersyncTool.run(["vacuum", "--help"])
        let sentence = help.output.replacingOccurrences(of: "\n", with: " ")
        let examples = try #require(sentence.components(separatedBy: "as in ").last?.components(separatedBy: ".").first)
            .components(separatedBy: CharacterSet(charactersIn: ", ")).filter { !$0.isEmpty && $0 != "or" }
        #expect(examples.count >= 2, "\(sentence)")
        let directory = TemporaryDirectory()
        for example in examples {
            let result = try await FoldersyncTool.run([
                "vacuum", "--remote", directory.url.path, "--dry-run", "--expire-clients-after", example,
            ])
            #expect(
                !result.errors.contains("not a duration") && !result.errors.contains("too short"),
                "\(example): \(result.errors)")
        }
        let refused = try await FoldersyncTool.run([
            "vacuum", "--remote", directory.url.path, "--expire-clients-after", "12h",
        ])
        #expect(refused.status == 2 && refused.errors.contains("too short"), "\(refused.errors)")
    }
}
