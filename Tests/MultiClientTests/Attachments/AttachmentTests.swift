import FolderSyncTesting
import Foundation
import GRDB
import Testing

@_spi(Tooling) @_spi(ModelAdapter) @testable import FolderSync
@testable import TestSupport

/// The bytes of every change set on a file-manager remote.
func changeSetBytes(_ root: URL) throws -> Int {
    let folder = root.appendingPathComponent("com.example.notes/Documents/DOC/SyncChanges")
    var total = 0
    for path in FileManager.default.enumerator(atPath: folder.path)?.compactMap({ $0 as? String }) ?? []
    where path.hasSuffix(".syncchg") {
        total +=
            try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent(path).path)[.size] as? Int
            ?? 0
    }
    return total
}

@Suite("Attachments")
struct AttachmentTests {
    @Test("A large value travels once as an attachment: change sets carry its hash, the other client gets the bytes")
    func largeValue() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let (a, b) = try await TestClient.pair(FileManagerFileSystem(rootURL: root), in: directory)
        let image = pseudoRandomBytes(300_000, seed: 1)
        for index in 0..<3 {
            try a.execute("INSERT INTO notes(id, title, body) VALUES (?, 'photo', ?)", ["n\(index)", image])
        }
        let sent = try await a.sync()
        try a.execute("UPDATE notes SET body = ? WHERE id = 'n0'", [image])  // the same bytes, in a second change set
        try a.execute("UPDATE notes SET title = 'again' WHERE id = 'n0'")
        try await a.sync()
        #expect(sent.attachmentsUploaded == 1)
        let stored = try remoteAttachments(root)
        #expect(stored.count == 1, "the same bytes appear once on the remote")
        #expect(
            stored.values.first.map { $0 > 300_000 && $0 < 300_100 } == true,
            "incompressible bytes are stored, plus a 50-byte header")
        #expect(try changeSetBytes(root) < 4_000, "change sets carry references, not the 300 KB value")
        let folder = root.appendingPathComponent("com.example.notes/Documents/DOC/SyncChanges/client-A")
        let first = try #require(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted().first)
        let inspected = try await FoldersyncTool.run(["inspect", folder.appendingPathComponent(first).path])
        #expect(
            inspected.output.contains("body=attachment(\(stored.keys.first!), 300000 bytes, inline value)"),
            "\(inspected.output)")

        let received = try await b.sync()
        #expect(received.attachmentsDownloaded == 1)
        #expect(received.goneAttachments.isEmpty)
        let bodies = try await b.store.database.read {
            try Data.fetchAll($0, sql: "SELECT body FROM notes ORDER BY id")
        }
        #expect(bodies == [image, image, image])
        // B keeps no copy of a value it applied (the row holds it), and the download it applied from is gone.
        let name = try #require(stored.keys.first)
        #expect(
            !FileManager.default.fileExists(
                atPath: b.document.localLayout.attachmentsDirectory.appendingPathComponent(name).path))
        let downloads = try FileManager.default.contentsOfDirectory(
            atPath: b.document.localLayout.downloadsDirectory.path)
        #expect(!downloads.contains { $0.hasPrefix(name) }, "\(downloads)")
        #expect(
            FileManager.default.fileExists(
                atPath: a.document.localLayout.attachmentsDirectory.appendingPathComponent(name).path),
            "the writer keeps its copy")
        try await converge(a, b)
        #expect(try NotesSchema.dump(a.store) == NotesSchema.dump(b.store))
    }

    @Test("An attached file is stored once, with its metadata, and published before any change set that references it")
    func attachedFile() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let recording = RecordingFileSystem(FileManagerFileSystem(rootURL: root))
        let (a, b) = try await TestClient.pair(recording, in: directory)
        let original = directory.url.appendingPathComponent("report.pdf")
        let contents = Data(String(repeating: "a compressible PDF stand-in ", count: 20_000).utf8)
        try contents.write(to: original)
        let reference = try a.document.attachFile(
            at: original, metadata: ["name": "report.pdf", "type": "application/pdf"])
        try FileManager.default.removeItem(at: original)  // a copy: the app's file may go at once
        try a.execute("INSERT INTO notes(id, title, body) VALUES ('n1', 'with file', ?)", [reference.databaseValue])
        try await a.sync()
        try a.execute("INSERT INTO notes(id, title, body) VALUES ('n2', 'same file', ?)", [reference.databaseValue])
        try await a.sync()

        let stored = try remoteAttachments(root)
        #expect(Array(stored.keys) == [reference.sha256])
        #expect(stored[reference.sha256].map { $0 < contents.count / 10 } == true, "text compresses")
        let events = await recording.events
        let attachmentPublished = try #require(
            events.firstIndex { $0.hasPrefix("move") && $0.hasSuffix("/Attachments/" + reference.sha256) })
        let firstChangeSet = try #require(events.firstIndex { $0.hasPrefix("upload") && $0.hasSuffix(".syncchg") })
        #expect(attachmentPublished < firstChangeSet, "\(events)")

        try await b.sync()
        let column = try #require(
            try await b.store.database.read { try Data.fetchOne($0, sql: "SELECT body FROM notes WHERE id = 'n2'") })
        let received = try #require(AttachmentReference(databaseValue: column))
        #expect(received == reference)
        #expect(received.metadata == ["name": "report.pdf", "type": "application/pdf"])
        let local = try #require(b.document.localFile(for: received))
        #expect(try Data(contentsOf: local) == contents)
    }

    @Test("A corrupted local copy is detected by its hash and downloaded again on request")
    func corruptLocalCopy() async throws {
        let directory = TemporaryDirectory()
        let recording = RecordingFileSystem(FileManagerFileSystem(rootURL: directory.subdirectory("remote")))
        let (a, b) = try await TestClient.pair(recording, in: directory)
        let file = directory.url.appendingPathComponent("photo.jpg")
        let contents = pseudoRandomBytes(100_000, seed: 2)
        try contents.write(to: file)
        let reference = try a.document.attachFile(at: file, mode: .immutable)
        try a.execute("INSERT INTO notes(id, body) VALUES ('n1', ?)", [reference.databaseValue])
        try await a.sync()
        try await b.sync()
        let local = try #require(b.document.localFile(for: reference))
        var damaged = contents
        damaged[5000] ^= 0xFF
        try damaged.write(to: local)

        let events = b.document.events()
        let downloadsBefore = await recording.downloads(of: reference)
        #expect(try await b.document.requestDownload(for: reference) == local)
        #expect(try Data(contentsOf: local) == contents)
        #expect(try await b.document.requestDownload(for: reference) == local)
        let downloadsAfter = await recording.downloads(of: reference)
        #expect(downloadsAfter == downloadsBefore + 1, "an intact copy is not downloaded again")
        var progress: SyncEvent?
        for await event in events {
            if case .downloadingAttachment = event {
                progress = event
                break
            }
        }
        #expect(progress == .downloadingAttachment(reference))

        // What a crash in the middle of a download leaves: removed by the next sync once it is old.
        let store = b.document.localLayout.attachmentsDirectory
        let (old, recent) = (
            store.appendingPathComponent(TemporaryName.make(for: "a")),
            store.appendingPathComponent(TemporaryName.make(for: "b"))
        )
        try Data(count: 1000).write(to: old)
        try Data(count: 1000).write(to: recent)
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -7200)], ofItemAtPath: old.path)
        try await b.sync()
        #expect(!FileManager.default.fileExists(atPath: old.path))
        #expect(FileManager.default.fileExists(atPath: recent.path), "a recent one may be a download in progress")

        try FileManager.default.removeItem(at: local)
        #expect(b.document.localFile(for: reference) == nil)
        try await b.document.requestDownload(for: reference)
        #expect(try Data(contentsOf: local) == contents)
    }

    @Test(
        "A deleted remote attachment is reported gone with its row and column; the rest of the sync applies; retried on request"
    )
    func goneAttachment() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let (a, b) = try await TestClient.pair(FileManagerFileSystem(rootURL: root), in: directory)
        let file = directory.url.appendingPathComponent("scan.tiff")
        try pseudoRandomBytes(70_000, seed: 3).write(to: file)
        let reference = try a.document.attachFile(at: file)
        try a.execute("INSERT INTO notes(id, title, body) VALUES ('n1', 'scan', ?)", [reference.databaseValue])
        try a.execute("INSERT INTO notes(id, title) VALUES ('n2', 'plain')")
        try await a.sync()
        let remoteFile = root.appendingPathComponent("com.example.notes/Documents/DOC/Attachments/\(reference.sha256)")
        let saved = try Data(contentsOf: remoteFile)
        try FileManager.default.removeItem(at: remoteFile)

        let report = try await b.sync()
        #expect(report.goneAttachments.map(\.key) == [ColumnKey(table: "notes", syncID: "n1", column: "body")])
        #expect(report.goneAttachments.first?.reference == reference)
        #expect(report.goneAttachments.first?.path == "com.example.notes/Documents/DOC/Attachments/\(reference.sha256)")
        #expect(report.changesApplied == 2)
        #expect(try b.value("SELECT title FROM notes WHERE id = 'n2'") == "plain")
        #expect(b.document.localFile(for: reference) == nil)
        await #expect { try await b.document.requestDownload(for: reference) } throws: {
            ($0 as? FolderSyncError)?.code == .attachmentGone
        }

        try saved.write(to: remoteFile)
        let local = try await b.document.requestDownload(for: reference)
        #expect(try Data(contentsOf: local) == Data(contentsOf: file))
    }

    @Test(
        "A large value that is gone leaves its reference in the column; requestDownload puts the bytes back without a new change"
    )
    func goneLargeValue() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let (a, b) = try await TestClient.pair(FileManagerFileSystem(rootURL: root), in: directory)
        let large = pseudoRandomBytes(100_000, seed: 13)
        try a.execute("INSERT INTO notes(id, title, body) VALUES ('n1', 'big', ?)", [large])
        try await a.sync()
        let folder = root.appendingPathComponent("com.example.notes/Documents/DOC/Attachments")
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: folder.path).first)
        let saved = try Data(contentsOf: folder.appendingPathComponent(name))
        try FileManager.default.removeItem(at: folder.appendingPathComponent(name))

        let report = try await b.sync()
        #expect(report.goneAttachments.map(\.key) == [ColumnKey(table: "notes", syncID: "n1", column: "body")])
        #expect(try b.value("SELECT title FROM notes WHERE id = 'n1'") == "big")
        let placeholder = try await b.store.database.read {
            try Data.fetchOne($0, sql: "SELECT body FROM notes WHERE id = 'n1'")
        }
        let reference = try #require(placeholder.flatMap(AttachmentReference.init(databaseValue:)))
        #expect(reference.isInlineValue && reference.size == 100_000)

        try saved.write(to: folder.appendingPathComponent(name))
        try await b.document.requestDownload(for: reference)
        let restored = try await b.store.database.read {
            try Data.fetchOne($0, sql: "SELECT body FROM notes WHERE id = 'n1'")
        }
        #expect(restored == large)
        #expect(try b.store.hasUnpublishedChanges() == false, "putting the bytes back is not a change")
        try await converge(a, b)
        #expect(try NotesSchema.dump(a.store) == NotesSchema.dump(b.store))
    }

    @Test("A tampered remote attachment is never taken for the file: reported gone by sync, corruptFile on request")
    func tamperedAttachment() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let (a, b) = try await TestClient.pair(FileManagerFileSystem(rootURL: root), in: directory)
        let file = directory.url.appendingPathComponent("data.bin")
        try pseudoRandomBytes(70_000, seed: 4).write(to: file)
        let reference = try a.document.attachFile(at: file)
        try a.execute("INSERT INTO notes(id, body) VALUES ('n1', ?)", [reference.databaseValue])
        try await a.sync()
        let remoteFile = root.appendingPathComponent("com.example.notes/Documents/DOC/Attachments/\(reference.sha256)")
        var bytes = try Data(contentsOf: remoteFile)
        bytes[bytes.count - 10] ^= 0x01
        try bytes.write(to: remoteFile)

        let report = try await b.sync()
        #expect(report.goneAttachments.map(\.key.syncID) == ["n1"])
        #expect(b.document.localFile(for: reference) == nil)
        await #expect { try await b.document.requestDownload(for: reference) } throws: {
            ($0 as? FolderSyncError)?.code == .corruptFile
        }
    }

    @Test("Lazy downloads: a sync only checks the attachment exists; the app fetches it on request")
    func lazyDownloads() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let (a, b) = try await TestClient.pair(FileManagerFileSystem(rootURL: root), in: directory)
        b.document.policy.attachmentDownloads = .lazy
        let file = directory.url.appendingPathComponent("movie.mov")
        try pseudoRandomBytes(90_000, seed: 5).write(to: file)
        let reference = try a.document.attachFile(at: file)
        let large = pseudoRandomBytes(80_000, seed: 6)
        try a.execute("INSERT INTO notes(id, title, body) VALUES ('n1', ?, ?)", [large, reference.databaseValue])
        try await a.sync()

        let report = try await b.sync()
        #expect(report.attachmentsDownloaded == 1, "the large value, which the column needs")
        #expect(report.goneAttachments.isEmpty)
        let title = try await b.store.database.read { try Data.fetchOne($0, sql: "SELECT title FROM notes") }
        #expect(title == large)
        #expect(b.document.localFile(for: reference) == nil)
        try await b.document.requestDownload(for: reference)
        #expect(try Data(contentsOf: b.document.localFile(for: reference)!) == Data(contentsOf: file))
    }

    @Test(
        "An immutable file changed before its upload is reported with its row; the change set still goes; nothing of it is published",
        arguments: [false, true])
    func immutableFileChanged(throughDefaultUpload: Bool) async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        // Wrapped, the upload takes the protocol's default (a scratch file) rather than the local folder's streaming
        // one.
        let local = FileManagerFileSystem(rootURL: root)
        let remote: any RemoteFileSystem = throughDefaultUpload ? ForwardingFileSystem(local) : local
        let (a, b) = try await TestClient.pair(remote, in: directory)
        let file = directory.url.appendingPathComponent("draft.txt")
        try Data("first draft".utf8).write(to: file)
        let reference = try a.document.attachFile(at: file, mode: .immutable)
        let handle = try FileHandle(forWritingTo: file)  // changed in place, against the promise
        try handle.write(contentsOf: Data("FIRST".utf8))
        try handle.close()
        try a.execute("INSERT INTO notes(id, title, body) VALUES ('n1', 'draft', ?)", [reference.databaseValue])
        let report = try await a.sync()
        #expect(report.goneAttachments.map(\.key) == [ColumnKey(table: "notes", syncID: "n1", column: "body")])
        #expect(report.changeSetsSent == 1)
        #expect(a.document.localFile(for: reference) == nil)
        #expect(try String(contentsOf: file, encoding: .utf8) == "FIRST draft", "the app's file is left alone")
        #expect(try remoteAttachments(root).isEmpty, "no attachment and no temporary")
        let received = try await b.sync()
        #expect(received.goneAttachments.count == 1)
    }

    @Test(
        "Whole stores carry references, not large values; a new client bootstraps with the bytes, whether its manifest counts the references or predates the count",
        arguments: [true, false])
    func wholeStores(countedReferences: Bool) async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let remote = FileManagerFileSystem(rootURL: root)
        let a = WholeStoreTests.manual(try await TestClient.make(remote, name: "A", in: directory))
        let large = pseudoRandomBytes(500_000, seed: 7)
        let file = directory.url.appendingPathComponent("a.bin")
        try pseudoRandomBytes(100_000, seed: 8).write(to: file)
        let reference = try a.document.attachFile(at: file)
        try a.execute("INSERT INTO notes(id, title, body) VALUES ('n1', ?, ?)", [large, reference.databaseValue])
        try await a.sync()
        try a.execute("INSERT INTO notes(id, title) VALUES ('n2', ?)", [pseudoRandomBytes(100_000, seed: 9)])
        try await a.sync()
        let manifest = try #require(try await a.document.uploadWholeStore())
        #expect(manifest.attachmentReferenceCount == 3, "n1's large title and file, n2's large title")
        if !countedReferences {
            // As an uploader from before the count wrote it: the new client must search the snapshot itself.
            var older = manifest
            older.attachmentReferenceCount = nil
            try PropertyListFile.encode(older)
                .write(
                    to: root.appendingPathComponent(
                        "com.example.notes/Documents/DOC/WholeStore/client-A/AppliedSyncChangeSets.ticdsync"))
        }
        let wholeStore = root.appendingPathComponent(
            "com.example.notes/Documents/DOC/WholeStore/client-A/WholeStore.ticdsync")
        let wholeStoreSize = try FileManager.default.attributesOfItem(atPath: wholeStore.path)[.size] as? Int
        #expect(wholeStoreSize.map { $0 < 50_000 } == true)
        #expect(try remoteAttachments(root).count == 3)

        let c = try await TestClient.make(remote, name: "C", in: directory)
        let report = try await c.sync()
        #expect(report.installedWholeStore != nil)
        #expect(report.goneAttachments.isEmpty)
        #expect(try NotesSchema.dump(a.store) == NotesSchema.dump(c.store))
        #expect(try Data(contentsOf: try #require(c.document.localFile(for: reference))) == Data(contentsOf: file))
    }

    @Test("Bad input: oversized metadata and a missing file are typed errors; garbage is not a reference")
    func badInput() async throws {
        let directory = TemporaryDirectory()
        let a = try await TestClient.make(
            FileManagerFileSystem(rootURL: directory.subdirectory("remote")), name: "A", in: directory)
        let file = directory.url.appendingPathComponent("f")
        try Data("x".utf8).write(to: file)
        #expect {
            try a.document.attachFile(at: file, metadata: ["note": String(repeating: "m", count: 5000)])
        } throws: { ($0 as? FolderSyncError)?.code == .invalidConfiguration }
        #expect {
            try a.document.attachFile(at: directory.url.appendingPathComponent("missing"))
        } throws: { ($0 as? FolderSyncError)?.code == .localStoreFailed }
        let reference = try a.document.attachFile(at: file, metadata: ["k": "v"])
        #expect(AttachmentReference(databaseValue: reference.databaseValue) == reference)
        #expect(AttachmentReference(databaseValue: reference.databaseValue.dropLast()) == nil)
        #expect(AttachmentReference(databaseValue: Data("FSATTREF".utf8) + Data(count: 40)) == nil)
        #expect(AttachmentReference(databaseValue: Data("a plain value".utf8)) == nil)
    }
}

