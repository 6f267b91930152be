import Foundation
import GRDB
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// A recent-sync marker as the readers before `ff738ad` declared it (no `recentChangeSets`): the reader of a
/// client of that generation, kept to show what it does with today's markers.
struct RecentSyncGeneration1: PropertyListPayload {
    static let kind = "recentSync"
    static let formatVersion = 1
    var clientIdentifier: String
    var lastSyncDate: Date
    var publishedSequence: Int64
    var acknowledgement: [String: Int64]
    var schemaVersion: Int
}

/// A recent-sync marker as the readers of version 1 declared it, before markers carried change sets.
struct RecentSyncVersion1: PropertyListPayload {
    static let kind = "recentSync"
    static let formatVersion = 1
    var clientIdentifier: String
    var lastSyncDate: Date
    var publishedSequence: Int64
    var acknowledgement: [String: Int64]
    var schemaVersion: Int
    var recentChangeSets: [String]?
}

/// A whole-store manifest as the readers before `0b62df5` declared it (no `attachmentReferenceCount`).
struct WholeStoreManifestGeneration1: PropertyListPayload {
    static let kind = "appliedSyncChangeSets"
    static let formatVersion = 1
    var clientIdentifier: String
    var wholeStoreIdentifier: String
    var creationDate: Date
    var schemaVersion: Int
    var covers: [String: Int64]
    var wholeStoreByteCount: Int64
    var wholeStoreChecksum: UInt32
}

/// Files of a version newer than today's, made from golden files by raising their version (checksums made
/// right again, so that only the number tells them apart): what a later FolderSync may write.
enum NewerFiles {
    static func littleEndian(_ value: UInt32) -> Data { withUnsafeBytes(of: value.littleEndian) { Data($0) } }

    /// A change set of format version `version`, header and file CRC-32 recomputed.
    static func changeSet(_ data: Data, version: UInt8 = ChangeSetFile.formatVersion + 1) -> Data {
        var bytes = [UInt8](data)
        bytes[8] = version
        let headerLength = Int(bytes[9]) | Int(bytes[10]) << 8 | Int(bytes[11]) << 16 | Int(bytes[12]) << 24
        let headerEnd = 13 + headerLength
        bytes.replaceSubrange(
            headerEnd..<(headerEnd + 4), with: littleEndian(Checksum.crc32(Data(bytes[0..<headerEnd]))))
        bytes.replaceSubrange((bytes.count - 4)..., with: littleEndian(Checksum.crc32(Data(bytes.dropLast(4)))))
        return Data(bytes)
    }

    /// A whole store of format version `version`, its CRC-32 trailer recomputed.
    static func wholeStore(_ data: Data, version: UInt8 = WholeStoreFile.formatVersion + 1) -> Data {
        var bytes = [UInt8](data)
        bytes[8] = version
        bytes.replaceSubrange((bytes.count - 4)..., with: littleEndian(Checksum.crc32(Data(bytes.dropLast(4)))))
        return Data(bytes)
    }

    /// The property list with its envelope's format version set to `newer` (default: one above the file's),
    /// its payload checksum still holding.
    static func propertyList(_ data: Data, version newer: Int? = nil) -> Data {
        let text = String(decoding: data, as: UTF8.self)
        let key = "<key>formatVersion</key>\n\t<integer>"
        let start = text.range(of: key)!.upperBound
        let end = text[start...].range(of: "</integer>")!.lowerBound
        let version = Int(text[start..<end])!
        return Data((String(text[..<start]) + String(newer ?? version + 1) + String(text[end...])).utf8)
    }
}

@Suite("Mixed fleets: older readers and newer files")
struct MixedFleetTests {
    // MARK: Each reader, file by file

