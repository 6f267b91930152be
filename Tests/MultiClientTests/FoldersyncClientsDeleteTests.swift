import Foundation
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// `foldersync clients delete`, run as a binary: confirmation rules, what it removes and keeps, and the client's reset.
@Suite("foldersync clients delete")
struct FoldersyncClientsDeleteTests {
    struct Deletion: Decodable {
        struct Kept: Decodable {
            var path: String
            var reason: String
        }
        var application: String
        var document: String
        var client: String
        var alreadyDeleted: Bool
        var removed: [String]
        var kept: [Kept]
    }

    @Test("Without a terminal and without --yes it refuses: exit 2, one line, nothing written")
    func refusesWithoutYes() async throws {
        let directory = TemporaryDirectory()
        let scenario = try await MaintenanceScenario(directory)
        let before = try scenario.fingerprint()
        let result = try await FoldersyncTool.run([
            "clients", "delete", "client-B", "--document", "DOC", "--remote", scenario.root.path,
        ])
        #expect(result.status == 2)
        #expect(result.output.isEmpty)
        #expect(
            result.errors
                == "foldersync: clients delete: standard input is not a terminal, so it cannot ask; pass --yes to delete client-B without confirmation\n"
        )
        #expect(try scenario.fingerprint() == before)
        try await scenario.b.sync()  // B is untouched
    }

    @Test("With --yes it deletes: marker written, recent sync gone, change sets kept; the client gets clientDeleted")
    func deletesWithYes() async throws {
        let directory = TemporaryDirectory()
        let scenario = try await MaintenanceScenario(directory)
        let b1 = try scenario.changeSet("client-B", 1)
        let arguments = ["clients", "delete", "client-B", "--document", "DOC", "--remote", scenario.root.path, "--yes"]
        let result = try await FoldersyncTool.run(arguments + ["--json"])
        #expect(result.status == 0 && result.errors.isEmpty, "\(result.errors)")
        let deletion = try FoldersyncTool.json(Deletion.self, result)
        let recent = scenario.layout.recentSyncFile("DOC", client: "client-B").description
        let changes = scenario.layout.syncChangesDirectory("DOC", client: "client-B").description
        #expect(
            deletion.application == Fixture.application && deletion.document == "DOC" && deletion.client == "client-B")
        #expect(!deletion.alreadyDeleted)
        // B never uploaded a whole store: only what was there is reported removed.
        #expect(!scenario.exists(scenario.layout.wholeStoreDirectory("DOC", client: "client-B").description))
        #expect(deletion.removed == [recent])
        #expect(deletion.kept.map(\.path) == [changes])
        #expect(scenario.exists(scenario.layout.deletedClientFile("DOC", client: "client-B").description))
        #expect(!scenario.exists(recent) && scenario.exists(b1))

        await #expect { try await scenario.b.sync() } throws: { ($0 as? FolderSyncError)?.code == .clientDeleted }
        try await scenario.a.sync()  // the others carry on

        let again = try await FoldersyncTool.run(arguments)
        #expect(again.status == 0 && again.errors.isEmpty)
        #expect(again.output == "Client client-B was already deleted from document DOC; nothing to do.\n")

        let listed = try await FoldersyncTool.run([
            "clients", "list", "--remote", scenario.root.path, "--document", "DOC",
        ])
        #expect(listed.output.contains("Document DOC (Notes): 2 clients, 1 deleted\n"), "\(listed.output)")
        #expect(
            listed.output.split(separator: "\n").contains { $0.hasPrefix("  client-B") && $0.contains(" deleted ") },
            "\(listed.output)")
    }

    @Test(
        "Text lists what was removed and kept: after a vacuum, the only whole store stays; an unknown client is one line, exit 2"
    )
    func textAndUnknownClient() async throws {
        let directory = TemporaryDirectory()
        let scenario = try await MaintenanceScenario(directory)
        let vacuum = try await FoldersyncTool.run(["vacuum", "--remote", scenario.root.path])
        #expect(vacuum.status == 0, "\(vacuum.errors)")
        let result = try await FoldersyncTool.run([
            "clients", "delete", "client-A", "--document", "DOC", "--remote", scenario.root.path, "--yes",
        ])
        #expect(result.status == 0 && result.errors.isEmpty, "\(result.errors)")
        let layout = scenario.layout
        let removals = try FileManager.default.subpathsOfDirectory(
            atPath: scenario.root.appendingPathComponent(
                layout.removedDirectory("DOC").description
            ).path
        ).filter { $0.hasSuffix("/client-A.recentsync") }
        let removalFolder =
            layout.removedDirectory("DOC").description + "/"
            + (try #require(removals.first, "the recent sync is kept in the removed area")).split(separator: "/")
            .prefix(2).joined(separator: "/")
        #expect(
            result.output == """
                Deleted client client-A from document DOC; it stops with clientDeleted at its next sync and keeps its local data.
                  removed  \(layout.recentSyncFile("DOC", client: "client-A"))
                  moved    into \(removalFolder) (kept until a vacuum purges it after its grace period)
                  kept     \(layout.wholeStoreDirectory("DOC", client: "client-A")) (no other whole store holds the change sets already \
                vacuumed that it holds; vacuum removes it once another whole store contains everything it does)
                  kept     \(layout.syncChangesDirectory("DOC", client: "client-A")) (its change sets; vacuum removes them once every client has applied them)

                """, "\(result.output)")

        let unknown = try await FoldersyncTool.run([
            "clients", "delete", "client-Z", "--document", "DOC", "--remote", scenario.root.path, "--yes",
        ])
        #expect(unknown.status == 2 && unknown.output.isEmpty)
        #expect(
            unknown.errors
                == "foldersync: client client-Z is not registered with document DOC (found: client-A, client-B, client-C)\n"
        )
    }

    @Test(
        "On a terminal it asks: anything but yes cancels (exit 2, nothing deleted); y deletes",
        .enabled(if: FoldersyncTool.canRunOnTerminal))
    func asksOnATerminal() async throws {
        let directory = TemporaryDirectory()
        let scenario = try await MaintenanceScenario(directory)
        let before = try scenario.fingerprint()
        let arguments = ["clients", "delete", "client-C", "--document", "DOC", "--remote", scenario.root.path]

        let declined = try await FoldersyncTool.runOnTerminal(arguments, input: "n\n")
        #expect(declined.status == 2)
        #expect(declined.output.contains("Delete client client-C (C, last synced "), "\(declined.output)")
        #expect(declined.output.contains("(100d ago)) from document DOC? [y/N] "), "\(declined.output)")
        #expect(declined.output.contains("foldersync: cancelled; nothing was deleted"))
        #expect(try scenario.fingerprint() == before)

        let accepted = try await FoldersyncTool.runOnTerminal(arguments, input: "y\n")
        #expect(accepted.status == 0, "\(accepted.output)")
        #expect(accepted.output.contains("Deleted client client-C from document DOC"), "\(accepted.output)")
        #expect(scenario.exists(scenario.layout.deletedClientFile("DOC", client: "client-C").description))
    }
}
