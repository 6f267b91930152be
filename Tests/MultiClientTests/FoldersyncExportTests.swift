import FolderSyncTesting
import Foundation
import GRDB
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// `foldersync export` driven as an operator would, on a folder made by the library.
@Suite("foldersync export")
struct FoldersyncExportTests {
    @Test("export writes the converged rows; a second export to the same path fails cleanly with exit code 2")
    func export() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let remote = FileManagerFileSystem(rootURL: root)
        let (a, b) = try await TestClient.pair(remote, in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'from A')")
        try b.execute("INSERT INTO notes(id, title) VALUES ('n2', 'from B')")
        try await converge(a, b)
        _ = try await b.document.uploadWholeStore()
        try a.execute("UPDATE notes SET title = 'edited after the store' WHERE id = 'n1'")
        try await converge(a, b)

        let output = directory.url.appendingPathComponent("out.sqlite").path
        let result = try await FoldersyncTool.run([
            "export", "--remote", root.path, "--document", "DOC", "--output", output, "--json",
        ])
        #expect(result.status == 0, "\(result.errors)")
        struct Summary: Decodable {
            var changeSetsApplied: Int
            var rows: [String: Int]
            var wholeStore: String?
        }
        let summary = try FoldersyncTool.json(Summary.self, result)
        #expect(summary.rows["notes"] == 2 && summary.wholeStore != nil && summary.changeSetsApplied == 1)
        let exported = try await DatabaseQueue(path: output).read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM notes ORDER BY id").map { "notes \($0)" }
        }
        #expect(try exported == NotesSchema.dump(a.store).filter { $0.hasPrefix("notes ") })

        let again = try await FoldersyncTool.run([
            "export", "--remote", root.path, "--document", "DOC", "--output", output,
        ])
        #expect(again.status == 2 && again.errors.contains(output), "\(again.errors)")
    }
}
