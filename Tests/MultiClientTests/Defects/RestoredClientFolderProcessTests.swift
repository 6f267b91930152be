@_spi(Tooling) import FolderSync
import Foundation
import Testing

@testable import TestSupport

/// Issue 38, item 2, as users meet it: one client's change-set folder put back from an older copy (a sync tool, a
/// restore of one folder) while its marker still names the sets the copy lacks. Driven through the `notes` binary,
/// one process per command.
@Suite("A restored client folder through real processes", .serialized)
struct RestoredClientFolderProcessTests {
    @Test(
        "The author finds the sets missing from its folder at its next launch and covers them with a whole store; a new device that waits on the gap says so in its report and status, then gets every note"
    )
    func restoredChangeSetFolder() async throws {
        let directory = TemporaryDirectory()
        let devices = NotesProcessTests.devices(3, in: directory)
        let (a, b, late) = (devices[0], devices[1], devices[2])
        for n in 1...3 {
            _ = try await a.succeed(["add", "a\(n)"])
            _ = try await a.succeed(["sync"])
        }
        _ = try await b.succeed(["sync"])
        let markers = try ForgedNumbersProcessTests.markers(a.remote)
        let author = try #require(markers.first { $0.recent.publishedSequence > 0 }?.recent.clientIdentifier)
        let folder = a.remote.appendingPathComponent("com.example.notes/Documents/notes/SyncChanges/\(author)")
        let saved = directory.url.appendingPathComponent("saved-folder")
        try FileManager.default.copyItem(at: folder, to: saved)
        for n in 4...6 {
            _ = try await a.succeed(["add", "a\(n)"])
            _ = try await a.succeed(["sync"])
        }
        _ = try await b.succeed(["sync"])
        try FileManager.default.removeItem(at: folder)
        try FileManager.default.copyItem(at: saved, to: folder)
        _ = try await b.succeed(["add", "b1"])
        _ = try await b.succeed(["sync"])

        let waiting = try await late.succeed(["sync", "--json"])
        #expect(waiting.contains("changeSetMissing"), "the new device did not say it waits on a gap: \(waiting)")
        let status = try await late.succeed(["status"])
        #expect(status.contains("waits for change set 4"), "\(status)")

        let healed = try await a.succeed(["sync", "--json"])
        #expect(healed.contains("change sets 4–6 are gone from the folder"), "A did not notice: \(healed)")
        let store = a.remote.appendingPathComponent(
            "com.example.notes/Documents/notes/WholeStore/\(author)/WholeStore.ticdsync")
        #expect(
            FileManager.default.fileExists(atPath: store.path),
            "A did not upload a whole store that covers its missing sets")
        _ = try await late.succeed(["sync"])
        let expected = ["a1", "a2", "a3", "a4", "a5", "a6", "b1"]
        #expect(try await late.texts() == expected)
        #expect(!(try await late.succeed(["status"])).contains("waits for"))
        _ = try await b.succeed(["sync"])
        #expect(try await b.texts() == expected)
    }
}
