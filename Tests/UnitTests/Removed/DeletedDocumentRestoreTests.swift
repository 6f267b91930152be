import Foundation
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// A deleted document brought back from the application's removed area (issue 39): `restoreRemoved()` of the document
/// puts its folder back whole and removes its deletion marker; a device that saw the deletion resumes with `rejoin()`,
/// one that never saw it syncs on, and a new device joins with every row.
@Suite("Deleted document restore")
struct DeletedDocumentRestoreTests {
    /// Every file under `folder` of the local remote at `root`, by path relative to the remote, with its bytes.
    private func files(under folder: RemotePath, of root: URL) throws -> [String: Data] {
        let base = root.appendingPathComponent(folder.description)
        var files: [String: Data] = [:]
        let enumerator = try #require(
            FileManager.default.enumerator(at: base, includingPropertiesForKeys: [.isRegularFileKey]))
        for case let url as URL in enumerator
        where try url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true {
            let relative = url.standardizedFileURL.path.dropFirst(root.standardizedFileURL.path.count + 1)
            files[String(relative)] = try Data(contentsOf: url)
        }
        return files
    }

    @Test("restore by document brings a deleted document back whole; devices resume, a new one joins with every row")
    func restoreDeletedDocument() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let remote = FileManagerFileSystem(rootURL: root)
        let layout = try RemoteLayout(applicationIdentifier: Fixture.application)
        let (a, b) = try await TestClient.pair(remote, in: directory)
        let c = try await TestClient.make(remote, name: "C", in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'from A')")
        try await a.sync()
        try b.execute("INSERT INTO notes(id, title) VALUES ('n2', 'from B')")
        try await b.sync()
        try await a.sync()
        _ = try await a.document.uploadWholeStore()
        try await c.sync()
        try b.execute("INSERT INTO notes(id, title) VALUES ('n3', 'unpublished on B')")
        let before = try files(under: layout.documentDirectory("DOC"), of: root)

        try await a.app.deleteDocument(identifier: "DOC")
        await #expect { try await a.sync() } throws: { ($0 as? FolderSyncError)?.code == .documentDeleted }
        await #expect { try await b.sync() } throws: { ($0 as? FolderSyncError)?.code == .documentDeleted }

        let maintenance = try DocumentMaintenance(
            context: DocumentOperationContext(
                fileSystem: remote, layout: layout,
                documentIdentifier: "DOC", clientIdentifier: "foldersync"))
        let deletion = try #require(
            try await maintenance.removals().first { $0.record?.operation == .documentDeletion })
        #expect(
            deletion.record?.removedBy == "client-A" && deletion.folder.hasPrefix(layout.applicationRemovedDirectory))
        #expect(Set(deletion.files.map(\.originalPath.description)) == Set(before.keys))

        let report = try await maintenance.restoreRemoved()
        #expect(report.skipped.isEmpty, "\(report.skipped)")
        #expect(Set(report.restored.map(\.description)) == Set(before.keys))
        #expect(
            try files(under: layout.documentDirectory("DOC"), of: root) == before, "the folder is back byte for byte")
        #expect(try await !remote.exists(layout.deletedDocumentFile("DOC")))
        #expect(try await a.app.previouslySynchronizedDocuments().map(\.identifier) == ["DOC"])

        // B saw the deletion: re-joining finds its document back and resumes, publishing only what it had not.
        let rejoined = try await b.document.rejoin()
        #expect(rejoined.changeSetsSent == 1 && rejoined.changesSent == 1, "\(rejoined)")
        #expect(b.document.resetState == nil)
        try await a.document.rejoin()
        // C never saw it: it syncs on.
        try await c.sync()
        let d = try await TestClient.make(remote, name: "D", in: directory)
        try await d.sync()
        let rows = try NotesSchema.dump(d.store)
        #expect(rows.count == 3 && rows.contains { $0.contains("unpublished on B") }, "\(rows)")
        for client in [a, b, c] { #expect(try NotesSchema.dump(client.store) == rows) }

        // Nothing is left to restore: the deletion's folder is empty of the document.
        #expect(try await maintenance.restoreRemoved() == RemovalRestoreReport())
    }

    @Test("a document created again since its deletion keeps its folder; the deleted one stays in the removed area")
    func createdAgainStays() async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let layout = try RemoteLayout(applicationIdentifier: Fixture.application)
        let (a, b) = try await TestClient.pair(remote, in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'from A')")
        try await a.sync()
        try await b.sync()
        let key = try #require(b.document.integrityKey)
        try await a.app.deleteDocument(identifier: "DOC")
        await #expect { try await b.sync() } throws: { ($0 as? FolderSyncError)?.code == .documentDeleted }
        try await b.document.rejoin()
        #expect(b.document.integrityKey != key, "a new epoch")

        let maintenance = try DocumentMaintenance(
            context: DocumentOperationContext(
                fileSystem: remote, layout: layout,
                documentIdentifier: "DOC", clientIdentifier: "foldersync"))
        let report = try await maintenance.restoreRemoved()
        #expect(report.restored.isEmpty)
        #expect(
            report.skipped.count == 1 && report.skipped.first?.reason.contains("is there again") == true, "\(report)")
        #expect(try await remote.integrityKeys(of: "DOC", layout: layout) == [try #require(b.document.integrityKey)])
        #expect(try await maintenance.removals().contains { $0.record?.operation == .documentDeletion })
    }

    /// Found while designing the restore: between a restore's move of the folder and its removal of the marker (or
    /// after a deletion that stopped before its move), a device that registers and creates the document anew deleted
    /// the folder it found, with every file in it, at once.
    @Test("creating a deleted document anew moves the folder left behind into the removed area, never deletes it")
    func creatingAnewKeepsTheLeftFolder() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let remote = FileManagerFileSystem(rootURL: root)
        let layout = try RemoteLayout(applicationIdentifier: Fixture.application)
        let (a, _) = try await TestClient.pair(remote, in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'from A')")
        try await a.sync()
        let before = try files(under: layout.documentDirectory("DOC"), of: root)
        // A deletion that wrote its marker and stopped: the folder is still there.
        try await remote.createDirectory(at: layout.deletedDocumentsDirectory)
        try await remote.write(
            try PropertyListFile.encode(
                DeletedDocumentInfo(
                    documentIdentifier: "DOC", deletedByClient: "client-A",
                    deletionDate: Date().wholeSeconds)),
            to: layout.deletedDocumentFile("DOC"))

        let e = try await TestClient.make(remote, name: "E", in: directory)
        #expect(e.document.integrityKey != a.document.integrityKey, "E created the document anew")
        let maintenance = try DocumentMaintenance(
            context: DocumentOperationContext(
                fileSystem: remote, layout: layout,
                documentIdentifier: "DOC", clientIdentifier: "foldersync"))
        let kept = try #require(
            try await maintenance.removals().first { $0.record?.operation == .documentDeletion },
            "the old folder was deleted at once")
        #expect(kept.record?.removedBy == "client-E")
        #expect(Set(kept.files.map(\.originalPath.description)) == Set(before.keys))
    }
}
