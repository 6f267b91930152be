import Foundation
import GRDB
import Testing

@_spi(Tooling) @_spi(ModelAdapter) @testable import FolderSync
@testable import TestSupport

/// `fixtures/encrypted-tree/`: a whole encrypted shared folder, as two clients left it, kept to be read forever.
/// Its salts and keys are random (as every encrypted folder's are): it is pinned by opening it, not by its bytes.
enum EncryptedTree {
    static let directory = Golden.url("encrypted-tree")
    static let files = directory.appendingPathComponent("files")
    static let password = "golden tree: correct horse battery staple"

    /// What a client that joins the tree holds once it synced: the `row|` lines of its neutral dump.
    static let rows: [String] = [
        NeutralDump.row(
            "notes", "n1",
            ["title": .text("Secret plan | é"), "n": .integer(-7), "x": .real(0.25), "b": .blob(Data([0xCA, 0xFE]))]),
        NeutralDump.row("notes", "n3", ["title": .text("edited by A"), "n": .integer(3)]),
        NeutralDump.row(
            "notes", "n4", ["title": .text("after the whole store"), "b": .blob(attachment.databaseValue)]),
        NeutralDump.row("tags", "t1", ["name": .text("from B")]),
    ].sorted()

    /// The file attached to `n4` (stored under `Attachments/`).
    static let attachmentContents = Data(String(repeating: "attached to the encrypted golden tree. ", count: 30).utf8)
    static var attachment: AttachmentReference {
        GoldenCatalog.reference(of: attachmentContents, metadata: ["name": "plan.txt"])
    }

    static func client(
        _ remote: any RemoteFileSystem, id: String, folder: URL, password: String = password,
        environment: SyncEnvironment
    ) async throws -> (DocumentSyncManager, GRDBStore) {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let store = try Golden.openStore(folder.appendingPathComponent("store.sqlite"))
        let app = ApplicationSyncManager(remote: remote, environment: environment)
        app.encryptionHandler = { _ in .password(password) }
        try await app.register(
            .init(
                applicationIdentifier: "com.example.notes", clientIdentifier: id,
                clientDescription: "golden \(id.prefix(1))"))
        let document = try await DocumentSyncManager(
            applicationSyncManager: app,
            registering: .init(
                documentIdentifier: Golden.document, documentDescription: "Notes",
                helperDirectory: folder.appendingPathComponent("helper")),
            store: store, remoteDocumentCreationHandler: { _ in true })
        return (document, store)
    }

    /// Writes the tree (only when it is missing, see ``Golden/recordingNew``).
    static func record(scratch: URL) async throws {
        let root = scratch.appendingPathComponent("remote")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let remote = FileManagerFileSystem(rootURL: root)
        let environment = Fixture.environment()
        let (a, storeA) = try await client(
            remote, id: Golden.clientA, folder: scratch.appendingPathComponent("A"), environment: environment)
        let (b, storeB) = try await client(
            remote, id: Golden.clientB, folder: scratch.appendingPathComponent("B"), environment: environment)
        try await storeA.database.write { db in
            try db.execute(sql: "INSERT INTO notes VALUES ('n1', 'Secret plan | é', -7, 0.25, x'cafe')")
            try db.execute(sql: "INSERT INTO notes(id, title, n) VALUES ('n2', 'to be deleted', 2)")
        }
        try await storeB.database.write { db in
            try db.execute(sql: "INSERT INTO tags VALUES ('t1', 'from B')")
            try db.execute(sql: "INSERT INTO notes(id, title, n) VALUES ('n3', 'from B', 3)")
        }
        for _ in 0..<2 {
            _ = try await a.synchronize()
            _ = try await b.synchronize()
        }
        try await storeA.database.write { db in
            try db.execute(sql: "DELETE FROM notes WHERE id = 'n2'")
            try db.execute(sql: "UPDATE notes SET title = 'edited by A' WHERE id = 'n3'")
        }
        _ = try await a.synchronize()
        a.policy.wholeStoreCompression = .zlib
        _ = try await a.uploadWholeStore()
        let file = scratch.appendingPathComponent("plan.txt")
        try attachmentContents.write(to: file)
        let reference = try b.attachFile(at: file, metadata: ["name": "plan.txt"])
        try await storeB.database.write { db in
            try db.execute(
                sql: "INSERT INTO notes(id, title, b) VALUES ('n4', 'after the whole store', ?)",
                arguments: [reference.databaseValue])
        }
        for _ in 0..<2 {
            _ = try await b.synchronize()
            _ = try await a.synchronize()
        }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: root, to: files)
    }
}

