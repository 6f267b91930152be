import Foundation
import GRDB
import Testing

@testable import TestSupport

/// One row created on two devices before either syncs (issue 38, item 7), as users meet it: the notes app's tag
/// `red` is the row `tag:red` on every device, and `tags.name` is NOT NULL. Driven through the `notes` and
/// `foldersync` binaries, one process per command, as the repro was.
@Suite("A row created on two devices, through real processes", .serialized)
struct SharedRowProcessTests {
    typealias Device = NotesProcessTests.Device

    /// The client identifier a device keeps in its database.
    private func clientIdentifier(_ device: Device) throws -> String {
        let queue = try DatabaseQueue(path: device.database.path)
        let identifier = try queue.read {
            try String.fetchOne($0, sql: "SELECT value FROM settings WHERE key = 'client'")
        }
        return try #require(identifier, "\(device.name) has no client identifier")
    }

    private struct Note: Decodable, Equatable {
        var id: String
        var text: String
        var tags: [String]
    }

    private func notes(_ device: Device) async throws -> [Note] {
        try JSONDecoder().decode([Note].self, from: Data(try await device.list().utf8))
    }

    @Test(
        "Two devices tag a note `red` before either syncs, the newer first: every device, a new one too, gets the tag; doctor is healthy"
    )
    func tagCreatedOnTwoDevices() async throws {
        let directory = TemporaryDirectory()
        let devices = NotesProcessTests.devices(5, in: directory)
        let (x, p, q, c, d) = (devices[0], devices[1], devices[2], devices[3], devices[4])
        let id = try await x.succeed(["add", "Buy paint"]).trimmingCharacters(in: .whitespacesAndNewlines)
        _ = try await x.succeed(["sync"])
        for device in [p, q, c] { _ = try await device.succeed(["sync"]) }

        // The older write is made on the device whose client ID sorts first, so that readers, which try change sets
        // in client order, meet its set first; the newer write's device publishes first.
        let (older, newer) = try clientIdentifier(p) < clientIdentifier(q) ? (p, q) : (q, p)
        _ = try await older.succeed(["tag", id, "red"])
        _ = try await newer.succeed(["tag", id, "red"])
        _ = try await newer.succeed(["sync"])
        _ = try await older.succeed(["sync"])

        for device in [c, x, d] {
            let result = try await device.run(["sync"])
            #expect(result.status == 0, "\(device.name): \(result.errors)")
        }
        for _ in 0..<2 { for device in devices { _ = try await device.succeed(["sync"]) } }
        for device in devices {
            #expect(try await notes(device) == [Note(id: id, text: "Buy paint", tags: ["red"])], "\(device.name)")
        }
        let doctor = try await FoldersyncTool.run(["doctor", "--remote", x.remote.path])
        #expect(doctor.status == 0, "\(doctor.output)\(doctor.errors)")
    }
}
