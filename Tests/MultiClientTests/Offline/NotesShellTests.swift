import Foundation
import TestProcesses
import Testing

@testable import TestSupport

/// Issue 20, as a user meets it: the README's notes commands, run by bash as they are written there (with the
/// scratch folder for `/tmp` and the built tool for `.build/debug/notes`). With the share unmounted `add` and `list`
/// work and `sync` says the share is unavailable; with it back `sync` converges; `status --json` shows each state.
@Suite("notes from a shell")
struct NotesShellTests {
    struct Status: Decodable {
        var registered: Bool
        var unpublishedChanges: Bool
        var lastSync: String?
        var lastError: String?
    }

    /// The README's first notes block and the offline one after it, made to run here.
    static func readmeScript(scratch: URL) throws -> String {
        let (section, script) = try readmeShellScript(
            file: "Examples/Notes/README.md", blocks: 2, tool: "notes", scratch: scratch)
        #expect(section.contains("<!-- The block below is run by NotesShellTests"))
        return script
    }

    @Test(
        "The front page's blocks run as written: a note written on one device is listed on the other, the tool finds the folder healthy"
    )
    func frontPage() throws {
        let directory = TemporaryDirectory()
        let (_, notes) = try readmeShellScript(
            file: "README.md", section: "## The examples", blocks: 1, tool: "notes",
            scratch: directory.url)
        let (_, tool) = try readmeShellScript(
            file: "README.md", section: "## The maintenance tool", blocks: 1,
            tool: "foldersync", scratch: directory.url)
        let result = try Subprocess.run("/bin/bash", ["-e", "-c", notes + "\n" + tool])
        #expect(result.status == 0, "\(result.output)\n\(result.errors)")
        // `notes sync` names the note it received too ("1 note changed on laptop: Buy milk (new)").
        let listed = result.output.split(separator: "\n").filter {
            $0.contains("Buy milk") && !$0.contains("changed on")
        }
        #expect(listed.count == 1, "the phone lists the laptop's note: \(result.output)")
        #expect(result.output.contains("Dry run") && result.output.hasSuffix("Healthy.\n"), "\(result.output)")
    }

    @Test(
        "The README's notes session, the share unmounted and back: local commands work, sync says unavailable, then converges"
    )
    func readmeSessionAcrossAnOutage() async throws {
        let directory = TemporaryDirectory()
        let script = try Self.readmeScript(scratch: directory.url)
        let result = try Subprocess.run("/bin/bash", ["-e", "-c", script])
        #expect(result.status == 0, "\(result.output)\n\(result.errors)")
        // The first sync registered and published; the one with the share away failed with one line, and wrote nothing.
        #expect(result.output.contains("sync: exit 1"), "\(result.output)")
        let failure = result.errors.split(separator: "\n").filter { $0.hasPrefix("notes: ") }
        #expect(failure.count == 1 && failure[0].contains("remoteUnavailable"), "\(result.errors)")
        #expect(result.output.contains("Written on the train"))
        let statuses = try Self.jsonObjects(in: result.output).map {
            try JSONDecoder().decode(Status.self, from: Data($0.utf8))
        }
        try #require(statuses.count == 2, "\(result.output)")
        #expect(
            statuses[0].registered && statuses[0].unpublishedChanges
                && statuses[0].lastError?.hasPrefix("remoteUnavailable") == true)
        #expect(
            statuses[1].registered && !statuses[1].unpublishedChanges && statuses[1].lastError == nil
                && statuses[1].lastSync != nil)

        // Another device that joins the folder sees the note written while it was away.
        let phone = try Subprocess.run(
            buildProductsDirectory.appendingPathComponent("notes").path,
            [
                "--db", directory.url.appendingPathComponent("phone.sqlite").path,
                "--remote", directory.url.appendingPathComponent("shared").path, "sync",
            ])
        #expect(phone.status == 0, "\(phone.errors)")
        let listed = try Subprocess.run(
            buildProductsDirectory.appendingPathComponent("notes").path,
            ["--db", directory.url.appendingPathComponent("phone.sqlite").path, "list"])
        #expect(
            listed.output.contains("Written on the train") && listed.output.contains("Buy milk"), "\(listed.output)")
    }

    /// The pretty-printed JSON objects of `notes status --json` in a session's output: from a line `{` to a line `}`.
    static func jsonObjects(in output: String) -> [String] {
        var objects: [String] = []
        var current: [Substring]?
        for line in output.split(separator: "\n") {
            if line == "{" { current = [] }
            current?.append(line)
            if line == "}", let lines = current {
                objects.append(lines.joined(separator: "\n"))
                current = nil
            }
        }
        return objects
    }
}