@Suite("Golden encrypted tree")
struct EncryptedTreeTests {
    @Test("A new client joins the golden encrypted tree with its password and holds the documented rows")
    func newClientJoins() async throws {
        let scratch = TemporaryDirectory()
        if Golden.recordingNew, !FileManager.default.fileExists(atPath: EncryptedTree.files.path) {
            try await EncryptedTree.record(scratch: scratch.subdirectory("record"))
        }
        let root = scratch.url.appendingPathComponent("remote")
        try FileManager.default.copyItem(at: EncryptedTree.files, to: root)
        let (document, store) = try await EncryptedTree.client(
            FileManagerFileSystem(rootURL: root), id: Golden.clientC,
            folder: scratch.subdirectory("C"), environment: Fixture.quietEnvironment())
        _ = try await document.synchronize()
        let dump = try await store.database.read { try NeutralDump.dump($0, full: false) }
        #expect(NeutralDump.rows(dump) == EncryptedTree.rows)
        #expect(try store.loadSyncState().progress.hasBootstrapped)
        let url = try await document.requestDownload(for: EncryptedTree.attachment)
        #expect(try Data(contentsOf: url) == EncryptedTree.attachmentContents)
    }

    @Test("A wrong password is told apart from a damaged tree: wrongPassword")
    func wrongPasswordIsRefused() async throws {
        let scratch = TemporaryDirectory()
        let root = scratch.url.appendingPathComponent("remote")
        try FileManager.default.copyItem(at: EncryptedTree.files, to: root)
        let store = try Golden.openStore(scratch.url.appendingPathComponent("store.sqlite"))
        defer { try? store.close() }
        let app = ApplicationSyncManager(
            remote: FileManagerFileSystem(rootURL: root), environment: Fixture.quietEnvironment())
        let asked = Locked(0)
        app.encryptionHandler = { request in
            asked.withLock { $0 += 1 }
            return asked.current == 1 ? .password("not the password") : .cancel
        }
        await #expect(throws: FolderSyncError.self) {
            try await app.register(
                .init(
                    applicationIdentifier: "com.example.notes", clientIdentifier: Golden.clientC, clientDescription: "C"
                ))
        }
        #expect(asked.current == 2, "a wrong password is asked again, not taken for a damaged file")
    }

    @Test("Every file of the golden encrypted tree opens with the tree's key and reads as its kind")
    func everyFileOpens() throws {
        let root = EncryptedTree.files
        let keyPath = try RemotePath("com.example.notes/Encryption/EncryptionKey.plist")
        let info = try PropertyListFile.decode(
            EncryptionKeyInfo.self, from: try Data(contentsOf: root.appendingPathComponent(keyPath.description)),
            path: keyPath.description)
        let dataKey = try info.dataKey(
            with: try info.passwordKey(for: EncryptedTree.password, path: keyPath), path: keyPath)
        let scratch = TemporaryDirectory()
        var kinds: [String: Int] = [:]
        for path in treeListing(of: root) where !path.hasSuffix("/") {
            let remotePath = try RemotePath(path)
            let data = try Data(contentsOf: root.appendingPathComponent(path))
            let entry = try #require(
                RemoteLayout.entry(matching: remotePath, kind: .file), "\(path) is not in the layout")
            guard entry.encryptedWhenEnabled else {
                kinds["clear " + entry.format, default: 0] += 1
                continue
            }
            let plain = try SealedFile.open(data, dataKey: dataKey, path: remotePath)
            let local = scratch.url.appendingPathComponent(remotePath.name)
            try plain.write(to: local)
            switch entry.format {
            case "change-set":
                _ = try ChangeSetReader.verify(at: local, path: path)
            case "whole-store":
                _ = try WholeStoreFile.read(
                    local, to: scratch.url.appendingPathComponent("snapshot.sqlite"), path: path)
            case "attachment":
                try AttachmentFile.verify(local, sha256: remotePath.name, path: path)
            default:
                #expect(
                    PropertyListFile.kind(of: plain) != nil, "\(path) is not a FolderSync property list once opened")
            }
            kinds[entry.format, default: 0] += 1
        }
        #expect(kinds["change-set", default: 0] >= 4)
        #expect(kinds["whole-store", default: 0] == 1)
        #expect(kinds["attachment", default: 0] == 1)
        #expect(kinds.values.reduce(0, +) >= 12)
    }
}
