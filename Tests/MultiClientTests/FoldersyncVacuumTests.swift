import Foundation
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport
@testable import foldersync

/// `foldersync vacuum`, run as a binary: the dry run's plan is what the real run does, expiry, every document, doctor
/// after.
@Suite("foldersync vacuum")
struct FoldersyncVacuumTests {
    struct Vacuum: Decodable {
        struct Removal: Decodable, Equatable {
            var path: String
            var reason: String
            var bytes: Int64
        }
        struct Skipped: Decodable {
            var path: String
            var reason: String
        }
        struct Failure: Decodable {
            var path: String
            var error: String
        }
        struct WholeStores: Decodable {
            var verified: Int
            var verifiedEarlier: Int
            var bytesRead: Int64
            var damaged: [Skipped]
        }
        struct Document: Decodable {
            var identifier: String
            var removed: [Removal]
            var bytesFreed: Int64
            var heldBack: [String: FoldersyncListTests.HeldBack]
            var expiredClients: [String]
            var skipped: [Skipped]
            var failures: [Failure]
            var wholeStores: WholeStores
            var error: String?
        }
        var application: String
        var dryRun: Bool
        var expireClientsAfter: String?
        var documents: [Document]
        var removedCount: Int
        var bytesFreed: Int64
        var failed: Bool
    }

