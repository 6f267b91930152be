import Foundation
import GRDB
import Testing

@_spi(Tooling) @_spi(ModelAdapter) @testable import FolderSync
@testable import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Issue 38, item 1, as users meet it: a device's store copied to a second computer (with its helper folder, or
/// alone) and used beside the first. Both installations share one client identity; when they sync at about the
/// same time, both publish a change set under one number. Driven through real processes: the test worker (which can
/// pause exactly between staging and publishing) and the `notes` app.
@Suite("A shared client identity through real processes", .serialized)
struct SharedIdentityProcessTests {
    /// Worker clients on one shared folder; the clone of a client is its store and helper folder copied to other files.
    struct Setup {
        let directory = TemporaryDirectory("shared-identity")
        var root: URL { directory.url.appendingPathComponent("remote") }

        init() { _ = directory.subdirectory("remote") }

        func database(_ device: String) -> URL { directory.url.appendingPathComponent("\(device).sqlite") }

        /// `device` runs as client `client`, with its own store and helper folder.
        func arguments(_ command: String, device: String, client: String, _ extra: [String] = []) -> [String] {
            [
                command, "--root", root.path, "--client", client, "--document", "DOC", "--db", database(device).path,
                "--helper", database(device).path + ".helper",
            ] + extra
        }

        func run(_ command: String, device: String, client: String, _ extra: [String] = []) async throws -> (
            status: Int32, output: String, errors: String
        ) {
            try await ChildProcess("foldersync-test-worker", arguments(command, device: device, client: client, extra))
                .finish()
        }

        @discardableResult
        func succeed(_ command: String, device: String, client: String, _ extra: [String] = []) async throws -> String {
            let result = try await run(command, device: device, client: client, extra)
            #expect(result.status == 0, "\(command) \(device) as \(client) \(extra): \(result.errors)")
            return result.output
        }

        func write(_ device: String, client: String, _ prefix: String) async throws {
            try await succeed(
                "write", device: device, client: client,
                ["--prefix", prefix, "--count", "1", "--value", "by \(device)"])
        }

        /// Copies `device`'s store and helper folder to `copy`, as moving to a new laptop (or a backup put on a second
        /// computer) does.
        func copy(_ device: String, to copy: String) throws {
            try FileManager.default.copyItem(at: database(device), to: database(copy))
            try FileManager.default.copyItem(
                atPath: database(device).path + ".helper", toPath: database(copy).path + ".helper")
        }

        func items(_ device: String) throws -> [String] {
            let queue = try DatabaseQueue(path: database(device).path)
            defer { try? queue.close() }
            return try queue.read { db in try String.fetchAll(db, sql: "SELECT id FROM items ORDER BY id") }
        }

        /// The names in `client`'s change-set folder.
        func changeSets(_ client: String) throws -> [String] {
            let folder = root.appendingPathComponent("com.example.race/Documents/DOC/SyncChanges/\(client)")
            return try FileManager.default.contentsOfDirectory(atPath: folder.path).filter {
                !TemporaryName.isTemporary($0)
            }.sorted()
        }
    }

