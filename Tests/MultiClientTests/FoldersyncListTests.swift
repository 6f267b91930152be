import Foundation
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport
@testable import foldersync

/// `foldersync documents list` and `clients list`, run as a binary against a folder written by real syncs.
@Suite("foldersync documents list and clients list")
struct FoldersyncListTests {
    struct Documents: Decodable {
        struct Document: Decodable {
            var identifier: String
            var description: String?
            var userInfo: [String: String]
            var clients: [String]
            var lastActivity: String?
            var byteCount: Int64
        }
        var application: String
        var documents: [Document]
    }

    struct HeldBack: Decodable, Equatable {
        var changeSets: Int
        var bytes: Int64
        var exclusiveChangeSets: Int
        var exclusiveBytes: Int64
    }

    struct Clients: Decodable {
        struct Client: Decodable {
            var identifier: String
            var description: String?
            var userInfo: [String: String]
            var deleted: Bool
            var lastSync: String?
            var wholeStoreDate: String?
            var publishedSequence: Int64?
            var acknowledgement: [String: Int64]
            var holdsVacuumBack: Bool
            var heldBack: HeldBack
        }
        struct Document: Decodable {
            var identifier: String
            var description: String?
            var clients: [Client]
        }
        struct Unattached: Decodable {
            var identifier: String
            var description: String?
            var registrationDate: String?
        }
        var application: String
        var documents: [Document]
        var clientsWithoutDocuments: [Unattached]
    }

    @Test(
        "documents list: identifier, description, clients, last activity and size, as a table and as JSON; writes nothing"
    )
    func documentsList() async throws {
        let directory = TemporaryDirectory()
        let scenario = try await MaintenanceScenario(directory)
        let before = try scenario.fingerprint()

        let json = try await FoldersyncTool.run(["documents", "list", "--remote", scenario.root.path, "--json"])
        #expect(json.status == 0 && json.errors.isEmpty, "\(json.errors)")
        let listed = try FoldersyncTool.json(Documents.self, json)
        #expect(listed.application == Fixture.application)
        let document = try #require(listed.documents.first)
        #expect(listed.documents.count == 1)
        #expect(document.identifier == "DOC" && document.description == "Notes")
        #expect(document.clients == ["client-A", "client-B", "client-C"])
        let onDisk = try treeListing(of: scenario.root.appendingPathComponent("com.example.notes/Documents/DOC"))
            .filter { !$0.hasSuffix("/") }
            .reduce(Int64(0)) { $0 + (try scenario.size("com.example.notes/Documents/DOC/" + $1)) }
        #expect(document.byteCount == onDisk)
        let lastActivity = try #require(document.lastActivity.flatMap(Self.date))
        #expect(abs(lastActivity.timeIntervalSinceNow) < 600, "the newest last sync is A's or B's, not silent C's")

        let text = try await FoldersyncTool.run(["documents", "list", "--remote", scenario.root.path])
        #expect(text.status == 0 && text.errors.isEmpty)
        let lines = text.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(text.output)")
        #expect(lines[0] == "com.example.notes: 1 document")
        #expect(lines[1].hasPrefix("DOCUMENT  DESCRIPTION  CLIENTS  SIZE"))
        #expect(lines[2].hasPrefix("DOC       Notes        3        "), "\(lines[2])")
        #expect(try scenario.fingerprint() == before, "listing wrote to the shared folder")
    }

