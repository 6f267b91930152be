import Foundation
import TestProcesses
import Testing

@testable import TestSupport

/// Defects found from outside (issue 38, items 3, 4 and 8), as users and operators met them: a whole store damaged
/// in place after a vacuum verified it, a client deleted after another device's join failed, clocks days apart.
/// Driven through the `notes` and `foldersync` binaries, one process per command, with `faketime` for the clocks.
@Suite("Vacuum, deletion and expiry through real processes", .serialized)
struct VacuumProcessTests {
    typealias Device = NotesProcessTests.Device

    // MARK: Item 3

    @Test(
        "A whole store damaged in place after a vacuum verified it: the next vacuum reads it again and keeps the change sets, doctor says what will happen, its uploader replaces it within a day, and new devices get every note"
    )
    func damagedInPlaceAfterVerification() async throws {
        let directory = TemporaryDirectory()
        let devices = NotesProcessTests.devices(4, in: directory)
        let (a, b, newcomer, late) = (devices[0], devices[1], devices[2], devices[3])
        _ = try await b.succeed(["sync"])
        try await addAndSync(a, count: 50)  // the 50th set brings A's whole store; B holds its sets back
        let store = try onlyWholeStore(in: a.remote)
        let first = try await vacuum(a.remote)
        #expect(first.wholeStores.verified == 1 && first.removed.isEmpty, "\(first)")

        try flipByteInPlace(store)
        _ = try await b.succeed(["add", "b1"])
        _ = try await b.succeed(["sync"])  // applies A's 50 sets and acknowledges them with its own set
        let second = try await vacuum(a.remote)
        #expect(
            second.removed.filter { $0.reason == "changeSet" }.isEmpty,
            "removed \(second.removed.count) items on the word of a store damaged in place: \(second.removed.map(\.path))"
        )
        #expect(second.wholeStores.damaged.map(\.path) == [relative(store, to: a.remote)], "\(second.wholeStores)")
        let doctor = try await FoldersyncTool.run(["doctor", "--remote", a.remote.path])
        #expect(
            doctor.output.contains("uploads a new one at its first sync once it has read the store through"),
            "\(doctor.output)")

        _ = try await newcomer.succeed(["sync"])
        #expect(try await texts(newcomer).count == 51)

        // A day later by A's clock, its sync reads its store through, finds it changed and uploads a new one.
        let healing = try await a.run(["sync", "--json"], clock: "+25h")
        #expect(healing.status == 0 && healing.output.contains("wholeStoreUnusable"), "\(healing)")
        #expect(try await vacuum(a.remote).wholeStores.damaged.isEmpty)
        _ = try await late.succeed(["sync"])
        #expect(try await texts(late).count == 51)
        let verdict = try await FoldersyncTool.run(["doctor", "--remote", a.remote.path])
        #expect(verdict.output.contains("Healthy"), "\(verdict.output)")
    }

    // MARK: Item 4

    @Test(
        "A client deleted after another device's join met its damaged store: the joiner heals from the removed area and uploads a store holding every note, the deleted client's store is moved aside, and a new device gets every note"
    )
    func deletionAfterFailedJoin() async throws {
        let directory = TemporaryDirectory()
        let devices = NotesProcessTests.devices(3, in: directory)
        let (a, joiner, late) = (devices[0], devices[1], devices[2])
        try await addAndSync(a, count: 50)  // A alone: the vacuum after its whole store removes its 50 sets
        let aClient = try onlyWholeStore(in: a.remote).deletingLastPathComponent().lastPathComponent
        #expect(try changeSets(of: aClient, in: a.remote).isEmpty)

        let store = try onlyWholeStore(in: a.remote)
        let intact = try Data(contentsOf: store)
        try flipByteInPlace(store)
        let joined = try await joiner.succeed(["sync", "--json"])
        #expect(joined.contains("wholeStoreUnusable"), "\(joined)")
        #expect(try wholeStores(in: a.remote).count == 2, "the joiner owed a store of its own and uploaded it")
        try overwriteInPlace(store, with: intact)  // the failure was passing (a flaky read, a disk fixed)

        let deletion = try await FoldersyncTool.run([
            "clients", "delete", aClient, "--remote", a.remote.path, "--document", "notes",
            "--yes", "--json",
        ])
        #expect(deletion.status == 0, "\(deletion.errors)")
        // The join healed from the removed area (issue 39): the joiner's store holds every set of A's that the vacuum
        // moved there, so A's store is no longer the only one and goes too, into the removed area.
        #expect(joined.contains("recoveredFromRemoved"), "\(joined)")
        #expect(
            deletion.output.contains("WholeStore/\(aClient)") && deletion.output.contains("\"removalFolder\""),
            "\(deletion.output)")
        _ = try await late.succeed(["sync"])
        #expect(try await texts(late).count == 50)
        let verdict = try await FoldersyncTool.run(["doctor", "--remote", a.remote.path])
        #expect(verdict.output.contains("Healthy"), "\(verdict.output)")
    }

    // MARK: Item 8

    @Test(
        "Devices whose clocks are days slow or fast are judged by the folder's clock: none is expired right after it synced, and each is listed as the folder saw it"
    )
    func deviceClocksDaysOff() async throws {
        let directory = TemporaryDirectory()
        let devices = NotesProcessTests.devices(3, in: directory)
        let (a, slow, fast) = (devices[0], devices[1], devices[2])
        _ = try await a.succeed(["add", "a1"])
        _ = try await a.succeed(["sync"])
        #expect(try await slow.run(["sync"], clock: "-3d").status == 0)
        #expect(try await fast.run(["sync"], clock: "+400d").status == 0)

        let report = try await vacuum(a.remote, ["--expire-clients-after", "2d"])
        #expect(report.expiredClients.isEmpty, "expired \(report.expiredClients) seconds after they synced")
        struct Listing: Decodable {
            struct Document: Decodable { var clients: [Client] }
            struct Client: Decodable {
                var lastSync: Date?
                var lastSeen: Date?
            }
            var documents: [Document]
        }
        let listed = try await FoldersyncTool.run(["clients", "list", "--remote", a.remote.path, "--json"])
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let clients = try decoder.decode(Listing.self, from: Data(listed.output.utf8)).documents.flatMap(\.clients)
        #expect(clients.count == 3)
        for client in clients {
            let seen = try #require(client.lastSeen)
            #expect(abs(seen.timeIntervalSinceNow) < 600, "listed as seen at \(seen), by a device's clock")
        }
    }

    @Test(
        "An operator whose clock is two days ahead expires nobody who syncs and no temporary just written, and is told the clocks differ"
    )
    func operatorClockAhead() async throws {
        let directory = TemporaryDirectory()
        let devices = NotesProcessTests.devices(2, in: directory)
        for device in devices {
            _ = try await device.succeed(["add", "from \(device.name)"])
            _ = try await device.succeed(["sync"])
        }
        let folder = try FileManager.default.contentsOfDirectory(
            at: documentFolder(devices[0].remote).appendingPathComponent("SyncChanges"),
            includingPropertiesForKeys: nil)[0]
        let temporary = folder.appendingPathComponent(".foldersync-tmp-0123456789abcdef-000000000002-X.syncchg")
        try Data("being written".utf8).write(to: temporary)

        let result = try await Self.run(
            "foldersync", ["vacuum", "--remote", devices[0].remote.path, "--expire-clients-after", "1d"],
            clock: "+2d")
        #expect(result.status == 0, "\(result.errors)")
        #expect(!result.output.contains("expired client"), "\(result.output)")
        #expect(result.output.contains("this computer's clock is 2d ahead of the shared folder's"), "\(result.output)")
        #expect(
            FileManager.default.fileExists(atPath: temporary.path),
            "a temporary written a moment ago was removed as stale")
        for device in devices { _ = try await device.succeed(["sync"]) }
    }

    @Test(
        "Clients the folder saw silent for longer than the expiry are expired, but never every client of the document")
    func neverEveryClient() async throws {
        let directory = TemporaryDirectory()
        let devices = NotesProcessTests.devices(3, in: directory)
        for device in devices {
            _ = try await device.succeed(["add", "from \(device.name)"])
            _ = try await device.succeed(["sync"])
        }
        // As the folder would show them after 3, 4 and 5 days of silence.
        var silence: [String: TimeInterval] = [:]
        for (index, client) in try clientIdentifiers(in: devices[0].remote).enumerated() {
            silence[client] = Double(3 + index) * 86_400
            try backdateFiles(of: client, in: devices[0].remote, by: silence[client]!)
        }
        let report = try await vacuum(devices[0].remote, ["--expire-clients-after", "2d"])
        let mostRecent = silence.min { $0.value < $1.value }!.key
        #expect(Set(report.expiredClients) == Set(silence.keys).subtracting([mostRecent]), "\(report.expiredClients)")
    }

    // MARK: Helpers

    struct VacuumResult: Decodable {
        struct Removal: Decodable {
            var path: String
            var reason: String
        }
        struct Damaged: Decodable {
            var path: String
            var reason: String
        }
        struct WholeStores: Decodable {
            var verified: Int
            var verifiedEarlier: Int
            var damaged: [Damaged]
        }
        var removed: [Removal]
        var expiredClients: [String]
        var wholeStores: WholeStores
    }

    /// `foldersync vacuum --json` of the one document, as an operator's cron job runs it.
    private func vacuum(_ remote: URL, _ extra: [String] = []) async throws -> VacuumResult {
        struct Output: Decodable { var documents: [VacuumResult] }
        let result = try await FoldersyncTool.run(["vacuum", "--remote", remote.path, "--json"] + extra)
        #expect(result.status == 0, "\(result.errors)")
        return try #require(try FoldersyncTool.json(Output.self, result).documents.first)
    }

    /// Runs a built executable under `faketime`, its clock shifted by `offset` (`+25h`, `-3d`); the monotonic clock
    /// stays true. (Through the `faketime` wrapper: with the library preloaded by hand, a Swift program gets no
    /// arguments.)
    static func run(_ executable: String, _ arguments: [String], clock offset: String) async throws
        -> (status: Int32, output: String, errors: String)
    {
        var environment = ProcessInfo.processInfo.environment
        environment["FAKETIME_DONT_FAKE_MONOTONIC"] = "1"
        environment["COLUMNS"] = "80"
        environment["XDG_CACHE_HOME"] =
            FileManager.default.temporaryDirectory.appendingPathComponent("foldersync-tests-cache").path
        let process = try Subprocess.start(
            "/usr/bin/faketime",
            ["-f", offset, buildProductsDirectory.appendingPathComponent(executable).path]
                + arguments, environment: environment, standardInput: .null)
        let result = await process.finished()
        return (result.status, result.output, result.errors)
    }

    private func addAndSync(_ device: Device, count: Int) async throws {
        for index in 1...count {
            _ = try await device.succeed(["add", "\(device.name) \(index)"])
            _ = try await device.succeed(["sync"])
        }
    }

    private func texts(_ device: Device) async throws -> [String] {
        struct Note: Decodable { var text: String }
        return try JSONDecoder().decode([Note].self, from: Data(try await device.list().utf8)).map(\.text).sorted()
    }

    private func documentFolder(_ remote: URL) -> URL {
        remote.appendingPathComponent("com.example.notes/Documents/notes")
    }

    private func wholeStores(in remote: URL) throws -> [URL] {
        let folder = documentFolder(remote).appendingPathComponent("WholeStore")
        return try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
            .map { folder.appendingPathComponent($0).appendingPathComponent("WholeStore.ticdsync") }
            .filter { FileManager.default.fileExists(atPath: $0.path) }
    }

    private func onlyWholeStore(in remote: URL) throws -> URL {
        let stores = try wholeStores(in: remote)
        #expect(stores.count == 1, "\(stores)")
        return try #require(stores.first)
    }

    private func changeSets(of client: String, in remote: URL) throws -> [String] {
        let folder = documentFolder(remote).appendingPathComponent("SyncChanges/\(client)")
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter {
            $0.hasSuffix(".syncchg")
        }
    }

    private func clientIdentifiers(in remote: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(
            atPath: documentFolder(remote).appendingPathComponent("RecentSyncs").path
        )
        .filter { $0.hasSuffix(".recentsync") }.map { String($0.dropLast(".recentsync".count)) }.sorted()
    }

    private func relative(_ url: URL, to root: URL) -> String {
        String(url.standardizedFileURL.path.dropFirst(root.standardizedFileURL.path.count + 1))
    }

    /// Sets the modification date of every file of `client` in the document `age` seconds back.
    private func backdateFiles(of client: String, in remote: URL, by age: TimeInterval) throws {
        let document = documentFolder(remote)
        var files = [document.appendingPathComponent("RecentSyncs/\(client).recentsync")]
        for folder in ["SyncChanges", "WholeStore"] {
            let own = document.appendingPathComponent("\(folder)/\(client)")
            files += ((try? FileManager.default.contentsOfDirectory(atPath: own.path)) ?? []).map {
                own.appendingPathComponent($0)
            }
        }
        for file in files {
            try FileManager.default.setAttributes(
                [.modificationDate: Date().addingTimeInterval(-age)], ofItemAtPath: file.path)
        }
    }
}

extension NotesProcessTests.Device {
    /// Runs a `notes` command of this device with its clock shifted by `offset` (`faketime`).
    func run(_ arguments: [String], clock offset: String) async throws -> (
        status: Int32, output: String, errors: String
    ) {
        try await VacuumProcessTests.run(
            "notes", ["--db", database.path, "--remote", remote.path, "--client-name", name] + arguments,
            clock: offset)
    }
}
