import Foundation
import TestProcesses
import Testing

@testable import TestSupport

/// The `notes` example and `foldersync`'s text output as a user meets them: what is printed (escaped, readable),
/// what is remembered, what is cleaned up, and the mass-deletion fail-safe from the command line.
@Suite("notes and foldersync as users meet them", .serialized)
struct NotesToolTests {
    struct Device {
        let database: URL
        let remote: URL

        func run(
            _ arguments: [String], name: String? = "device", environment: [String: String] = [:],
            input: String? = nil
        ) async throws -> Subprocess.Result {
            var full = ["--db", database.path, "--remote", remote.path]
            if let name { full += ["--client-name", name] }
            var merged = ProcessInfo.processInfo.environment
            merged.merge(environment) { _, new in new }
            let process = try Subprocess.start(
                buildProductsDirectory.appendingPathComponent("notes").path, full + arguments,
                environment: merged, standardInput: .pipe)
            if let input { try? process.writeToStandardInput(Data(input.utf8)) }
            process.closeStandardInput()
            return await process.finished()
        }

        @discardableResult
        func succeed(
            _ arguments: [String], name: String? = "device", input: String? = nil,
            sourceLocation: SourceLocation = #_sourceLocation
        ) async throws -> String {
            let result = try await run(arguments, name: name, input: input)
            #expect(result.status == 0, "\(arguments): \(result.errors)", sourceLocation: sourceLocation)
            return result.output
        }

        /// `notes … ARGUMENTS` on a pseudo-terminal (util-linux `script`), typing `input`: what the user saw.
        func onTerminal(_ arguments: [String], input: String) async throws -> Subprocess.Result {
            let command =
                ([
                    buildProductsDirectory.appendingPathComponent("notes").path, "--db", database.path, "--remote",
                    remote.path,
                ]
                + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
            return try Subprocess.run("/usr/bin/script", ["-qec", command, "/dev/null"], input: Data(input.utf8))
        }
    }

    static func devices(_ names: [String], in directory: TemporaryDirectory) -> [Device] {
        let remote = directory.subdirectory("shared")
        return names.map { Device(database: directory.url.appendingPathComponent("\($0).sqlite"), remote: remote) }
    }

    @Test("notes list escapes other devices' control characters and terminal escapes; JSON keeps the text exactly")
    func listEscapes() async throws {
        let directory = TemporaryDirectory()
        let devices = Self.devices(["a", "b"], in: directory)
        let hostile = "\u{1B}[31mred\u{1B}[0m\u{07}\rfake line\u{202E}txt\nsecond line"
        let id = try await devices[1].succeed(["add", hostile], name: "b").trimmingCharacters(
            in: .whitespacesAndNewlines)
        try await devices[1].succeed(["tag", id, "t\u{1B}]0;title\u{07}"], name: "b")
        try await devices[1].succeed(["sync"], name: "b")
        try await devices[0].succeed(["sync"], name: "a")
        let listing = try await devices[0].succeed(["list"], name: "a")
        for scalar in listing.unicodeScalars where scalar != "\n" {
            #expect(
                !(scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
                    || (0x202A...0x202E).contains(scalar.value)),
                "control character U+\(String(scalar.value, radix: 16)) printed raw: \(listing.debugDescription)")
        }
        #expect(listing.split(separator: "\n").count == 1, "one note, one line: \(listing.debugDescription)")
        #expect(listing.contains("\\u{1B}[31mred") && listing.contains(" ⏎ second line"), "\(listing.debugDescription)")
        struct Note: Decodable {
            var text: String
            var tags: [String]
        }
        let json = try JSONDecoder().decode(
            [Note].self, from: Data(try await devices[0].succeed(["list", "--json"], name: "a").utf8))
        #expect(json.first?.text == hostile && json.first?.tags == ["t\u{1B}]0;title\u{07}"])
    }

    @Test("foldersync doctor escapes a hostile file name, so it cannot forge a finding line")
    func doctorEscapes() async throws {
        let directory = TemporaryDirectory()
        let devices = Self.devices(["a"], in: directory)
        try await devices[0].succeed(["add", "x"])
        try await devices[0].succeed(["sync"])
        let forged = "stray\nerror    corruptChangeSet       forged\u{1B}[2J"
        let folder = devices[0].remote.appendingPathComponent("com.example.notes/Documents/notes")
        try Data("x".utf8).write(to: folder.appendingPathComponent(forged))
        let result = try await FoldersyncTool.run(["doctor", "--remote", devices[0].remote.path])
        #expect(result.status == 1)
        let lines = result.output.split(separator: "\n")
        #expect(!lines.contains { $0.hasPrefix("error") }, "a forged finding line: \(result.output)")
        #expect(result.output.contains("stray\\nerror    corruptChangeSet       forged\\u{1B}[2J"), "\(result.output)")
        #expect(!result.output.unicodeScalars.contains("\u{1B}"))
    }

    @Test("notes remembers the device name given once; later runs without --client-name keep it in the shared folder")
    func rememberedName() async throws {
        let directory = TemporaryDirectory()
        let device = Self.devices(["a"], in: directory)[0]
        try await device.succeed(["add", "x"], name: "Ann's laptop")
        try await device.succeed(["sync"], name: nil)
        try await device.succeed(["list"], name: nil)
        struct Clients: Decodable {
            struct Document: Decodable {
                struct Client: Decodable { var description: String? }
                var clients: [Client]
            }
            var documents: [Document]
        }
        let listed = try await FoldersyncTool.run(["clients", "list", "--remote", device.remote.path, "--json"])
        let clients = try FoldersyncTool.json(Clients.self, listed)
        #expect(clients.documents.flatMap(\.clients).map(\.description) == ["Ann's laptop"], "\(listed.output)")
        try await device.succeed(["sync"], name: "Ann's phone")
        let renamed = try FoldersyncTool.json(
            Clients.self, try await FoldersyncTool.run(["clients", "list", "--remote", device.remote.path, "--json"]))
        #expect(renamed.documents.flatMap(\.clients).map(\.description) == ["Ann's phone"])
    }

