@_spi(Tooling) import FolderSync
import FolderSyncWebDAV
import Foundation
import TestProcesses
import Testing

@testable import TestSupport

/// Every failure a user of `foldersync` or `notes` can meet, run through the built binaries: one line on standard
/// error naming the cause and the file or URL in words, the documented exit code, and none of Foundation's dumps.
@Suite("Error messages of the tools", .serialized)
struct CLIErrorMessageTests {
    /// What a user must never read: Foundation's and Swift's raw error dumps, an empty path, a null.
    static let dumps = [
        "NSCocoaErrorDomain", "NSURLErrorDomain", "NSXMLParserErrorDomain", "Error Domain", "UserInfo",
        "DecodingError", "Code=", "()", "(null)", "Context(", "Optional(",
    ]

    /// One line on standard error, with the tool's prefix, naming no internals; returns it.
    @discardableResult
    static func expectOneReadableLine(
        _ errors: String, tool: String, _ what: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> String {
        let lines = errors.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(
            lines.count == 1 && errors.hasSuffix("\n"), "\(what): not one line: \(errors)",
            sourceLocation: sourceLocation)
        #expect(errors.hasPrefix(tool + ": "), "\(what): \(errors)", sourceLocation: sourceLocation)
        for dump in dumps {
            #expect(!errors.contains(dump), "\(what): shows \(dump): \(errors)", sourceLocation: sourceLocation)
        }
        return String(lines.first ?? "")
    }

    /// A shared folder with one document written by `notes` (device a), and the command line to run notes on it.
    struct Folder {
        let directory = TemporaryDirectory("CLIErrorMessageTests")
        var root: URL { directory.url.appendingPathComponent("shared") }
        var application: URL { root.appendingPathComponent("com.example.notes") }

        init(encryptedWith password: String? = nil) async throws {
            _ = directory.subdirectory("shared")
            var extra: [String] = []
            if let password {
                let file = directory.url.appendingPathComponent("password")
                try (password + "\n").write(to: file, atomically: true, encoding: .utf8)
                extra = ["--password-file", file.path]
            }
            _ = try await notes(["--client-name", "a"] + extra + ["add", "hello"], database: "a")
            _ = try await notes(["--client-name", "a"] + extra + ["sync"], database: "a")
        }

        func notes(
            _ arguments: [String], database: String = "b", environment: [String: String] = [:],
            sourceLocation: SourceLocation = #_sourceLocation
        ) async throws -> Subprocess.Result {
            try await ChildProcess(
                "notes",
                [
                    "--db", directory.url.appendingPathComponent("\(database).sqlite").path,
                    "--remote", root.path,
                ] + arguments, environment: environment
            ).finishMeasured()
        }

        func file(_ name: String, contents: String) throws -> String {
            let url = directory.url.appendingPathComponent(name)
            try contents.write(to: url, atomically: true, encoding: .utf8)
            return url.path
        }
    }

    // MARK: foldersync

    @Test(
        "foldersync: each failure is one readable line with exit 2; an unknown --document gets one message from every command"
    )
    func foldersyncFailures() async throws {
        let folder = try await Folder()
        let remote = folder.root.path
        var cases: [(String, [String])] = [
            ("missing folder", ["documents", "list", "--remote", "/nonexistent/shared"]),
            ("unknown option", ["doctor", "--remote", remote, "--bogus"]),
            ("unknown subcommand", ["frobnicate"]),
            ("missing option", ["export", "--remote", remote, "--document", "notes"]),
            ("unknown application", ["documents", "list", "--remote", remote, "--app", "com.example.other"]),
            ("expiry too short", ["vacuum", "--remote", remote, "--expire-clients-after", "3s"]),
            ("not a duration", ["vacuum", "--remote", remote, "--expire-clients-after", "soon"]),
            ("inspect a missing file", ["inspect", folder.root.appendingPathComponent("nope.plist").path]),
            ("inspect garbage", ["inspect", try folder.file("garbage.plist", contents: "bplist00garbage")]),
            (
                "export to a missing folder",
                ["export", "--remote", remote, "--document", "notes", "--output", "/nonexistent/dir/x.sqlite"]
            ),
            (
                "clients delete without a terminal",
                ["clients", "delete", "X", "--document", "notes", "--remote", remote]
            ),
            ("unknown client", ["clients", "delete", "X", "--document", "notes", "--remote", remote, "--yes"]),
            ("connection refused", ["documents", "list", "--remote", "http://127.0.0.1:1/share/"]),
        ]
        let unknownDocument: [(String, [String])] = [
            ("doctor", ["doctor", "--document", "nope", "--remote", remote]),
            ("clients list", ["clients", "list", "--document", "nope", "--remote", remote]),
            ("clients delete", ["clients", "delete", "X", "--document", "nope", "--yes", "--remote", remote]),
            ("vacuum", ["vacuum", "--document", "nope", "--remote", remote]),
            (
                "export",
                [
                    "export", "--document", "nope", "--output",
                    folder.directory.url.appendingPathComponent("e.sqlite").path, "--remote", remote,
                ]
            ),
        ]
        cases += unknownDocument
        var documentMessages: Set<String> = []
        for (what, arguments) in cases {
            let result = try await FoldersyncTool.run(arguments)
            #expect(result.status == 2, "\(what): exit \(result.status): \(result.errors)")
            let line = Self.expectOneReadableLine(result.errors, tool: "foldersync", what)
            if unknownDocument.contains(where: { $0.0 == what }) { documentMessages.insert(line) }
        }
        #expect(
            documentMessages == ["foldersync: --document nope: no such document in com.example.notes (found: notes)"],
            "\(documentMessages)")

        // A corrupt property list, read by inspect: in words.
        let formatVersion = folder.application.appendingPathComponent("FormatVersion.plist")
        let original = try Data(contentsOf: formatVersion)
        try Data("bplist00garbage".utf8).write(to: formatVersion)
        let corrupt = try await FoldersyncTool.run(["inspect", formatVersion.path])
        #expect(corrupt.status == 2)
        Self.expectOneReadableLine(corrupt.errors, tool: "foldersync", "inspect a corrupt plist")
        try original.write(to: formatVersion)
    }

