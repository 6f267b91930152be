import Foundation
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// Issue 38, item 5, as a user meets it: another device's marker claims this device's sets up to a number it never
/// published (a compromised device, or a provider writing files). Driven through the `notes` and `foldersync`
/// binaries, one process per command, as the repro was.
@Suite("Forged numbers through real processes", .serialized)
struct ForgedNumbersProcessTests {
    static func markersDirectory(_ remote: URL) -> URL {
        remote.appendingPathComponent("com.example.notes/Documents/notes/RecentSyncs")
    }

    /// Every marker in the folder that decodes, with its file.
    static func markers(_ remote: URL) throws -> [(url: URL, recent: RecentSync)] {
        let directory = markersDirectory(remote)
        return try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasSuffix(".recentsync")
        }.compactMap { name in
            let url = directory.appendingPathComponent(name)
            guard
                let recent = try? PropertyListFile.decode(RecentSync.self, from: try Data(contentsOf: url), path: name)
            else { return nil }
            return (url, recent)
        }
    }

    @Test(
        "A forged acknowledgement of this device in another's marker neither crashes it nor silences it: it keeps publishing, readers get its notes, and doctor is healthy",
        arguments: [Int64.max, 999_999_999_999, 1_000_000])
    func forgedAcknowledgement(claimed: Int64) async throws {
        let directory = TemporaryDirectory()
        let devices = NotesProcessTests.devices(3, in: directory)
        let (a, b, c) = (devices[0], devices[1], devices[2])
        _ = try await a.succeed(["add", "a1"])
        _ = try await a.succeed(["sync"])
        _ = try await b.succeed(["sync"])
        let markers = try Self.markers(a.remote)
        let author = try #require(markers.first { $0.recent.publishedSequence > 0 }?.recent.clientIdentifier)
        var (url, forged) = try #require(markers.first { $0.recent.clientIdentifier != author })
        forged.acknowledgement[author] = claimed
        try PropertyListFile.encode(forged).write(to: url)

        _ = try await a.succeed(["add", "a2"])
        let first = try await a.run(["sync", "--json"])
        #expect(first.status == 0, "A's sync failed after the forged marker: \(first.status) \(first.errors)")
        #expect(first.output.contains("\"changeSetsSent\" : 1"), "A published nothing: \(first.output)")
        _ = try await a.succeed(["add", "a3"])
        _ = try await a.succeed(["sync"])
        _ = try await c.succeed(["sync"])
        #expect(try await c.texts() == ["a1", "a2", "a3"])
        let own = try #require(try Self.markers(a.remote).first { $0.recent.clientIdentifier == author })
        #expect(own.recent.publishedSequence < 100, "A's marker claims \(own.recent.publishedSequence)")
        // A claim no file name holds makes the marker corrupt (doctor names it); any other is no concern of doctor's.
        let verdict = try await FoldersyncTool.run(["doctor", "--remote", a.remote.path])
        if claimed > RemoteLayout.maximumSequence {
            #expect(
                verdict.status == 1 && verdict.output.contains(url.lastPathComponent)
                    && verdict.output.contains("no change-set file name holds that number"),
                "\(verdict.output)\(verdict.errors)")
        } else {
            #expect(verdict.status == 0 && verdict.output.contains("Healthy"), "\(verdict.output)\(verdict.errors)")
        }
    }
}