    /// Runs `paused` until it stands at `point` (it says so through a named pipe), runs `meanwhile`, then lets it go
    /// on.
    static func pausing(
        _ setup: Setup, device: String, client: String, at point: String,
        meanwhile: () async throws -> Void
    ) async throws -> (status: Int32, output: String, errors: String) {
        let fifo = setup.directory.url.appendingPathComponent("pause-\(device)").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let paused = try ChildProcess(
            "foldersync-test-worker",
            setup.arguments("sync", device: device, client: client, ["--pause-at", point, "--pause-fifo", fifo]))
        // Opening the pipe returns once the worker opened it at the point; its line says where it stands.
        let line = await Task.detached { () -> String in
            let handle = FileHandle(forReadingAtPath: fifo)
            defer { try? handle?.close() }
            return String(decoding: handle?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
        }.value
        #expect(line == "paused at \(point)\n")
        try await meanwhile()
        paused.send("go")
        return await paused.finish()
    }

    @Test(
        "Two installations of one client publish two sets under one number: every reader applies both, the first to read the other's marker stops with clientIdentityShared, re-joins as a new client, and every device converges"
    )
    func concurrentPublishing() async throws {
        let setup = Setup()
        try await setup.write("laptop", client: "X", "x0")
        try await setup.succeed("sync", device: "laptop", client: "X")
        try await setup.succeed("sync", device: "reader", client: "R")
        try setup.copy("laptop", to: "new-laptop")

        try await setup.write("laptop", client: "X", "old")
        try await setup.write("new-laptop", client: "X", "new")
        // The new laptop stands between staging its set and publishing it while the old one syncs: both number it 2.
        let second = try await Self.pausing(setup, device: "new-laptop", client: "X", at: "staging") {
            try await setup.succeed("sync", device: "laptop", client: "X")
        }
        #expect(second.status == 0, "\(second.errors)")
        let numbers = try setup.changeSets("X").map { $0.prefix(12) }
        #expect(numbers.filter { $0 == "000000000002" }.count == 2, "\(numbers)")

        try await setup.succeed("sync", device: "reader", client: "R")
        #expect(try setup.items("reader") == ["new-0", "old-0", "x0-0"], "the reader applied one set of the pair")

        // The old laptop reads back the marker the new one wrote after its own: it stops, and re-joins as a new client.
        let stopped = try await setup.run("sync", device: "laptop", client: "X")
        #expect(stopped.status == 1 && stopped.errors.contains("clientIdentityShared"), "\(stopped.errors)")
        let kept = setup.directory.url.appendingPathComponent("laptop-client").path
        let rejoined = try await setup.succeed("rejoin", device: "laptop", client: "X", ["--new-client-file", kept])
        let newClient = try String(contentsOfFile: kept, encoding: .utf8)
        #expect(newClient != "X" && rejoined.contains("rejoined as \(newClient)"), "\(rejoined)")

        try await setup.succeed("sync", device: "new-laptop", client: "X")
        try await setup.succeed("sync", device: "reader", client: "R")
        try await setup.succeed("sync", device: "laptop", client: newClient)
        try await setup.succeed("sync", device: "late", client: "L")
        for (device, client) in [("laptop", newClient), ("new-laptop", "X"), ("reader", "R"), ("late", "L")] {
            try await setup.succeed("sync", device: device, client: client)
            #expect(try setup.items(device) == ["new-0", "old-0", "x0-0"], "\(device)")
        }
        let verdict = try await FoldersyncTool.run(["doctor", "--remote", setup.root.path, "--json"])
        #expect(
            verdict.status == 0 && verdict.output.contains("\"healthy\" : true")
                && verdict.output.contains("duplicateSequence"),
            "\(verdict.output)")
    }

    @Test(
        "A notes database copied to a second computer (with its helper folder, or alone) and used beside the first: the old device says another device syncs as it, re-joins as a new device, and every note reaches every device",
        arguments: [true, false])
    func notesCopiedToSecondComputer(withHelperFolder: Bool) async throws {
        typealias Device = NotesProcessTests.Device
        let directory = TemporaryDirectory()
        let devices = NotesProcessTests.devices(3, in: directory)
        let (laptop, phone, late) = (devices[0], devices[1], devices[2])
        let newLaptop = Device(
            name: "new laptop", database: directory.url.appendingPathComponent("copy.sqlite"), remote: laptop.remote)
        _ = try await laptop.succeed(["add", "written before the copy"])
        _ = try await laptop.succeed(["sync"])
        _ = try await phone.succeed(["sync"])
        try FileManager.default.copyItem(at: laptop.database, to: newLaptop.database)
        if withHelperFolder {
            try FileManager.default.copyItem(
                atPath: laptop.database.path + ".foldersync", toPath: newLaptop.database.path + ".foldersync")
        }

        _ = try await newLaptop.succeed(["add", "written on the new laptop"])
        _ = try await newLaptop.succeed(["sync"])
        _ = try await laptop.succeed(["add", "written on the old laptop"])
        let stopped = try await laptop.run(["sync"])
        #expect(
            stopped.status == 1 && stopped.errors.contains("clientIdentityShared")
                && stopped.errors.contains("another device syncs as this client"),
            "\(stopped.errors)")
        let status = try await laptop.succeed(["status"])
        #expect(status.contains("stopped: clientIdentityShared") && status.contains("notes rejoin"), "\(status)")
        let rejoined = try await laptop.succeed(["rejoin"])
        #expect(rejoined.contains("this device now syncs as a new client"), "\(rejoined)")

