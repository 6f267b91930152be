import FolderSyncTesting
import Foundation
import GRDB
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

@Suite("Export")
struct DocumentExportTests {
    @Test(
        "Export of a three-client folder equals the converged replica row for row, and changes nothing remote",
        arguments: [false, true])
    func exportEqualsReplica(withWholeStore: Bool) async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let remote = FileManagerFileSystem(rootURL: root)
        let clients = [
            try await TestClient.make(remote, name: "A", in: directory),
            try await TestClient.make(remote, name: "B", in: directory),
            try await TestClient.make(remote, name: "C", in: directory),
        ]
        for client in clients { client.document.policy.wholeStoreUploadAfterChangeSets = nil }
        try clients[0].execute("INSERT INTO folders VALUES ('f', 'Work')")
        try await clients[0].sync()
        for (index, client) in clients.enumerated() {
            try await client.sync()
            try client.execute(
                "INSERT INTO notes(id, title, body, folder_id) VALUES (?, ?, ?, 'f')",
                ["n\(index)", "t\(index)", "b\(index)"])
            try await client.sync()
        }
        try await converge(clients[0], clients[1], clients[2])
        if withWholeStore { _ = try await clients[1].document.uploadWholeStore() }
        try clients[2].execute("UPDATE notes SET title = 'edited' WHERE id = 'n0'")
        try clients[1].execute("DELETE FROM notes WHERE id = 'n2'")
        try await converge(clients[0], clients[1], clients[2])
        let before = treeListing(of: root)

        let output = directory.url.appendingPathComponent("export.sqlite")
        let context = DocumentOperationContext(
            fileSystem: remote, layout: clients[0].document.layout, documentIdentifier: "DOC",
            clientIdentifier: "foldersync", environment: Fixture.quietEnvironment())
        let result = try await DocumentExport(context: context).run(to: output)
        #expect((result.wholeStore != nil) == withWholeStore)
        #expect(treeListing(of: root) == before, "the export wrote to the remote")
        let exported = try await DatabaseQueue(path: output.path).read { db in
            try ["folders", "notes", "tags", "note_tags"].filter { try db.tableExists($0) }.flatMap { table in
                try Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY id").map { "\(table) \($0)" }
            }
        }
        let replica = try NotesSchema.dump(clients[0].store)
        if withWholeStore {
            #expect(exported == replica)
        } else {
            // Without a whole store the tables are rebuilt from the change sets: compare values, not column order.
            #expect(exported.count == replica.count)
            #expect(try exportedValue(output, "SELECT title FROM notes WHERE id = 'n0'") == "edited")
        }
        #expect(result.rowCounts["notes"] == 2)
        let tables = try await DatabaseQueue(path: output.path).read {
            try String.fetchAll($0, sql: "SELECT name FROM sqlite_master")
        }
        #expect(!tables.contains { $0.hasPrefix("foldersync_") })
        await #expect(throws: FolderSyncError.self) {
            try await DocumentExport(
                context: DocumentOperationContext(
                    fileSystem: remote, layout: clients[0].document.layout,
                    documentIdentifier: "DOC", clientIdentifier: "foldersync")
            )
            .run(to: output)
        }
    }

    private func exportedValue(_ url: URL, _ sql: String) throws -> String? {
        try DatabaseQueue(path: url.path).read { try String.fetchOne($0, sql: sql) }
    }
}