/// Forwards to a file system and records the order of writes.
actor RecordingFileSystem: RemoteFileSystem {
    let base: any RemoteFileSystem
    private(set) var events: [String] = []

    init(_ base: any RemoteFileSystem) { self.base = base }

    func contentsOfDirectory(at path: RemotePath) async throws -> [RemoteItem] {
        try await base.contentsOfDirectory(at: path)
    }
    func item(at path: RemotePath) async throws -> RemoteItem? { try await base.item(at: path) }
    func read(_ path: RemotePath) async throws -> Data { try await base.read(path) }
    func write(_ data: Data, to path: RemotePath) async throws {
        events.append("write \(path)")
        try await base.write(data, to: path)
    }
    func move(from source: RemotePath, to destination: RemotePath, replacing: Bool) async throws {
        try await base.move(from: source, to: destination, replacing: replacing)
        events.append("move \(destination)")
    }
    func remove(_ path: RemotePath) async throws { try await base.remove(path) }
    func createDirectory(at path: RemotePath) async throws { try await base.createDirectory(at: path) }
    func download(_ path: RemotePath, toLocalFile url: URL) async throws {
        events.append("download \(path)")
        try await base.download(path, toLocalFile: url)
    }

    func downloads(of reference: AttachmentReference) -> Int {
        events.filter { $0.hasPrefix("download") && $0.hasSuffix(reference.sha256) }.count
    }
    func upload(fromLocalFile url: URL, to path: RemotePath) async throws {
        try await base.upload(fromLocalFile: url, to: path)
        events.append("upload \(path)")
    }
}

