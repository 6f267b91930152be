import Foundation
import Testing

@testable import TestSupport

/// `notes sync` says what other devices changed, named as they registered; `--json` keeps its keys and adds the feed.
@Suite("notes sync: the change feed", .serialized)
struct NotesChangeFeedTests {
    static func notes(_ device: String, in directory: TemporaryDirectory, _ arguments: [String]) async throws -> String
    {
        let result = try await ChildProcess(
            "notes",
            [
                "--db", directory.url.appendingPathComponent("\(device).sqlite").path,
                "--remote", directory.subdirectory("shared").path,
                "--client-name", device,
            ] + arguments
        ).finish()
        #expect(result.status == 0, "\(device) \(arguments): \(result.errors)")
        return result.output
    }

    @Test("A sync prints a line per device that changed notes; --json keeps every key and adds rowChanges")
    func feed() async throws {
        let directory = TemporaryDirectory()
        var ids: [String] = []
        for text in ["Buy milk", "Call Bob", "Water plants"] {
            ids.append(
                try await Self.notes("phone", in: directory, ["add", text]).trimmingCharacters(
                    in: .whitespacesAndNewlines))
        }
        _ = try await Self.notes("phone", in: directory, ["sync"])
        let text = try await Self.notes("laptop", in: directory, ["sync"])
        let line = try #require(text.split(separator: "\n").first { $0.contains("changed on") }, "\(text)")
        #expect(line.hasPrefix("3 notes changed on phone: "), "\(line)")
        #expect(["Buy milk (new)", "Call Bob (new)", "Water plants (new)"].allSatisfy(line.contains), "\(line)")

        _ = try await Self.notes("phone", in: directory, ["edit", ids[0], "Buy oat milk"])
        _ = try await Self.notes("phone", in: directory, ["delete", ids[1]])
        _ = try await Self.notes("phone", in: directory, ["sync"])
        let json = try await Self.notes("laptop", in: directory, ["sync", "--json"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        for key in [
            "changeSetsSent", "changesSent", "changeSetsApplied", "changesApplied", "changesIgnored", "conflicts",
            "warnings", "bytesSent", "bytesReceived", "remoteRequests",
        ] {
            #expect(report[key] != nil, "notes sync --json lost \(key)")
        }
        let changes = try #require(report["rowChanges"] as? [[String: Any]])
        let notes = try #require(changes.first { $0["table"] as? String == "notes" })
        #expect(notes["device"] as? String == "phone")
        #expect(notes["updated"] as? [String: [String]] == [ids[0]: ["body", "title"]])
        #expect(notes["deleted"] as? [String] == [ids[1]] && notes["deleteCount"] as? Int == 1)
    }
}