    @Test(
        "foldersync on an encrypted folder: no password says how to give one; a wrong one is wrongPassword; one line each"
    )
    func foldersyncEncrypted() async throws {
        let folder = try await Folder(encryptedWith: "right password")
        let none = try await FoldersyncTool.run(["documents", "list", "--remote", folder.root.path])
        #expect(none.status == 2)
        #expect(
            Self.expectOneReadableLine(none.errors, tool: "foldersync", "no password").contains("--password-file"),
            "\(none.errors)")
        let wrong = try await FoldersyncTool.run([
            "documents", "list", "--remote", folder.root.path,
            "--password-file", try folder.file("wrong", contents: "wrong\n"),
        ])
        #expect(wrong.status == 2)
        #expect(
            Self.expectOneReadableLine(wrong.errors, tool: "foldersync", "wrong password").contains("wrongPassword"),
            "\(wrong.errors)")
    }

    @Test(
        "foldersync against WebDAV: a missing folder and a wrong password name the URL, never the password or an empty ()",
        arguments: WebDAVTestServers.names)
    func foldersyncWebDAV(_ server: String) async throws {
        var components = URLComponents(url: try WebDAVTestServers.url(server), resolvingAgainstBaseURL: false)!
        let password = components.password ?? ""
        components.percentEncodedPath = "/no-such-folder-\(UUID().uuidString.prefix(8))/"
        let missing = try await FoldersyncTool.run(["documents", "list", "--remote", components.url!.absoluteString])
        #expect(missing.status == 2)
        let line = Self.expectOneReadableLine(missing.errors, tool: "foldersync", "\(server): missing folder")
        #expect(line.contains("no-such-folder") && line.contains("no such folder"), "\(line)")
        #expect(!line.contains(password))

        components.percentEncodedPath = "/"
        components.password = "wrong-\(UUID().uuidString.prefix(6))"
        let refused = try await FoldersyncTool.run(["documents", "list", "--remote", components.url!.absoluteString])
        #expect(refused.status == 2)
        let refusal = Self.expectOneReadableLine(refused.errors, tool: "foldersync", "\(server): wrong password")
        #expect(refusal.contains("refused the credentials") && refusal.contains("127.0.0.1"), "\(refusal)")
        #expect(!refusal.contains(components.password!) && !refusal.contains(password))
    }

    @Test("A cut-off PROPFIND answer is retried; when it stays cut off, the tools say so in words")
    func cutOffListing() async throws {
        let server = try await MisbehavingServer([
            ["status": 207, "body": "<?xml version=\"1.0\"?><D:multistatus xmlns:D=\"DAV:\"><D:resp"]
        ])
        let result = try await FoldersyncTool.run(["documents", "list", "--remote", server.url.absoluteString])
        let requests = await server.stop()
        #expect(result.status == 2)
        #expect(
            Self.expectOneReadableLine(result.errors, tool: "foldersync", "cut-off listing").contains("cut off"),
            "\(result.errors)")
        #expect(requests.count == 4, "asked four times: \(requests)")
    }

    // MARK: notes

    @Test("notes: each failure is one readable line with exit 1, usage errors included")
    func notesFailures() async throws {
        let folder = try await Folder()
        let listing = try await folder.notes(["--client-name", "a", "list"], database: "a")
        let id = try #require(listing.output.split(separator: " ").first.map(String.init))
        let cases: [(String, [String])] = [
            ("unknown option", ["--bogus", "list"]),
            ("unknown subcommand", ["frobnicate"]),
            ("missing argument", ["add"]),
            ("edit a missing note", ["edit", "no-such-note", "text"]),
            ("untag a missing tag", ["untag", id, "no-such-tag"]),
            ("unreadable password file", ["--password-file", "/nonexistent/password", "sync"]),
        ]
        for (what, arguments) in cases {
            let result = try await folder.notes(arguments, database: "a")
            #expect(result.status == 1, "\(what): exit \(result.status): \(result.errors)")
            Self.expectOneReadableLine(result.errors, tool: "notes", what)
        }
        // Local commands need only the database; sync needs the shared folder too.
        for (what, arguments) in [
            ("missing --db", ["list"]), ("missing --remote", ["--db", "/tmp/x.sqlite", "sync"]),
            (
                "missing folder",
                [
                    "--db", folder.directory.url.appendingPathComponent("c.sqlite").path,
                    "--remote", "/nonexistent/shared", "sync",
                ]
            ),
            (
                "connection refused",
                [
                    "--db", folder.directory.url.appendingPathComponent("d.sqlite").path,
                    "--remote", "http://127.0.0.1:1/share/", "sync",
                ]
            ),
        ] {
            let result = try await ChildProcess("notes", arguments).finishMeasured()
            #expect(result.status == 1, "\(what): exit \(result.status): \(result.errors)")
            Self.expectOneReadableLine(result.errors, tool: "notes", what)
        }

        let formatVersion = folder.application.appendingPathComponent("FormatVersion.plist")
        try Data("bplist00garbage".utf8).write(to: formatVersion)
        let corrupt = try await folder.notes(["--client-name", "a", "sync"], database: "a")
        #expect(corrupt.status == 1)
        let line = Self.expectOneReadableLine(corrupt.errors, tool: "notes", "corrupt FormatVersion.plist")
        #expect(line.contains("corruptFile") && line.contains("FormatVersion.plist"), "\(line)")
    }

    @Test(
        "notes on an encrypted folder: no password points to --password-file, a wrong one is wrongPassword; one line each"
    )
    func notesEncrypted() async throws {
        let folder = try await Folder(encryptedWith: "right password")
        let none = try await folder.notes(["sync"])
        #expect(none.status == 1)
        let line = Self.expectOneReadableLine(none.errors, tool: "notes", "no password")
        #expect(line.contains("encrypted") && line.contains("--password-file"), "\(line)")
        #expect(!line.contains("gave no password"), "\(line)")
        let wrong = try await folder.notes(["--password-file", try folder.file("wrong", contents: "wrong\n"), "sync"])
        #expect(wrong.status == 1)
        #expect(Self.expectOneReadableLine(wrong.errors, tool: "notes", "wrong password").contains("wrongPassword"))
    }

    @Test("A warning is printed once: in the sync report, not also as a log line")
    func warningOnce() async throws {
        let folder = try await Folder()
        _ = try await folder.notes(["--client-name", "b", "sync"])
        // Device b's marker damaged: a's next sync goes on without it and warns.
        let markers = folder.application.appendingPathComponent("Documents/notes/RecentSyncs")
        let names = try FileManager.default.contentsOfDirectory(atPath: markers.path).filter {
            $0.hasSuffix(".recentsync")
        }
        #expect(names.count == 2)
        // b synced last: the newer marker is b's.
        let dates = try names.map {
            try FileManager.default.attributesOfItem(atPath: markers.appendingPathComponent($0).path)[.modificationDate]
                as! Date
        }
        let bMarker = names[dates.firstIndex(of: dates.max()!)!]
        try Data("bplist00garbage".utf8).write(to: markers.appendingPathComponent(bMarker))
        // And an empty "deleted" marker for device a, which does not open: ignored, with a log line for diagnosis.
        struct Clients: Decodable {
            struct Document: Decodable {
                struct Client: Decodable {
                    var identifier: String
                    var description: String?
                }
                var clients: [Client]
            }
            var documents: [Document]
        }
        let listed = try await FoldersyncTool.run(["clients", "list", "--remote", folder.root.path, "--json"])
        let a = try #require(
            try FoldersyncTool.json(Clients.self, listed).documents.first?.clients.first { $0.description == "a" })
        let deleted = folder.application.appendingPathComponent("Documents/notes/DeletedClients")
        try FileManager.default.createDirectory(at: deleted, withIntermediateDirectories: true)
        try Data().write(to: deleted.appendingPathComponent(a.identifier + ".plist"))
        let result = try await folder.notes(["--client-name", "a", "sync"], database: "a")
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.errors.isEmpty, "nothing on standard error: \(result.errors)")
        let warnings = result.output.split(separator: "\n").filter { $0.contains("warning") }
        #expect(!warnings.isEmpty, "\(result.output)")
        #expect(Set(warnings).count == warnings.count, "a warning printed twice: \(result.output)")
        for dump in Self.dumps { #expect(!result.output.contains(dump), "\(result.output)") }
    }
}
