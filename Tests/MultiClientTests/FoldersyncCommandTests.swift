import Foundation
import Testing

@testable import TestSupport
@testable import foldersync

/// The command structure: help text of every subcommand, exit codes, usage errors, the DURATION parser.
@Suite("foldersync commands")
struct FoldersyncCommandTests {
    static let commands: [[String]] = [
        [], ["layout"], ["inspect"], ["doctor"], ["documents"], ["documents", "list"], ["clients"],
        ["clients", "list"], ["clients", "delete"], ["vacuum"], ["removed"], ["removed", "list"],
        ["removed", "restore"], ["export"],
        ["recreate"], ["store"], ["store", "detach"], ["store", "check"],
    ]

    @Test("--help of every subcommand matches its snapshot and exits 0", arguments: commands)
    func help(_ command: [String]) async throws {
        let result = try await FoldersyncTool.run(command + ["--help"])
        #expect(result.status == 0)
        #expect(result.errors.isEmpty)
        try expectSnapshot(result.output, named: (["foldersync"] + command).joined(separator: "-") + "-help")
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
            #expect(
                result.errors.hasPrefix("foldersync: ") && result.errors.filter { $0 == "\n" }.count == 1,
                "\(result.errors)")
            #expect(result.errors.contains(cause), "\(result.errors)")
        }
    }

    @Test("DURATION is a positive whole number and a unit: s, m (minutes), h, d, w")
    func durations() {
        let valid: [(String, TimeInterval)] = [
            ("90d", 7_776_000), ("12h", 43_200), ("30m", 1_800), ("45s", 45), ("2w", 1_209_600), ("1d", 86_400),
        ]
        for (text, seconds) in valid {
            #expect(ExpiryDuration(argument: text)?.seconds == seconds, "\(text)")
        }
        for text in [
            "", "d", "90", "0d", "-1d", "+1d", "1.5h", "90y", "90D", "9 0d", "１d", "99999999999999999999d",
            "999999999999999w",
        ] {
            #expect(ExpiryDuration(argument: text) == nil, "\(text) should be refused")
        }
        #expect(throws: (any Error).self) { try ExpiryDuration.parse("12") }
    }

    @Test("Tables show binary sizes, UTC dates with ages in DURATION units, and sequence ranges")
    func formatting() {
        #expect(
            Formatting.bytes(0) == "0 B" && Formatting.bytes(1023) == "1023 B" && Formatting.bytes(1536) == "1.5 KiB")
        #expect(Formatting.bytes(5 * 1024 * 1024) == "5.0 MiB")
        let date = Date(timeIntervalSince1970: 1_767_323_045)
        #expect(Formatting.date(date) == "2026-01-02 03:04:05Z" && Formatting.date(nil) == "-")
        #expect(
            Formatting.dateAndAge(date, now: date.addingTimeInterval(12 * 86_400 + 5))
                == "2026-01-02 03:04:05Z (12d ago)")
        #expect(
            Formatting.dateAndAge(date, now: date.addingTimeInterval(-400 * 86_400))
                == "2026-01-02 03:04:05Z (400d ahead of this computer's clock)")
        #expect(
            Formatting.dateAndAge(date, now: date.addingTimeInterval(-2)) == "2026-01-02 03:04:05Z (0s ago)",
            "a clock a little ahead")
        #expect(
            [Formatting.age(45), Formatting.age(180), Formatting.age(7200), Formatting.age(-3)] == [
                "45s", "3m", "2h", "0s",
            ])
        #expect(
            Formatting.ranges([5, 1, 2, 3, 7, 8, 3]) == "1–3, 5, 7–8" && Formatting.ranges([4]) == "4"
                && Formatting.ranges([]) == "")
    }
}
