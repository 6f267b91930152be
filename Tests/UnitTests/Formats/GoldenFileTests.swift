import Crypto
import Foundation
import GRDB
import Testing

@_spi(Tooling) @_spi(ModelAdapter) @testable import FolderSync
@testable import TestSupport

func samePayload<P: PropertyListPayload>(_ expected: P, _ other: any PropertyListPayload) -> Bool {
    (other as? P) == expected
}

@Suite("Golden files")
struct GoldenFileTests {
    /// Files of the fixtures folder that are not golden files of the catalog.
    static func notInCatalog(_ path: String) -> Bool {
        path == "README.md" || path.hasSuffix(".expected.txt") || path.hasPrefix("encrypted-tree/")
    }

    @Test("Every file of the catalog is checked in, and every checked-in file is in the catalog")
    func catalogIsComplete() throws {
        if Golden.recordingNew {
            let scratch = TemporaryDirectory()
            let written = try GoldenWriters.recordMissing(scratch: scratch.url)
            print("Recorded new golden files: \(written)")
        }
        let onDisk = Set(treeListing(of: Golden.root).filter { !$0.hasSuffix("/") && !Self.notInCatalog($0) })
        let listed = Set(GoldenCatalog.files.map(\.path))
        #expect(
            onDisk == listed,
            "checked in but not in the catalog: \(onDisk.subtracting(listed)); in the catalog but missing: \(listed.subtracting(onDisk))"
        )
        for file in GoldenCatalog.files {
            if case .wholeStore(let store) = file.content {
                #expect(
                    FileManager.default.fileExists(atPath: Golden.url(store.snapshotDump).path),
                    "\(store.snapshotDump) is missing")
            }
            if case .localStore(_, let expected) = file.content {
                #expect(FileManager.default.fileExists(atPath: Golden.url(expected).path), "\(expected) is missing")
            }
        }
        // Kinds and versions the issue asks for, at least.
        #expect(GoldenCatalog.files(of: .changeSet).count >= 6)
        #expect(Set(GoldenCatalog.files(of: .wholeStore).map(\.version)) == Set(1...Int(WholeStoreFile.formatVersion)))
        #expect(
            Set(GoldenCatalog.files(of: .localStore).map(\.version)) == Set(1...StoreSchema.currentBookkeepingVersion))
    }

    @Test("Each golden file decodes to its documented content", arguments: GoldenCatalog.files)
    func decodesToItsContent(_ file: GoldenFile) throws {
        let scratch = TemporaryDirectory()
        let data = try Golden.data(file.path)
        switch file.content {
        case .changeSet(let header, let changes):
            let input = scratch.url.appendingPathComponent("set.syncchg")
            try data.write(to: input)
            #expect(data[8] == UInt8(file.version))
            #expect(try ChangeSetReader.readHeader(at: input, path: file.path) == header)
            #expect(try ChangeSetReader.verify(at: input, path: file.path) == header)
            var decoded: [SyncChange] = []
            try ChangeSetReader.forEachChange(at: input, path: file.path) { decoded.append($0) }
            #expect(decoded == changes)
        case .wholeStore(let store):
            #expect(data[8] == UInt8(file.version))
            let snapshot = scratch.url.appendingPathComponent("snapshot.sqlite")
            let reader = try WholeStoreReader(snapshot: snapshot, path: file.path)
            try reader.consume(data)
            let result = try reader.finish()
            #expect(result.header == store.header)
            #expect(
                try NeutralDump.dump(snapshot, full: false)
                    == String(decoding: try Golden.data(store.snapshotDump), as: UTF8.self))
            let manifest = try PropertyListFile.decode(
                WholeStoreManifest.self, from: try Golden.data(store.manifest), path: store.manifest)
            #expect(manifest.wholeStoreIdentifier == store.header.wholeStoreIdentifier)
            #expect(manifest.wholeStoreByteCount == result.byteCount)
            #expect(manifest.wholeStoreChecksum == result.checksum)
            // The rule every reader applies to a store and its manifest.
            try manifest.check(result, path: file.path)
        case .propertyList(let expected):
            let payload = try decodedPayload(like: expected, from: data, path: file.path)
            let same = samePayload(expected, payload)
            let kind = type(of: expected).kind
            #expect(same, "\(file.path) decodes to \(payload)")
            #expect(PropertyListFile.kind(of: data) == kind)
        case .attachment(let reference, let contents):
            let input = scratch.url.appendingPathComponent(reference.sha256)
            try data.write(to: input)
            let output = scratch.url.appendingPathComponent("contents")
            try AttachmentFile.decode(input, as: reference, to: output, path: file.path)
            #expect(try Data(contentsOf: output) == contents)
            try AttachmentFile.verify(input, sha256: reference.sha256, path: file.path)
            #expect(data[8] == UInt8(file.version))
        case .sealed(let plaintext, let remotePath):
            let opened = try SealedFile.open(data, dataKey: GoldenCatalog.dataKey, path: try RemotePath(remotePath))
            #expect(opened == (try Golden.data(plaintext)))
            #expect(data.count == 48 + opened.count + 16 * max(1, (opened.count + (1 << 18) - 1) / (1 << 18)))
        case .localStore(let version, let expected):
            let input = try Golden.copy(file.path, into: scratch.url)
            let identified = try DatabaseQueue(path: input.path).read { db in
                (try StoreSchema.recordedBookkeepingVersion(db), try StoreSchema.identifyUnversionedBookkeeping(db))
            }
            // Stores of the earlier versions were written before versions were recorded: told by their shape.
            #expect((identified.0 ?? identified.1) == version)
            let store = try Golden.openStore(input)
            defer { try? store.close() }
            let dump = try store.database.read { try NeutralDump.dump($0, full: true) }
            #expect(dump == String(decoding: try Golden.data(expected), as: UTF8.self))
            #expect(
                try store.database.read { try StoreSchema.recordedBookkeepingVersion($0) }
                    == StoreSchema.currentBookkeepingVersion)
        }
    }

    @Test("Golden change sets applied in order to a fresh store give the documented rows")
    func changeSetsApply() throws {
        let scratch = TemporaryDirectory()
        let store = try Golden.openStore(scratch.url.appendingPathComponent("store.sqlite"))
        defer { try? store.close() }
        for path in GoldenCatalog.changeSetApplyOrder {
            let url = try Golden.copy(path, into: scratch.url)
            let header = try ChangeSetReader.verify(at: url, path: path)
            let outcome = try store.apply(
                header, localClient: Golden.clientC,
                changes: { body in
                    try ChangeSetReader.forEachChange(at: url, path: path, body)
                }, resolutions: [:])
            #expect(outcome.applied)
        }
        let dump = try store.database.read { try NeutralDump.dump($0, full: false) }
        #expect(NeutralDump.rows(dump) == GoldenCatalog.rowsAfterChangeSets)
        let tombstones = dump.split(separator: "\n").filter { $0.hasPrefix("tomb|") }.map {
            $0.split(separator: "|")[1...2].joined(separator: "|")
        }
        #expect(tombstones == GoldenCatalog.tombstonesAfterChangeSets)
        #expect(try store.appliedChangeSets().contiguous == [Golden.clientA: 2, Golden.clientB: 3])
    }

    @Test("The schema-2 golden change set applies to a store at schema version 2")
    func schema2ChangeSetApplies() throws {
        let scratch = TemporaryDirectory()
        let store = try Golden.openStore(scratch.url.appendingPathComponent("store.sqlite"), schemaVersion: 2)
        defer { try? store.close() }
        for path in GoldenCatalog.changeSetApplyOrder + ["change-sets/v1-schema2.syncchg"] {
            let url = try Golden.copy(path, into: scratch.url)
            let header = try ChangeSetReader.verify(at: url, path: path)
            _ = try store.apply(
                header, localClient: Golden.clientC,
                changes: { try ChangeSetReader.forEachChange(at: url, path: path, $0) },
                resolutions: [:])
        }
        let due = try store.database.read { db in
            try Row.fetchAll(db, sql: "SELECT id, title, due FROM notes WHERE due IS NOT NULL ORDER BY id")
        }
        #expect(
            due.map { "\($0["id"] as String)|\($0["title"] as String)|\($0["due"] as Int64)" } == [
                "n10|row 10|20260103", "n20|needs schema 2|20260102",
            ])
    }

    @Test(
        "Each golden whole store installs into a fresh store with its snapshot's rows, or is refused as documented",
        arguments: GoldenCatalog.files(of: .wholeStore))
    func wholeStoreInstalls(_ file: GoldenFile) throws {
        guard case .wholeStore(let expected) = file.content else {
            Issue.record("not a whole store")
            return
        }
        let scratch = TemporaryDirectory()
        let snapshot = scratch.url.appendingPathComponent("snapshot.sqlite")
        _ = try WholeStoreFile.read(Golden.url(file.path), to: snapshot, path: file.path)
        let manifest = try PropertyListFile.decode(
            WholeStoreManifest.self, from: try Golden.data(expected.manifest), path: expected.manifest)
        let url = scratch.url.appendingPathComponent("store.sqlite")
        let store = try Golden.openStore(url)
        defer { try? store.close() }
        let before = try store.database.read { try NeutralDump.dump($0, full: true) }
        switch expected.install {
        case .installs:
            try store.restoreSnapshot(from: snapshot, covers: manifest.covers, localClient: Golden.clientC)
            let dump = try store.database.read { try NeutralDump.dump($0, full: false) }
            #expect(dump == String(decoding: try Golden.data(expected.snapshotDump), as: UTF8.self))
            #expect(try store.appliedChangeSets().contiguous == manifest.covers)
            // The dump reads registers in the file's own shape; installed, they must read as today's.
            let stamps = try store.database.read { db in
                try Data.fetchAll(db, sql: "SELECT stamps FROM foldersync_clocks")
            }
            #expect(
                !stamps.isEmpty
                    && stamps.allSatisfy { (try? RowRegisters($0)) != nil && !LegacyRegisters.lacksHead($0) },
                "\(file.path): installed registers read as today's")
        case .refused(let code):
            #expect {
                try store.restoreSnapshot(from: snapshot, covers: manifest.covers, localClient: Golden.clientC)
            } throws: { error in
                (error as? FolderSyncError)?.code == code
            }
            #expect(try store.database.read { try NeutralDump.dump($0, full: true) } == before)
        }
    }

    @Test("The snapshot dumps of every writer agree: every format and shape holds the same content")
    func snapshotDumpsAgree() throws {
        var dumps: [Bool: Set<String>] = [:]
        for file in GoldenCatalog.files(of: .wholeStore) {
            guard case .wholeStore(let store) = file.content else { continue }
            let attachments = store.header.wholeStoreIdentifier.hasSuffix("2")
            dumps[attachments, default: []].insert(String(decoding: try Golden.data(store.snapshotDump), as: UTF8.self))
        }
        #expect(dumps[true]?.count == 1)
        #expect(dumps[false]?.count == 1)
        var local = Set<String>()
        for file in GoldenCatalog.files(of: .localStore) {
            guard case .localStore(_, let expected) = file.content else { continue }
            local.insert(String(decoding: try Golden.data(expected), as: UTF8.self))
        }
        #expect(local.count == 1, "the local stores of every bookkeeping version hold the same content")
    }

    @Test("The golden encryption key file opens the golden data key with the golden password, and refuses another")
    func encryptionKeyOpens() throws {
        let path = try RemotePath("com.example.notes/Encryption/EncryptionKey.plist")
        let info = try PropertyListFile.decode(
            EncryptionKeyInfo.self, from: try Golden.data("property-lists/EncryptionKey.plist"), path: path.description)
        let key = try info.dataKey(with: try info.passwordKey(for: GoldenCatalog.password, path: path), path: path)
        #expect(key.bytes == GoldenCatalog.dataKey.bytes)
        #expect { try info.dataKey(with: try info.passwordKey(for: "wrong", path: path), path: path) } throws: {
            error in
            (error as? FolderSyncError)?.code == .wrongPassword
        }
    }
}

