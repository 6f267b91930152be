import Foundation
import Testing
@testable import foldersync

/// The command structure: help text of every subcommand, exit codes, usage errors, the DURATION parser.
@Suite("foldersync commands")
struct FoldersyncCommandTests {
    static let commands: [[String]] = [
        [], ["layout"], ["inspect"], ["doctor"], ["documents"], ["documents", "list"], ["clients"],
        ["clients", "list"], ["clients", "delete"], ["vacuum"], ["export"],
    ]

    @Test("--help of every subcommand matches its snapshot and exits 0", arguments: commands)
    func help(_ command: [String]) async throws {
        let result = try await FoldersyncTool.run(command + ["--help"])
        #expect(result.status == 0)
        #expect(result.errors.isEmpty)
        try expectSnapshot(result.output, named: (["foldersync"] + command).joined(separator: "-") + "-help")
    }

    @Test("Commands waiting for their operations exit 2 and say they are not implemented yet", arguments: [
        ("documents list", ["documents", "list"]),
        ("clients list", ["clients", "list"]),
        ("clients delete", ["clients", "delete", "C", "--document", "D", "--yes"]),
        ("vacuum", ["vacuum", "--dry-run", "--expire-clients-after", "90d"]),
    ])
    func notImplemented(_ name: String, _ command: [String]) async throws {
        let result = try await FoldersyncTool.run(command + ["--remote", "/tmp"])
        #expect(result.status == 2)
        #expect(result.errors == "foldersync: 'foldersync \(name)' is not implemented yet; it arrives with the operations it runs\n")
        #expect(result.output.isEmpty)
    }

    @Test("Usage errors are one line on stderr naming the cause, with exit code 2")
    func usageErrors() async throws {
        for (arguments, cause) in [
            (["doctor"], "--remote"),
            (["vacuum", "--remote", "/tmp", "--expire-clients-after", "90y"], "'90y' is not a duration"),
            (["nonsense"], "nonsense"),
            (["doctor", "--remote", "ftp://dav.example.com/share"], "unsupported location"),
            (["doctor", "--remote", "/nonexistent/folder"], "/nonexistent/folder: no such directory"),
        ] {
            let result = try await FoldersyncTool.run(arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.errors.hasPrefix("foldersync: ") && result.errors.filter { $0 == "\n" }.count == 1, "\(result.errors)")
            #expect(result.errors.contains(cause), "\(result.errors)")
        }
    }

    @Test("DURATION is a positive whole number and a unit: s, m (minutes), h, d, w")
    func durations() {
        let valid: [(String, TimeInterval)] = [("90d", 7_776_000), ("12h", 43_200), ("30m", 1_800), ("45s", 45), ("2w", 1_209_600), ("1d", 86_400)]
        for (text, seconds) in valid {
            #expect(ExpiryDuration(argument: text)?.seconds == seconds, "\(text)")
        }
        for text in ["", "d", "90", "0d", "-1d", "+1d", "1.5h", "90y", "90D", "9 0d", "１d", "99999999999999999999d", "999999999999999w"] {
            #expect(ExpiryDuration(argument: text) == nil, "\(text) should be refused")
        }
        #expect(throws: (any Error).self) { try ExpiryDuration.parse("12") }
    }
}