@Suite("Attachment memory")
struct AttachmentMemoryTests {
    /// Measured in a process of its own: tests running in parallel here would blur the figure.
    @Test("Two clients exchange a 200 MB attachment with peak memory under 64 MiB above baseline; it is stored once")
    func twoHundredMegabytes() async throws {
        let directory = TemporaryDirectory()
        let size = 200_000_000
        let result = await
            (try ChildProcess(
                "foldersync-test-worker",
                [
                    "exchange-attachment", "--root", directory.subdirectory("remote").path, "--dir",
                    directory.subdirectory("clients").path,
                    "--size", "\(size)",
                ])).finish()
        #expect(result.status == 0, "\(result.errors)")
        let words = result.output.split(whereSeparator: \.isWhitespace).map(String.init)
        func figure(_ name: String) -> Int? { words.firstIndex(of: name).flatMap { Int(words[$0 + 1]) } }
        let growth = try #require(figure("growth"), "\(result.output)")
        #expect(growth < 64 * 1024 * 1024, "peak resident memory rose by \(growth) bytes")
        #expect(figure("uploaded") == 1)
        #expect(figure("downloaded") == 1)
        #expect(figure("files") == 1)
        #expect(figure("bytes") == size + AttachmentFile.headerSize, "incompressible: stored, with a 50-byte header")
        print("200 MB attachment exchange: \(result.output)")
    }
}
