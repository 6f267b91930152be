import Foundation
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// `foldersync layout` and `foldersync inspect`, run as a binary against files the library wrote.
@Suite("foldersync layout and inspect")
struct FoldersyncInspectTests {
    @Test("layout --json is the library's catalog, byte for byte; layout prints every entry")
    func layout() async throws {
        let json = try await FoldersyncTool.run(["layout", "--json"])
        #expect(json.status == 0)
        #expect(Data(json.output.utf8) == (try RemoteLayout.catalogJSON()))
        let document = try FoldersyncTool.json(RemoteLayoutDocument.self, json)
        #expect(document.entries.contains { $0.pattern == "<appID>/Quarantine/<timestamp>/" })
        let text = try await FoldersyncTool.run(["layout"])
        #expect(text.status == 0)
        for entry in RemoteLayout.catalog {
            let name = entry.pattern.split(separator: "/").last! + (entry.kind == .directory ? "/" : "")
            #expect(text.output.contains(name + " ") && text.output.contains(entry.summary), "\(entry.pattern)")
        }
    }

    /// A tree where A published one change set with every kind of value, and B synced it.
    private func tree(_ directory: TemporaryDirectory) async throws -> (root: URL, changeSet: URL) {
        let root = directory.subdirectory("remote")
        let remote = FileManagerFileSystem(rootURL: root)
        let (a, b) = try await TestClient.pair(remote, in: directory)
        try a.execute("INSERT INTO folders(id, name) VALUES ('f1', 'Home')")
        try a.execute("INSERT INTO notes(id, title, body, folder_id) VALUES ('n1', 'Line \"one\"', NULL, 'f1')")
        try a.execute("INSERT INTO tags(id, name) VALUES ('t1', 'x')")
        try a.execute("UPDATE tags SET name = 2.5 WHERE id = 't1'")  // TEXT affinity: stored as the text "2.5"
        try a.execute("INSERT INTO tags(id, name) VALUES ('t2', x'00ff')")
        try await converge(a, b)
        let folder = root.appendingPathComponent("com.example.notes/Documents/DOC/SyncChanges/client-A")
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: folder.path).first)
        return (root, folder.appendingPathComponent(name))
    }

    struct ChangeSetJSON: Decodable {
        struct Header: Decodable {
            var changeSetIdentifier, clientIdentifier, createdAt: String
            var sequence: Int64
            var schemaVersion, changeCount: Int
            var dependencies: [String: Int64]
        }
        struct Change: Decodable {
            struct Column: Decodable {
                struct Value: Decodable, Equatable {
                    var type: String
                    var value: JSONValue?
                    var base64: String?
                }
                struct Timestamp: Decodable {
                    var hlc: UInt64
                    var time: String
                    var counter: Int
                }
                var column: String
                var value: Value
                var timestamp: Timestamp
            }
            var kind, table, syncID: String
            var columns: [Column]
        }
        var file, kind: String
        var header: Header
        var changes: [Change]
    }

    enum JSONValue: Decodable, Equatable {
        case number(Double)
        case string(String)
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Double.self) {
                self = .number(number)
            } else {
                self = .string(try container.decode(String.self))
            }
        }
    }

    @Test("inspect decodes a change set: header, then one line (or JSON object) per change with values and timestamps")
    func changeSet() async throws {
        let directory = TemporaryDirectory()
        let (_, file) = try await tree(directory)
        let text = try await FoldersyncTool.run(["inspect", file.path])
        #expect(text.status == 0, "\(text.errors)")
        let lines = text.output.split(separator: "\n").map(String.init)
        #expect(lines.first == file.path)
        #expect(lines.contains("  client          client-A"))
        #expect(lines.contains("  sequence        1"))
        #expect(lines.contains("  changes         4"))
        let changes = lines.filter { !$0.hasPrefix(" ") && $0 != file.path }
        #expect(changes.count == 4)
        #expect(
            changes.contains {
                $0.hasPrefix("insert notes n1 ") && $0.contains(#"title="Line \"one\""@"#) && $0.contains("body=NULL@")
            })
        #expect(changes.contains { $0.hasPrefix("insert tags t1 ") && $0.contains(#"name="2.5"@"#) })
        #expect(changes.contains { $0.hasPrefix("insert tags t2 ") && $0.contains("name=x'00ff'@") })

        let json = try await FoldersyncTool.run(["inspect", "--json", file.path])
        #expect(json.status == 0)
        let decoded = try FoldersyncTool.json(ChangeSetJSON.self, json)
        #expect(decoded.kind == "changeSet" && decoded.file == file.path)
        #expect(
            decoded.header.clientIdentifier == "client-A" && decoded.header.sequence == 1
                && decoded.header.changeCount == 4)
        #expect(decoded.changes.count == 4)
        let note = try #require(decoded.changes.first { $0.syncID == "n1" })
        #expect(note.kind == "insert" && note.table == "notes")
        #expect(
            note.columns.first { $0.column == "title" }?.value == .init(type: "text", value: .string("Line \"one\"")))
        #expect(note.columns.first { $0.column == "body" }?.value == .init(type: "null"))
        let blob = try #require(decoded.changes.first { $0.syncID == "t2" }?.columns.first { $0.column == "name" })
        #expect(blob.value == .init(type: "blob", base64: "AP8="))
        #expect(blob.timestamp.hlc > 0 && blob.timestamp.time.hasSuffix("Z"))
        // One change object per line: the output streams.
        #expect(json.output.split(separator: "\n").count == 4 + 2)
    }

    @Test("inspect decodes every FolderSync property list, as text and as JSON")
    func propertyLists() async throws {
        let directory = TemporaryDirectory()
        let (root, _) = try await tree(directory)
        let app = root.appendingPathComponent("com.example.notes")
        let manifest = WholeStoreManifest(
            clientIdentifier: "client-A", wholeStoreIdentifier: "W1", creationDate: Fixture.date,
            schemaVersion: 1, covers: ["client-A": 1], wholeStoreByteCount: 10, wholeStoreChecksum: 7)
        let manifestURL = directory.url.appendingPathComponent("AppliedSyncChangeSets.ticdsync")
        try PropertyListFile.encode(manifest).write(to: manifestURL)
        let deleted = DeletedClientInfo(clientIdentifier: "client-C", deletedBy: "operator", deletionDate: Fixture.date)
        let deletedURL = directory.url.appendingPathComponent("client-C.plist")
        try PropertyListFile.encode(deleted).write(to: deletedURL)
        let files: [(URL, String, String)] = [
            (app.appendingPathComponent("FormatVersion.plist"), "formatVersion", "layoutVersion"),
            (app.appendingPathComponent("ClientDevices/client-A/deviceInfo.plist"), "deviceInfo", "clientDescription"),
            (app.appendingPathComponent("Documents/DOC/documentInfo.plist"), "documentInfo", "integrityKey"),
            (
                app.appendingPathComponent("Documents/DOC/RecentSyncs/client-B.recentsync"), "recentSync",
                "acknowledgement"
            ),
            (manifestURL, "appliedSyncChangeSets", "covers"),
            (deletedURL, "deletedClient", "deletedBy"),
        ]
        struct Output: Decodable {
            var file: String
            var kind: String
            var contents: [String: JSONAny]
        }
        struct JSONAny: Decodable {}
        for (url, kind, key) in files {
            let text = try await FoldersyncTool.run(["inspect", url.path])
            #expect(text.status == 0, "\(url.lastPathComponent): \(text.errors)")
            #expect(text.output.contains("  kind  ") && text.output.contains(kind) && text.output.contains(key))
            let json = try await FoldersyncTool.run(["inspect", "--json", url.path])
            let decoded = try FoldersyncTool.json(Output.self, json)
            #expect(decoded.kind == kind && decoded.file == url.path && decoded.contents[key] != nil, "\(kind)")
        }
        let recent = try await FoldersyncTool.run(["inspect", files[3].0.path])
        #expect(recent.output.contains("client-A=1"), "B acknowledges A's change set 1: \(recent.output)")
        let manifestText = try await FoldersyncTool.run(["inspect", manifestURL.path])
        #expect(
            manifestText.output.contains("2026-01-02T03:04:05") && manifestText.output.contains("client-A=1"),
            "\(manifestText.output)")
    }

    @Test("A bad file exits 2 with one line naming the file and the cause")
    func badFiles() async throws {
        let directory = TemporaryDirectory()
        let (root, changeSet) = try await tree(directory)
        let bytes = try Data(contentsOf: changeSet)
        try bytes.prefix(bytes.count / 2).write(to: changeSet)
        let garbage = directory.url.appendingPathComponent("notes.txt")
        try Data("hello".utf8).write(to: garbage)
        let recent = root.appendingPathComponent("com.example.notes/Documents/DOC/RecentSyncs/client-A.recentsync")
        var plist = try String(contentsOf: recent, encoding: .utf8)
        plist = plist.replacingOccurrences(of: "<string>client-A</string>", with: "<string>client-Z</string>")
        try plist.write(to: recent, atomically: true, encoding: .utf8)
        for (url, cause) in [
            (changeSet, "is truncated"), (garbage, "not a FolderSync file"), (recent, "fails its checksum"),
            (directory.url.appendingPathComponent("missing.syncchg"), "no such file"),
        ] {
            for json in [false, true] {
                let result = try await FoldersyncTool.run(["inspect", url.path] + (json ? ["--json"] : []))
                #expect(result.status == 2)
                #expect(result.output.isEmpty, "nothing is printed before the file is verified")
                #expect(
                    result.errors.hasPrefix("foldersync: ") && result.errors.filter { $0 == "\n" }.count == 1,
                    "\(result.errors)")
                #expect(result.errors.contains(url.path) && result.errors.contains(cause), "\(result.errors)")
            }
        }
    }
}