        for device in [newLaptop, phone, laptop, late, newLaptop, phone] { _ = try await device.succeed(["sync"]) }
        struct Note: Decodable { var text: String }
        let expected = ["written before the copy", "written on the new laptop", "written on the old laptop"]
        for device in [laptop, newLaptop, phone, late] {
            let notes = try JSONDecoder().decode([Note].self, from: Data(try await device.list().utf8)).map(\.text)
                .sorted()
            #expect(notes == expected, "\(device.name)")
        }
        let verdict = try await FoldersyncTool.run(["doctor", "--remote", laptop.remote.path])
        #expect(verdict.status == 0 && verdict.output.contains("Healthy"), "\(verdict.output)")
    }
}

/// The same in one process, where the order of every step is the test's: what a reader that never saw one
/// installation's marker does.
@Suite("A shared client identity, step by step")
struct SharedIdentityTests {
    @Test(
        "A set (a delete) the copy published under a number the old computer's marker hid is applied everywhere once the copy re-joins under a new identity that names the one it left: by the reader, by the old computer that keeps the identity, and by the copy itself"
    )
    func hiddenSetAppliedAfterRejoin() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        // One second for every step: both installations sync "at about the same time", so the one that reads back the
        // other's marker (written after its own, dated the same second) is the copy, whichever second the test runs in.
        var environment = Fixture.quietEnvironment()
        let now = Date()
        environment.now = { now }
        func make(_ remote: any RemoteFileSystem, _ name: String, _ client: String? = "client-X") async throws
            -> TestClient
        {
            try await TestClient.make(
                remote, name: name, in: directory, environment: environment, clientIdentifier: client)
        }
        let a = try await make(FileManagerFileSystem(rootURL: root), "A")
        let reader = try await make(FileManagerFileSystem(rootURL: root), "R", nil)
        try a.execute("INSERT INTO notes(id, title) VALUES ('x0', 'before the copy')")
        try await a.sync()
        try await reader.sync()
        // The copy: the store (a consistent backup) and the helper folder, in another folder, as on a second computer.
        let copy = directory.subdirectory("C")
        try a.store.backup(to: copy.appendingPathComponent("notes.sqlite"))
        try FileManager.default.copyItem(
            at: directory.url.appendingPathComponent("A/helper"), to: copy.appendingPathComponent("helper"))
        let c = try await make(FileManagerFileSystem(rootURL: root), "C")
        c.app.clientIdentifierChangeHandler = { _ in }
        // The old computer stages its set 2 and is held before publishing it; meanwhile the copy publishes its own set
        // 2.
        let held = DoctorInFlightTests.HeldUploads(FileManagerFileSystem(rootURL: root)) { request, path in
            [.write, .upload, .move].contains(request)
                && (path.contains("/SyncChanges/client-X/") || path.contains("/RecentSyncs/client-X."))
        }
        let original = try await make(held, "A")
        try original.execute("INSERT INTO notes(id, title) VALUES ('old', 'on the old computer')")
        try c.execute("INSERT INTO notes(id, title) VALUES ('new', 'on the new computer')")
        try c.execute("DELETE FROM notes WHERE id = 'x0'")
        let publishing = Task { try await original.sync() }
        await held.waitForHeld()
        try await c.sync()
        held.release()
        _ = try await publishing.value
        let numbers = try FileManager.default.contentsOfDirectory(
            atPath: root.appendingPathComponent("com.example.notes/Documents/DOC/SyncChanges/client-X").path
        ).map { $0.prefix(12) }
        #expect(numbers.filter { $0 == "000000000002" }.count == 2, "\(numbers)")
        // The reader reads the old computer's marker, which names only its own set 2: the copy's (a note and the
        // deletion of x0) is hidden.
        try await reader.sync()
        #expect(try reader.value("SELECT count(*) FROM notes WHERE id = 'new'") == "0")

        // The copy reads back the marker the old computer wrote after its own, and re-joins as a new client.
        await #expect { try await c.sync() } throws: { ($0 as? FolderSyncError)?.code == .clientIdentityShared }
        try await c.document.rejoin()
        #expect(c.document.clientIdentifier.hasPrefix("client-X-"))
        try await reader.sync()
        let identifiers = try #require(try reader.store.appliedChangeSetIdentifiers(of: "client-X", sequences: [2])?[2])
        #expect(identifiers.count == 2, "the reader applied \(identifiers) under client-X's number 2")
        try await converge(original, c, reader)
        for client in [original, c, reader] {
            let notes = try client.value("SELECT group_concat(id) FROM (SELECT id FROM notes ORDER BY id)")
            #expect(notes == "new,old", "\(client.document.clientIdentifier)")
        }
    }
}