    @Test(
        "A reader refuses a newer change set, whole store, attachment, sealed file or property list by its version number"
    )
    func newerVersionsAreRefusedByNumber() throws {
        let scratch = TemporaryDirectory()
        func code(_ body: () throws -> Void) -> FolderSyncError.Code? {
            do {
                try body()
                return nil
            } catch { return (error as? FolderSyncError)?.code }
        }
        // Change set, format version 2.
        let set = scratch.url.appendingPathComponent("set.syncchg")
        try NewerFiles.changeSet(try Golden.data("change-sets/v1-inserts.syncchg")).write(to: set)
        #expect(code { _ = try ChangeSetReader.readHeader(at: set, path: "set") } == .unsupportedFormatVersion)
        #expect(code { try ChangeSetReader.forEachChange(at: set, path: "set") { _ in } } == .unsupportedFormatVersion)
        // Whole store, format version 3, stored and zlib.
        for name in ["format2-stored", "format2-zlib"] {
            let data = NewerFiles.wholeStore(try Golden.data("whole-stores/\(name).ticdsync"))
            let reader = try WholeStoreReader(
                snapshot: scratch.url.appendingPathComponent("\(name).sqlite"), path: name)
            #expect(
                code {
                    try reader.consume(data)
                    _ = try reader.finish()
                } == .unsupportedFormatVersion)
        }
        // Attachment, format version 2.
        let reference = GoldenCatalog.zlibAttachment
        var attachment = try Golden.data("attachments/\(reference.sha256)")
        attachment[8] = 2
        let attachmentURL = scratch.url.appendingPathComponent(reference.sha256)
        try attachment.write(to: attachmentURL)
        #expect(
            code { try AttachmentFile.verify(attachmentURL, sha256: reference.sha256, path: "a") }
                == .unsupportedFormatVersion)
        // Sealed file, format version 2.
        var sealed = try Golden.data("sealed/deviceInfo.plist")
        sealed[8] = 2
        #expect(
            code {
                _ = try SealedFile.open(
                    sealed, dataKey: GoldenCatalog.dataKey,
                    path: try RemotePath("com.example.notes/ClientDevices/\(Golden.clientA)/deviceInfo.plist"))
            } == .unsupportedFormatVersion)
        // Every property-list kind, format version 2.
        var kinds = 0
        for file in GoldenCatalog.files(of: .propertyList) {
            guard case .propertyList(let expected) = file.content else { continue }
            let newer = NewerFiles.propertyList(
                try Golden.data(file.path), version: type(of: expected).formatVersion + 1)
            #expect(
                code { _ = try decodedPayload(like: expected, from: newer, path: file.path) }
                    == .unsupportedFormatVersion, "\(file.path)")
            kinds += 1
        }
        #expect(kinds >= 10)
        // A newer remote layout in a version-1 envelope.
        let newerLayout = try PropertyListFile.encode(
            FormatVersionInfo(
                layoutVersion: RemoteLayout.formatVersion + 1,
                createdByClient: Golden.clientB, creationDate: Golden.date))
        #expect(
            code { _ = try FormatVersionInfo.decodeSupported(newerLayout, path: "FormatVersion.plist") }
                == .unsupportedFormatVersion)
        // A key file of another key derivation.
        var info = GoldenWriters.encryptionKeyInfo
        info.keyDerivation = "scrypt"
        #expect(
            code { _ = try info.passwordKey(for: GoldenCatalog.password, path: try RemotePath("k")) }
                == .unsupportedFormatVersion)
    }

    @Test("A reader of marker version 1 refuses one that carries change sets by its number, and reads today's others")
    func markerVersion1Reader() throws {
        #expect {
            try PropertyListFile.decode(
                RecentSyncVersion1.self, from: try Golden.data("recent-syncs/generation3.recentsync"), path: "m")
        } throws: {
            ($0 as? FolderSyncError)?.code == .unsupportedFormatVersion
        }
        var marker = GoldenCatalog.recentSyncGeneration3
        marker.changeSetContents = nil
        let read = try PropertyListFile.decode(
            RecentSyncVersion1.self, from: try PropertyListFile.encode(marker), path: "m")
        #expect(read.publishedSequence == 1 && read.recentChangeSets == marker.recentChangeSets)
    }

    @Test("A reader of the first generation fails the checksum of a marker or manifest that gained a key: corruptFile")
    func olderGenerationsFailTheChecksumOfAddedKeys() throws {
        // Today's marker names its newest change sets; a client from before that (ff738ad) re-encodes the payload
        // without them, and its checksum no longer matches.
        let marker = try Golden.data("recent-syncs/generation2.recentsync")
        #expect { try PropertyListFile.decode(RecentSyncGeneration1.self, from: marker, path: "m") } throws: {
            ($0 as? FolderSyncError)?.code == .corruptFile
        }
        // The first generation is read by both.
        let first = try Golden.data("recent-syncs/generation1.recentsync")
        #expect(try PropertyListFile.decode(RecentSyncGeneration1.self, from: first, path: "m").publishedSequence == 2)
        #expect(try PropertyListFile.decode(RecentSync.self, from: first, path: "m").recentChangeSets == nil)
        // The same for a manifest that counts its attachment references (0b62df5), even a count of 0; a manifest of
        // version 2 (whole-store format 3) is refused by its number.
        for name in ["format3-stored", "format3-stored-attachments"] {
            let manifest = try Golden.data("whole-stores/\(name).manifest.ticdsync")
            #expect {
                try PropertyListFile.decode(WholeStoreManifestGeneration1.self, from: manifest, path: name)
            } throws: {
                ($0 as? FolderSyncError)?.code == .unsupportedFormatVersion
            }
        }
        for name in ["format2-stored", "format2-stored-attachments"] {
            let manifest = try Golden.data("whole-stores/\(name).manifest.ticdsync")
            #expect {
                try PropertyListFile.decode(WholeStoreManifestGeneration1.self, from: manifest, path: name)
            } throws: {
                ($0 as? FolderSyncError)?.code == .corruptFile
            }
        }
        let old = try Golden.data("whole-stores/format1-packed-zlib.manifest.ticdsync")
        #expect(
            try PropertyListFile.decode(WholeStoreManifestGeneration1.self, from: old, path: "m").wholeStoreByteCount
                > 0)
        #expect(
            try PropertyListFile.decode(WholeStoreManifest.self, from: old, path: "m").attachmentReferenceCount == nil)
    }

    // MARK: What a client does with them

    /// The file of `client`'s change set `sequence` in `root`.
    static func changeSetFile(_ root: URL, client: String, sequence: Int64) throws -> URL {
        let folder = root.appendingPathComponent("com.example.notes/Documents/DOC/SyncChanges/\(client)")
        let name = try #require(
            try FileManager.default.contentsOfDirectory(atPath: folder.path)
                .first { RemoteLayout.parseChangeSetFileName($0)?.sequence == sequence })
        return folder.appendingPathComponent(name)
    }

    @Test(
        "A change set of a newer format version is parked with its client's later sets; the other clients' sets apply")
    func newerChangeSetIsParked() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let remote = FileManagerFileSystem(rootURL: root)
        let (a, b) = try await TestClient.pair(remote, in: directory)
        let c = try await TestClient.make(remote, name: "C", in: directory)
        try await a.sync()
        try b.execute("INSERT INTO notes(id, title) VALUES ('n1', 'from a newer B')")
        try await b.sync()
        try b.execute("INSERT INTO notes(id, title) VALUES ('n2', 'B again')")
        try await b.sync()
        try c.execute("INSERT INTO notes(id, title) VALUES ('c1', 'from C')")
        try await c.sync()
        let file = try Self.changeSetFile(root, client: "client-B", sequence: 1)
        try NewerFiles.changeSet(try Data(contentsOf: file)).write(to: file)
        for _ in 0..<2 {
            let report = try await a.sync()
            #expect(report.parkedChangeSets.contains { $0.hasSuffix(file.lastPathComponent) })
            #expect(
                report.warnings.contains {
                    $0.kind == .changeSetParked && $0.path?.hasSuffix(file.lastPathComponent) == true
                })
        }
        #expect(try a.value("SELECT group_concat(id) FROM notes") == "c1", "B's sets wait; C's apply")
    }

    @Test("A change set of a newer schema version is parked with its client's later sets; the updated app applies them")
    func newerSchemaIsParked() async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let a = try await TestClient.make(remote, name: "A", in: directory)
        let b = try await TestClient.make(remote, name: "B", in: directory, schemaVersion: 2)
        try b.execute("INSERT INTO notes(id, title) VALUES ('n1', 'schema 2')")
        try await b.sync()
        try b.execute("INSERT INTO notes(id, title) VALUES ('n2', 'schema 2 again')")
        try await b.sync()
        try a.execute("INSERT INTO notes(id, title) VALUES ('a1', 'from A')")
        let report = try await a.sync()
        #expect(report.parkedChangeSets.count == 1)
        #expect(report.warnings.contains { $0.kind == .changeSetParked })
        #expect(try a.value("SELECT group_concat(id) FROM notes") == "a1")
        // B, at schema 2, still reads A's schema-1 sets.
        try await b.sync()
        #expect(try b.value("SELECT group_concat(id) FROM (SELECT id FROM notes ORDER BY id)") == "a1,n1,n2")
        // A updated to schema 2 applies what was parked.
        try a.store.close()
        let updated = try await TestClient.make(remote, name: "A", in: directory, schemaVersion: 2)
        let after = try await updated.sync()
        #expect(after.parkedChangeSets.isEmpty)
        #expect(try updated.value("SELECT group_concat(id) FROM (SELECT id FROM notes ORDER BY id)") == "a1,n1,n2")
    }

    @Test(
        "A recent-sync marker of a newer version is a warning: the sync lists its client's folder instead; vacuum counts that client as acknowledging nothing"
    )
    func newerRecentSyncIsAWarning() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let (a, b) = try await TestClient.pair(FileManagerFileSystem(rootURL: root), in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('a1', 'from A')")
        try await converge(a, b)
        try b.execute("INSERT INTO notes(id, title) VALUES ('b1', 'from B')")
        try await b.sync()
        let marker = root.appendingPathComponent("com.example.notes/Documents/DOC/RecentSyncs/client-B.recentsync")
        try NewerFiles.propertyList(try Data(contentsOf: marker), version: RecentSync.formatVersion + 1).write(
            to: marker)
        let report = try await a.sync()
        #expect(
            report.warnings.contains { $0.kind == .unreadableFile && $0.path?.hasSuffix("client-B.recentsync") == true }
        )
        #expect(try a.value("SELECT group_concat(id) FROM (SELECT id FROM notes ORDER BY id)") == "a1,b1")
        let vacuum = try await a.document.vacuum(dryRun: true)
        #expect(vacuum.skipped.contains { $0.path.description.hasSuffix("client-B.recentsync") })
    }

    @Test(
        "A new device skips a whole store of a newer format (with a warning) or one whose manifest is newer, and joins from change sets"
    )
    func newerWholeStoreIsSkipped() async throws {
        for damage in ["store", "manifest"] {
            let directory = TemporaryDirectory()
            let root = directory.subdirectory("remote")
            let remote = FileManagerFileSystem(rootURL: root)
            let a = try await TestClient.make(remote, name: "A", in: directory)
            try a.execute("INSERT INTO notes(id, title) VALUES ('a1', 'from A')")
            try await a.sync()
            #expect(try await a.document.uploadWholeStore() != nil)
            let folder = root.appendingPathComponent("com.example.notes/Documents/DOC/WholeStore/client-A")
            let store = folder.appendingPathComponent("WholeStore.ticdsync")
            let manifest = folder.appendingPathComponent("AppliedSyncChangeSets.ticdsync")
            if damage == "store" {
                try NewerFiles.wholeStore(try Data(contentsOf: store)).write(to: store)
            } else {
                try NewerFiles.propertyList(try Data(contentsOf: manifest)).write(to: manifest)
            }
            let c = try await TestClient.make(remote, name: "C", in: directory)
            let report = try await c.sync()
            #expect(try c.value("SELECT group_concat(id) FROM notes") == "a1", "\(damage)")
            #expect(report.warnings.contains { $0.kind == .wholeStoreUnusable } == (damage == "store"), "\(damage)")
        }
    }
}