    @Test("A note longer than an argument may be is added and edited from standard input with -")
    func textFromStandardInput() async throws {
        let directory = TemporaryDirectory()
        let device = Self.devices(["a"], in: directory)[0]
        // Linux refuses a single argument over 128 KiB (MAX_ARG_STRLEN).
        let long = String(repeating: "All work and no play. ", count: 15_000) + "The end."
        let id = try await device.succeed(["add", "-"], input: long).trimmingCharacters(in: .whitespacesAndNewlines)
        struct Note: Decodable {
            var id: String
            var text: String
        }
        var notes = try JSONDecoder().decode(
            [Note].self, from: Data(try await device.succeed(["list", "--json"]).utf8))
        #expect(notes.map(\.id) == [id] && notes.first?.text == long)
        try await device.succeed(["edit", id, "-"], input: "short again\n")
        notes = try JSONDecoder().decode([Note].self, from: Data(try await device.succeed(["list", "--json"]).utf8))
        #expect(notes.first?.text == "short again")
    }

    @Test("notes --help says --remote takes a path or a URL")
    func helpNamesURLs() async throws {
        let result = try Subprocess.run(buildProductsDirectory.appendingPathComponent("notes").path, ["--help"])
        #expect(result.status == 0)
        #expect(
            result.output.contains("http://") && result.output.contains("https://")
                && !result.output.contains("(a directory path)"),
            "\(result.output)")
    }

    @Test("notes demo prints conflicts in words and removes its temporary folder; a --folder given is kept")
    func demo() async throws {
        let directory = TemporaryDirectory()
        let temporary = directory.subdirectory("tmp")
        let result = try Subprocess.run(
            buildProductsDirectory.appendingPathComponent("notes").path, ["demo"],
            environment: ProcessInfo.processInfo.environment.merging(["TMPDIR": temporary.path]) { _, new in new })
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.output.contains("agree"), "\(result.output)")
        #expect(result.output.contains("merged into \""), "\(result.output)")
        for raw in ["FolderSync.", "SyncValue", "merged(", ".text("] {
            #expect(!result.output.contains(raw), "\(raw) in \(result.output)")
        }
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: temporary.path).filter { $0.hasPrefix("notes-demo-") }
                .isEmpty)

        let kept = directory.url.appendingPathComponent("kept")
        let withFolder = try Subprocess.run(
            buildProductsDirectory.appendingPathComponent("notes").path, ["demo", "--folder", kept.path])
        #expect(withFolder.status == 0)
        #expect(FileManager.default.fileExists(atPath: kept.appendingPathComponent("shared/com.example.notes").path))
    }

    @Test(
        "Mass deletion from another device: declined without a terminal (own changes still published), asked once on one, applied with --allow-mass-deletion"
    )
    func massDeletion() async throws {
        let directory = TemporaryDirectory()
        let devices = Self.devices(["a", "b", "c"], in: directory)
        let (a, b, c) = (devices[0], devices[1], devices[2])
        var ids: [String] = []
        for index in 0..<102 {
            ids.append(
                try await a.succeed(["add", "note \(index)"], name: "a").trimmingCharacters(in: .whitespacesAndNewlines)
            )
        }
        try await a.succeed(["sync"], name: "a")
        try await b.succeed(["sync"], name: "b")
        try await c.succeed(["sync"], name: "c")
        for id in ids.prefix(52) { try await a.succeed(["delete", id], name: "a") }
        try await a.succeed(["sync"], name: "a")

        let own = try await b.succeed(["add", "b's own note"], name: "b").trimmingCharacters(
            in: .whitespacesAndNewlines)
        let declined = try await b.run(["sync"], name: "b")
        #expect(declined.status == 1)
        #expect(
            declined.errors.split(separator: "\n").count == 1 && declined.errors.contains("massDeletionDeclined"),
            "\(declined.errors)")
        #expect(declined.errors.contains("this device's own 1 change(s) were published"), "\(declined.errors)")
        try await a.succeed(["sync"], name: "a")
        #expect(try await a.succeed(["list"], name: "a").contains(own), "b's own note was published despite the stop")

        // On a terminal (util-linux `script`, part of every Debian system) it asks once.
        try #require(
            FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "/usr/bin/script is needed for a terminal")
        let no = try await b.onTerminal(["--client-name", "b", "sync"], input: "n\n")
        #expect(no.status == 1)
        #expect(no.output.components(separatedBy: "[y/N]").count == 2, "asked once: \(no.output)")
        let yes = try await b.onTerminal(["--client-name", "b", "sync"], input: "y\n")
        #expect(yes.status == 0, "\(yes.output)")
        #expect(try await b.succeed(["list"], name: "b").split(separator: "\n").count == 51)

        let allowed = try await c.run(["sync", "--allow-mass-deletion"], name: "c")
        #expect(allowed.status == 0, "\(allowed.errors)")
        #expect(try await c.succeed(["list"], name: "c").split(separator: "\n").count == 51)
    }
}