    @Test("clients list --document: last sync, whole store, acknowledgement, and what the silent client holds back")
    func clientsOfOneDocument() async throws {
        let directory = TemporaryDirectory()
        let scenario = try await MaintenanceScenario(directory)
        let before = try scenario.fingerprint()

        let json = try await FoldersyncTool.run([
            "clients", "list", "--remote", scenario.root.path, "--document", "DOC", "--json",
        ])
        #expect(json.status == 0 && json.errors.isEmpty, "\(json.errors)")
        let listed = try FoldersyncTool.json(Clients.self, json)
        #expect(listed.clientsWithoutDocuments.isEmpty, "only with --document omitted")
        let document = try #require(listed.documents.first)
        #expect(listed.documents.count == 1 && document.identifier == "DOC" && document.description == "Notes")
        let clients = Dictionary(uniqueKeysWithValues: document.clients.map { ($0.identifier, $0) })
        #expect(clients.keys.sorted() == ["client-A", "client-B", "client-C"])
        let a = try #require(clients["client-A"])
        let c = try #require(clients["client-C"])
        #expect(a.description == "A" && a.wholeStoreDate != nil && a.publishedSequence == 2 && !a.deleted)
        #expect(
            !a.holdsVacuumBack
                && a.heldBack == HeldBack(changeSets: 0, bytes: 0, exclusiveChangeSets: 0, exclusiveBytes: 0))
        #expect(clients["client-B"]?.acknowledgement == ["client-A": 2])
        #expect(c.acknowledgement == ["client-A": 1, "client-B": 1])
        #expect(c.wholeStoreDate == nil)
        let silentSince = try #require(c.lastSync.flatMap(Self.date))
        #expect(abs(silentSince.timeIntervalSinceNow + MaintenanceScenario.silence) < 600)
        let a2 = try scenario.size(try scenario.changeSet("client-A", 2))
        #expect(
            c.holdsVacuumBack
                && c.heldBack == HeldBack(changeSets: 1, bytes: a2, exclusiveChangeSets: 1, exclusiveBytes: a2))

        let text = try await FoldersyncTool.run([
            "clients", "list", "--remote", scenario.root.path, "--document", "DOC",
        ])
        #expect(text.status == 0 && text.errors.isEmpty)
        let lines = text.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 5, "\(text.output)")
        #expect(lines[0] == "Document DOC (Notes): 3 clients")
        #expect(lines[1].hasPrefix("  CLIENT    DESCRIPTION  LAST SYNC"))
        #expect(lines[1].contains("HOLDS VACUUM BACK") && lines[1].contains("ACKNOWLEDGED"))
        #expect(
            lines[2].hasPrefix("  client-A  A  ") && lines[2].contains(" no ") && lines[2].hasSuffix("client-B 1"),
            "\(lines[2])")
        #expect(lines[4].hasPrefix("  client-C  C  ") && lines[4].contains("(100d ago)"), "\(lines[4])")
        #expect(
            lines[4].contains("1 change set, \(Formatting.bytes(a2))") && lines[4].hasSuffix("client-A 1, client-B 1"),
            "\(lines[4])")
        #expect(try scenario.fingerprint() == before, "listing wrote to the shared folder")
    }

    @Test("clients list without --document: every document, then the clients registered with no document")
    func clientsOfEveryDocument() async throws {
        let directory = TemporaryDirectory()
        let scenario = try await MaintenanceScenario(directory)
        _ = try await TestClient.make(scenario.remote, name: "A2", in: directory, document: "OTHER")
        let (app, configuration) = Fixture.application(
            scenario.remote, client: "client-D", description: "spare tablet",
            environment: Fixture.quietEnvironment())
        try await app.register(configuration)

        let json = try await FoldersyncTool.run(["clients", "list", "--remote", scenario.root.path, "--json"])
        #expect(json.status == 0 && json.errors.isEmpty, "\(json.errors)")
        let listed = try FoldersyncTool.json(Clients.self, json)
        #expect(listed.documents.map(\.identifier) == ["DOC", "OTHER"])
        #expect(listed.documents[1].clients.map(\.identifier) == ["client-A2"])
        #expect(listed.clientsWithoutDocuments.map(\.identifier) == ["client-D"])
        #expect(listed.clientsWithoutDocuments.first?.description == "spare tablet")
        #expect(listed.clientsWithoutDocuments.first?.registrationDate != nil)

        let text = try await FoldersyncTool.run(["clients", "list", "--remote", scenario.root.path])
        #expect(text.status == 0)
        #expect(text.output.contains("Document OTHER (Notes): 1 client\n"), "\(text.output)")
        #expect(
            text.output.contains(
                "Registered with com.example.notes but with no document: 1 client\n  CLIENT    DESCRIPTION   REGISTERED\n  client-D  spare tablet  "
            ),
            "\(text.output)")
    }

    @Test("An unknown or unsafe --document is one line on stderr naming it, exit 2")
    func unknownDocument() async throws {
        let directory = TemporaryDirectory()
        let scenario = try await MaintenanceScenario(directory)
        for (arguments, cause) in [
            (
                ["clients", "list", "--document", "NOPE"],
                "--document NOPE: no such document in com.example.notes (found: DOC)"
            ),
            (["vacuum", "--document", "NOPE"], "--document NOPE: no such document in com.example.notes (found: DOC)"),
            (["clients", "delete", "client-A", "--yes", "--document", "NOPE"], "--document NOPE: no such document"),
            (["clients", "list", "--document", "../x"], "invalidIdentifier"),
        ] {
            let result = try await FoldersyncTool.run(arguments + ["--remote", scenario.root.path])
            #expect(result.status == 2, "\(arguments)")
            #expect(result.output.isEmpty)
            #expect(
                result.errors.hasPrefix("foldersync: ") && result.errors.filter { $0 == "\n" }.count == 1,
                "\(result.errors)")
            #expect(result.errors.contains(cause), "\(result.errors)")
        }
    }

    static func date(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }
}
