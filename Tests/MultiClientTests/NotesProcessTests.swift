import FolderSyncTesting
import Foundation
import Testing

@testable import TestSupport

/// The `notes` example driven as a user would, through real processes.
@Suite("Notes processes", .serialized)
struct NotesProcessTests {
    struct Device {
        let name: String
        let database: URL
        let remote: URL

        func run(_ arguments: [String]) async throws -> (status: Int32, output: String, errors: String) {
            let process = try ChildProcess(
                "notes", ["--db", database.path, "--remote", remote.path, "--client-name", name] + arguments)
            return await process.finish()
        }

        func succeed(_ arguments: [String]) async throws -> String {
            let result = try await run(arguments)
            #expect(result.status == 0, "\(name) \(arguments): \(result.errors)")
            return result.output
        }

        func list() async throws -> String { try await succeed(["list", "--json"]) }
        /// The notes this device lists, by text, sorted.
        func texts() async throws -> [String] {
            struct Note: Decodable { var text: String }
            return try JSONDecoder().decode([Note].self, from: Data(try await list().utf8)).map(\.text).sorted()
        }
    }

    static func devices(_ count: Int, in directory: TemporaryDirectory) -> [Device] {
        let remote = directory.subdirectory("shared")
        return (0..<count).map {
            Device(name: "device\($0)", database: directory.url.appendingPathComponent("d\($0).sqlite"), remote: remote)
        }
    }

    @Test("With --password-file two devices sync an encrypted folder; a wrong password fails with one line and no data")
    func encrypted() async throws {
        let directory = TemporaryDirectory()
        let devices = Self.devices(2, in: directory)
        let password = directory.url.appendingPathComponent("password")
        let wrong = directory.url.appendingPathComponent("wrong")
        try "pass phrase\n".write(to: password, atomically: true, encoding: .utf8)
        try "not it\n".write(to: wrong, atomically: true, encoding: .utf8)
        _ = try await devices[0].succeed(["--password-file", password.path, "add", "Meet Zed at noon"])
        _ = try await devices[0].succeed(["--password-file", password.path, "sync"])
        let refused = try await devices[1].run(["--password-file", wrong.path, "sync"])
        #expect(refused.status == 1 && refused.errors.contains("wrongPassword"), "\(refused.errors)")
        _ = try await devices[1].succeed(["--password-file", password.path, "sync"])
        #expect(try await devices[1].succeed(["--password-file", password.path, "list"]).contains("Meet Zed at noon"))
        for path in treeListing(of: devices[0].remote) where !path.hasSuffix("/") {
            let bytes = try Data(contentsOf: devices[0].remote.appendingPathComponent(path))
            #expect(bytes.range(of: Data("Meet Zed".utf8)) == nil, "\(path)")
        }
    }

    @Test("Commands work as documented, and errors are one line on stderr with a non-zero exit")
    func commands() async throws {
        let directory = TemporaryDirectory()
        let devices = Self.devices(2, in: directory)
        let id = try await devices[0].succeed(["add", "Buy milk"]).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(UUID(uuidString: id) != nil)
        _ = try await devices[0].succeed(["move", id, "Home"])
        _ = try await devices[0].succeed(["tag", id, "errands"])
        _ = try await devices[0].succeed(["tag", id, "a-first"])
        let report = try await devices[0].succeed(["sync", "--json"])
        #expect(report.contains("\"changesSent\" : 6"), "\(report)")
        _ = try await devices[1].succeed(["sync"])
        let listing = try await devices[1].list()
        struct Note: Decodable, Equatable {
            var id: String
            var text: String
            var folder: String?
            var tags: [String]
        }
        let notes = try JSONDecoder().decode([Note].self, from: Data(listing.utf8))
        #expect(notes == [Note(id: id, text: "Buy milk", folder: "Home", tags: ["a-first", "errands"])])

        let failure = try await devices[1].run(["edit", "no-such-note", "x"])
        #expect(failure.status != 0)
        #expect(failure.errors.trimmingCharacters(in: .newlines).split(separator: "\n").count == 1, "\(failure.errors)")
        #expect(failure.errors.contains("no-such-note"))
        // Without its shared folder, the notes are still there; a sync says which folder it could not reach.
        let offline = try await ChildProcess(
            "notes", ["--db", devices[0].database.path, "--remote", "/nonexistent/x", "list"]
        ).finish()
        #expect(offline.status == 0 && offline.output.contains("Buy milk"), "\(offline.errors)")
        let missingRemote = try await ChildProcess(
            "notes", ["--db", devices[0].database.path, "--remote", "/nonexistent/x", "sync"]
        ).finish()
        #expect(missingRemote.status != 0 && missingRemote.errors.contains("/nonexistent/x"), "\(missingRemote.errors)")
    }

    @Test("Four notes processes writing and syncing concurrently for 30 seconds converge and lose nothing")
    func fourProcessesConverge() async throws {
        let directory = TemporaryDirectory()
        let devices = Self.devices(4, in: directory)
        let deadline = Date().addingTimeInterval(30)
        let added = try await withThrowingTaskGroup(of: [String].self) { group in
            for (index, device) in devices.enumerated() {
                group.addTask {
                    var generator = SeededGenerator(seed: UInt64(index + 1))
                    var mine: [String] = []
                    var step = 0
                    while Date() < deadline {
                        step += 1
                        switch Int.random(in: 0..<6, using: &generator) {
                        case 0, 1:
                            mine.append(
                                try await device.succeed(["add", "\(device.name) note \(step)"]).trimmingCharacters(
                                    in: .whitespacesAndNewlines))
                        case 2 where !mine.isEmpty:
                            _ = try await device.succeed([
                                "edit", mine.randomElement(using: &generator)!, "\(device.name) edit \(step)",
                            ])
                        case 3 where !mine.isEmpty:
                            _ = try await device.succeed([
                                "tag", mine.randomElement(using: &generator)!, "t\(step % 3)",
                            ])
                        case 4 where !mine.isEmpty:
                            _ = try await device.succeed([
                                "move", mine.randomElement(using: &generator)!, "folder\(step % 2)",
                            ])
                        default:
                            _ = try await device.succeed(["sync"])
                        }
                    }
                    return mine
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        for _ in 0..<2 {
            for device in devices { _ = try await device.succeed(["sync"]) }
        }
        let lists = try await devices.asyncMap { try await $0.list() }
        #expect(Set(lists).count == 1, "replicas differ")
        for id in added { #expect(lists[0].contains(id), "note \(id) was lost") }
        print("4 processes: \(added.count) notes added, all present on every device")
    }
}

extension Sequence {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