@Suite("Golden writers")
struct GoldenWriterPinTests {
    static let message = """
        today's writer no longer writes these bytes. Restore the writer's bytes, or bump the format's version, \
        add a golden file of the new version to GoldenCatalog, and keep a reader for this one (RemoteLayouts/README.md, "Golden files")
        """

    @Test(
        "Today's writers write each current golden file again, byte for byte",
        arguments: GoldenCatalog.files.filter { $0.writer == .current && $0.kind != .localStore })
    func writerIsPinned(_ file: GoldenFile) throws {
        let scratch = TemporaryDirectory()
        let written = try GoldenWriters.bytes(for: file, scratch: scratch.url)
        let golden = try Golden.data(file.path)
        #expect(written == golden, "\(file.path): \(Self.message)")
    }

    @Test("The first-generation recent sync is what today's writer writes for a marker that names no change set")
    func recentSyncGeneration1IsStillWritten() throws {
        #expect(
            try PropertyListFile.encode(GoldenCatalog.recentSyncGeneration1)
                == (try Golden.data("recent-syncs/generation1.recentsync")),
            "recent-syncs/generation1.recentsync: \(Self.message)")
    }

    @Test("The splitter splits the golden inserts into exactly the golden parts")
    func splitterIsPinned() throws {
        let scratch = TemporaryDirectory()
        let splitter = ChangeSetSplitter(
            clientIdentifier: Golden.clientB, schemaVersion: 1, firstSequence: 1, createdAt: Golden.date,
            dependencies: [Golden.clientA: 1], partByteLimit: GoldenCatalog.splitPartByteLimit
        ) { sequence in
            .init(
                url: scratch.url.appendingPathComponent("part\(sequence)"),
                changeSetIdentifier: GoldenCatalog.splitIdentifier(sequence))
        }
        for change in GoldenCatalog.splitChanges { try splitter.append(change) }
        let parts = try splitter.finish()
        #expect(parts.count == 3)
        for (index, part) in parts.enumerated() {
            #expect(
                try Data(contentsOf: part.url) == (try Golden.data("change-sets/v1-split-part\(index + 1).syncchg")),
                "part \(index + 1): \(Self.message)")
        }
    }

    @Test("Today's snapshot of the golden scenario has the tables and content of the current golden whole stores")
    func snapshotShapeIsPinned() throws {
        let scratch = TemporaryDirectory()
        for attachments in [false, true] {
            let name = attachments ? "format3-stored-attachments" : "format3-stored"
            let snapshot = scratch.url.appendingPathComponent("today-\(attachments).sqlite")
            let covers = try GoldenScenario.writeSnapshot(at: snapshot, attachments: attachments, scratch: scratch.url)
            let golden = scratch.url.appendingPathComponent("golden-\(attachments).sqlite")
            _ = try WholeStoreFile.read(Golden.url("whole-stores/\(name).ticdsync"), to: golden, path: name)
            func schema(_ url: URL) throws -> [String] {
                try DatabaseQueue(path: url.path).read { db in
                    try String.fetchAll(
                        db,
                        sql:
                            "SELECT type || ' ' || name || ': ' || ifnull(sql, '') FROM sqlite_master ORDER BY type, name"
                    )
                }
            }
            #expect(try schema(snapshot) == schema(golden), "the snapshot's schema changed: \(Self.message)")
            #expect(
                try NeutralDump.dump(snapshot, full: false)
                    == String(decoding: try Golden.data("whole-stores/\(name).expected.txt"), as: UTF8.self))
            let manifest = try PropertyListFile.decode(
                WholeStoreManifest.self, from: try Golden.data("whole-stores/\(name).manifest.ticdsync"), path: name)
            #expect(covers == manifest.covers)
        }
    }
}