    private func vacuum(_ scenario: MaintenanceScenario, _ extra: [String] = []) async throws -> Vacuum {
        let result = try await FoldersyncTool.run(["vacuum", "--remote", scenario.root.path, "--json"] + extra)
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.errors.isEmpty, "no progress line when standard error is not a terminal")
        return try FoldersyncTool.json(Vacuum.self, result)
    }

    private func expectHealthy(_ scenario: MaintenanceScenario) async throws {
        let doctor = try await FoldersyncTool.run(["doctor", "--remote", scenario.root.path])
        // What the vacuum removed is kept in the removed area: doctor says so, as information.
        let lines = doctor.output.split(separator: "\n")
        #expect(
            doctor.status == 0 && lines.first == "Checked com.example.notes (1 document)."
                && lines.last == "Healthy (1 info).",
            "\(doctor.output)")
        #expect(
            lines.contains { $0.hasPrefix("info     removedArea") && $0.hasSuffix("/Documents/DOC/Removed") },
            "\(doctor.output)")
    }

    @Test("--dry-run deletes nothing and reports the plan the real vacuum then executes; doctor finds the tree healthy")
    func dryRunThenReal() async throws {
        let directory = TemporaryDirectory()
        let scenario = try await MaintenanceScenario(directory)
        let a1 = try scenario.changeSet("client-A", 1)
        let b1 = try scenario.changeSet("client-B", 1)
        let a2 = try scenario.changeSet("client-A", 2)
        let before = try scenario.fingerprint()

        let dry = try await vacuum(scenario, ["--dry-run"])
        #expect(try scenario.fingerprint() == before, "a dry run changed the tree")
        #expect(dry.application == Fixture.application && dry.dryRun && dry.expireClientsAfter == nil && !dry.failed)
        let document = try #require(dry.documents.first)
        #expect(dry.documents.count == 1 && document.identifier == "DOC" && document.error == nil)
        let expected = [
            Vacuum.Removal(path: a1, reason: "changeSet", bytes: try scenario.size(a1)),
            Vacuum.Removal(path: b1, reason: "changeSet", bytes: try scenario.size(b1)),
        ]
        #expect(document.removed == expected)
        #expect(document.bytesFreed == expected.reduce(0) { $0 + $1.bytes } && dry.bytesFreed == document.bytesFreed)
        #expect(dry.removedCount == 2)
        let heldByC = FoldersyncListTests.HeldBack(
            changeSets: 1, bytes: try scenario.size(a2), exclusiveChangeSets: 1,
            exclusiveBytes: try scenario.size(a2))
        #expect(document.heldBack == ["client-C": heldByC])
        #expect(document.expiredClients.isEmpty && document.skipped.isEmpty && document.failures.isEmpty)
        let wholeStoreBytes = try scenario.wholeStoreBytes()
        #expect(
            document.wholeStores.verified == 1 && document.wholeStores.verifiedEarlier == 0
                && document.wholeStores.bytesRead == wholeStoreBytes && document.wholeStores.damaged.isEmpty,
            "the one whole store is read once and matches: \(document.wholeStores)")

        let text = try await FoldersyncTool.run(["vacuum", "--remote", scenario.root.path, "--dry-run"])
        #expect(text.status == 0 && text.errors.isEmpty)
        let lines = text.output.split(separator: "\n").map(String.init)
        let freed = Formatting.bytes(document.bytesFreed)
        #expect(lines.first == "Dry run of vacuum in com.example.notes: nothing is removed or written.")
        #expect(
            lines.contains(
                "Document DOC: would remove 2 items (\(freed)), kept 14d in the removed area before a vacuum purges them"
            ),
            "\(text.output)")
        let folderA = scenario.layout.syncChangesDirectory("DOC", client: "client-A").description
        #expect(
            lines.contains {
                $0.hasPrefix("  1 change set  \(Formatting.bytes(expected[0].bytes))")
                    && $0.hasSuffix(" \(folderA) (sequence 1)")
            }, "one line per author's folder: \(text.output)")
        #expect(lines.count == 7, "\(text.output)")
        #expect(
            lines.contains(
                "  whole stores verified: 1 (\(Formatting.bytes(wholeStoreBytes)) read), 0 unchanged since verified earlier"
            ),
            "a store change sets are removed on the word of is read again, remembered or not: \(text.output)")
        #expect(
            lines.contains {
                $0.hasPrefix("  held back") && $0.contains("by client client-C")
                    && $0.hasSuffix("1 change set, \(Formatting.bytes(heldByC.bytes))")
            }, "\(text.output)")
        #expect(lines.last == "Total: would remove 2 items (\(freed)) in 1 document.")

        let real = try await vacuum(scenario)
        #expect(!real.dryRun && !real.failed)
        #expect(real.documents.first?.removed == document.removed, "the real vacuum ran the dry run's plan")
        #expect(real.documents.first?.heldBack == document.heldBack)
        #expect(!scenario.exists(a1) && !scenario.exists(b1) && scenario.exists(a2))
        try await expectHealthy(scenario)

        try scenario.c.execute("INSERT INTO notes(id, title) VALUES ('n4', 'from C')")
        try await converge(scenario.a, scenario.b, scenario.c)
        #expect(try NotesSchema.dump(scenario.a.store) == NotesSchema.dump(scenario.c.store))
        #expect(try NotesSchema.dump(scenario.b.store) == NotesSchema.dump(scenario.c.store))
        let again = try await vacuum(scenario, ["--dry-run"])
        #expect(again.documents.first?.heldBack.isEmpty == true, "C caught up")
    }

    @Test(
        "--expire-clients-after expires a silent client: dry run writes nothing, the real run marks it; it gets clientDeleted"
    )
    func expiry() async throws {
        let directory = TemporaryDirectory()
        let scenario = try await MaintenanceScenario(directory)
        let a2 = try scenario.changeSet("client-A", 2)
        let marker = scenario.layout.deletedClientFile("DOC", client: "client-C").description
        let recent = scenario.layout.recentSyncFile("DOC", client: "client-C").description

        let longer = try await vacuum(scenario, ["--dry-run", "--expire-clients-after", "200d"])
        #expect(longer.expireClientsAfter == "200d" && longer.documents.first?.expiredClients == [])

        let before = try scenario.fingerprint()
        let dry = try await vacuum(scenario, ["--dry-run", "--expire-clients-after", "30d"])
        #expect(try scenario.fingerprint() == before, "a dry run wrote a marker or removed a file")
        let document = try #require(dry.documents.first)
        #expect(document.expiredClients == ["client-C"])
        #expect(document.heldBack.isEmpty, "nobody left holds anything back")
        #expect(
            document.removed.contains(
                .init(path: recent, reason: "deletedClientRecentSync", bytes: try scenario.size(recent))))
        #expect(document.removed.contains { $0.path == a2 && $0.reason == "changeSet" })

        let text = try await FoldersyncTool.run([
            "vacuum", "--remote", scenario.root.path, "--dry-run", "--expire-clients-after", "30d",
        ])
        #expect(
            text.output.contains(
                "  would expire client client-C: silent for longer than 30d; it would be marked deleted\n"),
            "\(text.output)")

        let real = try await vacuum(scenario, ["--expire-clients-after", "30d"])
        #expect(real.documents.first?.expiredClients == ["client-C"])
        #expect(real.documents.first?.removed == document.removed)
        #expect(scenario.exists(marker) && !scenario.exists(recent) && !scenario.exists(a2))
        try await expectHealthy(scenario)

        await #expect { try await scenario.c.sync() } throws: { ($0 as? FolderSyncError)?.code == .clientDeleted }
        try await converge(scenario.a, scenario.b)
        #expect(try NotesSchema.dump(scenario.a.store) == NotesSchema.dump(scenario.b.store))
    }

    @Test("Without --document every document is vacuumed; on a terminal a [n/m] progress line goes to standard error")
    func everyDocument() async throws {
        let directory = TemporaryDirectory()
        let scenario = try await MaintenanceScenario(directory)
        let other = try await TestClient.make(scenario.remote, name: "A2", in: directory, document: "OTHER")
        try other.execute("INSERT INTO notes(id, title) VALUES ('o1', 'other')")
        try await other.sync()

        let dry = try await vacuum(scenario, ["--dry-run"])
        #expect(dry.documents.map(\.identifier) == ["DOC", "OTHER"])
        #expect(dry.documents[1].removed.isEmpty, "OTHER has no whole store, so every change set stays")
        let only = try await vacuum(scenario, ["--dry-run", "--document", "OTHER"])
        #expect(only.documents.map(\.identifier) == ["OTHER"])

        guard FoldersyncTool.canRunOnTerminal else { return }
        let terminal = try await FoldersyncTool.runOnTerminal(
            ["vacuum", "--remote", scenario.root.path, "--dry-run"], input: "")
        #expect(terminal.status == 0)
        #expect(
            terminal.output.hasPrefix("\r[1/2] document DOC\r[2/2] document OTHER"),
            "\(terminal.output.debugDescription)")
        #expect(terminal.output.contains("\rDry run of vacuum"), "the progress line is erased before the report")
    }
}
