import FolderSyncTesting
import Foundation
import GRDB
import Testing

@_spi(Tooling) @_spi(ModelAdapter) @_spi(Testing) @testable import FolderSync
@testable import TestSupport

/// How a whole store reaches a new device: read once (checked while it is read), then installed page by page
/// into a store that holds no synced data yet, or merged row by row into one that does.
@Suite("Whole-store install")
struct WholeStoreInstallTests {
    /// A shared folder where A published 40 notes and uploaded a whole store with `compression`.
    static func publisher(in directory: TemporaryDirectory, compression: WholeStoreCompression = .none) async throws
        -> (remote: FileManagerFileSystem, a: TestClient)
    {
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let a = WholeStoreTests.manual(try await TestClient.make(remote, name: "A", in: directory))
        a.document.policy.wholeStoreCompression = compression
        try await a.store.database.write { db in
            for index in 0..<40 {
                try db.execute(
                    sql: "INSERT INTO notes(id, title, body) VALUES (?, ?, ?)",
                    arguments: ["n\(index)", "title \(index)", String(repeating: "b", count: 300)])
            }
        }
        try await a.sync()
        _ = try #require(try await a.document.uploadWholeStore())
        return (remote, a)
    }

    /// A new client whose store has only an app-local table (with a row, an index, a trigger) and header fields.
    static func joiner(_ remote: FileManagerFileSystem, in directory: TemporaryDirectory) async throws -> TestClient {
        let c = WholeStoreTests.manual(try await TestClient.make(remote, name: "C", in: directory))
        try await c.store.database.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE local_settings(key TEXT PRIMARY KEY, value TEXT);
                    CREATE INDEX local_settings_value ON local_settings(value);
                    CREATE TABLE local_log(id INTEGER PRIMARY KEY AUTOINCREMENT, what TEXT);
                    CREATE TRIGGER local_settings_logged AFTER INSERT ON local_settings BEGIN
                        INSERT INTO local_log(what) VALUES ('set ' || NEW.key);
                    END;
                    INSERT INTO local_settings VALUES ('theme', 'dark');
                    PRAGMA user_version = 7;
                    """)
        }
        return c
    }

    func wholeStoreFile(_ client: TestClient, in directory: TemporaryDirectory) -> URL {
        directory.url.appendingPathComponent("remote")
            .appendingPathComponent(
                client.document.relativePathToThisDocumentWholeStoreThisClientDirectoryWholeStoreFile.description)
    }

    @Test(
        "A store with only non-synced data installs the snapshot's pages, keeping its own tables, triggers and header")
    func pageInstall() async throws {
        let directory = TemporaryDirectory()
        let (remote, a) = try await Self.publisher(in: directory)
        try a.execute("UPDATE notes SET title = 'after the store' WHERE id = 'n1'")
        try await a.sync()
        let c = try await Self.joiner(remote, in: directory)

        let report = try await c.sync()
        #expect(report.installedWholeStore != nil)
        #expect(
            c.store.lastInstallCopiedPages.current == true,
            "the store had no synced data: its pages should have been installed")
        #expect(report.changeSetsApplied == 1, "only the set after the whole store should be applied")
        #expect(try NotesSchema.dump(c.store) == NotesSchema.dump(a.store))
        #expect(try c.value("SELECT value FROM local_settings WHERE key = 'theme'") == "dark")
        #expect(try c.value("SELECT group_concat(id || ':' || what) FROM local_log") == "1:set theme")
        let (userVersion, integrity, index) = try await c.store.database.read { db in
            (
                try Int.fetchOne(db, sql: "PRAGMA user_version"),
                try String.fetchOne(db, sql: "PRAGMA integrity_check"),
                try Bool.fetchOne(
                    db, sql: "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'local_settings_value')")
            )
        }
        #expect(userVersion == 7 && integrity == "ok" && index == true)
        // The app's own trigger and AUTOINCREMENT sequence, and change capture, work on the installed file.
        try c.execute("INSERT INTO local_settings VALUES ('font', 'mono')")
        #expect(try c.value("SELECT group_concat(id || ':' || what) FROM local_log") == "1:set theme,2:set font")
        try c.execute("UPDATE notes SET body = 'edited on C' WHERE id = 'n2'")
        try c.execute("INSERT INTO notes(id, title) VALUES ('c1', 'from C')")
        let sent = try await c.sync()
        #expect(sent.changeSetsSent == 1)
        try await a.sync()
        #expect(try a.value("SELECT body FROM notes WHERE id = 'n2'") == "edited on C")
        #expect(try NotesSchema.dump(a.store) == NotesSchema.dump(c.store))
        #expect(
            try a.value("SELECT CAST(count(*) AS TEXT) FROM sqlite_master WHERE name LIKE 'local_%'") == "0",
            "app-local tables must not travel")
    }

    @Test("A store with synced data merges the store's rows instead, keeping its unpublished write")
    func rowInstall() async throws {
        let directory = TemporaryDirectory()
        let (remote, a) = try await Self.publisher(in: directory)
        let c = try await Self.joiner(remote, in: directory)
        try c.execute("INSERT INTO notes(id, title) VALUES ('mine', 'before the first sync')")
        #expect(try await c.sync().installedWholeStore != nil)
        #expect(c.store.lastInstallCopiedPages.current == false)
        #expect(try c.value("SELECT title FROM notes WHERE id = 'mine'") == "before the first sync")
        #expect(try c.value("SELECT value FROM local_settings WHERE key = 'theme'") == "dark")
        try await a.sync()
        #expect(try NotesSchema.dump(a.store) == NotesSchema.dump(c.store))
    }

    /// Found by the soak (seed 1800058 of the restore schedule): the row came back without registers for the columns
    /// not being changed, so a later write of the value they held had no stamp at all.
    @Test(
        "A row the installed store lacks, with a local update pending, comes back with every register it had: its published columns keep their stamps"
    )
    func rowPutBackKeepsItsRegisters() async throws {
        let directory = TemporaryDirectory()
        let (a, b) = try await TestClient.pair(InMemoryFileSystem(), in: directory)
        try await b.document.uploadWholeStore()  // covers nothing of A
        try a.execute("INSERT INTO notes(id, title, body) VALUES ('n1', 'one', 'first')")
        try await a.sync()  // published, not in B's store
        try a.execute("UPDATE notes SET body = 'second' WHERE id = 'n1'")
        func stamps() throws -> [String: ChangeStamp?] {
            Dictionary(
                uniqueKeysWithValues: try ["title", "body", "folder_id"].map {
                    (
                        $0,
                        try a.store.stamp(
                            of: ColumnKey(table: "notes", syncID: "n1", column: $0), localClient: "client-A")
                    )
                })
        }
        let before = try stamps()
        #expect(before.values.allSatisfy { $0 != nil }, "\(before)")
        #expect(try await a.document.downloadWholeStore()?.clientIdentifier == "client-B")
        #expect(try stamps() == before)
        #expect(try a.value("SELECT title || '/' || body FROM notes WHERE id = 'n1'") == "one/second")
        // the value it holds: no new stamp, the old one stays
        try a.execute("UPDATE notes SET folder_id = NULL WHERE id = 'n1'")
        #expect(try stamps() == before)
        try await converge(a, b)
        #expect(try NotesSchema.dump(a.store) == NotesSchema.dump(b.store))
        #expect(try b.value("SELECT title || '/' || body FROM notes WHERE id = 'n1'") == "one/second")
    }

    @Test(
        "After a row merge, the next local write is stamped after the store's newest deletion, even one ahead of the wall clock"
    )
    func rowInstallObservesDeletions() async throws {
        let directory = TemporaryDirectory()
        let (remote, a) = try await Self.publisher(in: directory)
        try a.execute("DELETE FROM notes WHERE id = 'n0'")
        try await a.sync()
        // The delete's stamp in the whole store an hour ahead of every register (a client whose clock ran fast).
        let ahead = HybridTimestamp(
            milliseconds: UInt64(Date().addingTimeInterval(3600).timeIntervalSince1970 * 1000), counter: 0)
        try a.execute("UPDATE foldersync_tombstones SET hlc = ?", [Int64(bitPattern: ahead.rawValue)])
        _ = try #require(try await a.document.uploadWholeStore())
        let c = try await Self.joiner(remote, in: directory)
        try c.execute("INSERT INTO notes(id, title) VALUES ('mine', 'before the first sync')")
        #expect(try await c.sync().installedWholeStore != nil)
        #expect(
            c.store.lastInstallCopiedPages.current == false,
            "the store had synced data: its rows should have been merged")

        try c.execute("UPDATE notes SET title = 'after the install' WHERE id = 'n1'")
        let stamp = try #require(
            try c.store.stamp(of: ColumnKey(table: "notes", syncID: "n1", column: "title"), localClient: "client-C"))
        #expect(stamp.timestamp > ahead)
    }

    @Test(
        "A corrupted or truncated whole store is refused while it is read; the local store is untouched",
        arguments: ["flip", "truncate", "append"])
    func damagedWhileReading(damage: String) async throws {
        let directory = TemporaryDirectory()
        let (remote, a) = try await Self.publisher(in: directory)
        let file = wholeStoreFile(a, in: directory)
        var bytes = try Data(contentsOf: file)
        switch damage {
        case "flip": bytes[bytes.count / 2] ^= 0x01  // inside the SQLite pages: only the checksum can tell
        case "truncate": bytes.removeLast(bytes.count / 3)
        default: bytes.append(contentsOf: [0, 0, 0, 0])
        }
        try bytes.write(to: file)
        let c = try await Self.joiner(remote, in: directory)
        await #expect { try await c.document.downloadWholeStore() } throws: {
            ($0 as? FolderSyncError)?.code == .corruptFile
        }
        #expect(c.store.lastInstallCopiedPages.current == nil)
        #expect(try c.value("SELECT CAST(count(*) AS TEXT) FROM notes") == "0")
        #expect(try c.value("SELECT value FROM local_settings WHERE key = 'theme'") == "dark")
    }

    @Test(
        "Whole stores of format 1 (zlib) and 2 (zlib), with a manifest of version 1, and a zlib one of format 3 still install"
    )
    func olderAndCompressedFormats() async throws {
        for version: UInt8 in [1, 2, 3] {
            let directory = TemporaryDirectory()
            let (remote, a) = try await Self.publisher(in: directory, compression: .zlib)
            let file = wholeStoreFile(a, in: directory)
            let manifestFile = file.deletingLastPathComponent().appendingPathComponent(
                RemoteLayout.appliedSyncChangeSetsFileName)
            var manifest = try PropertyListFile.decode(
                WholeStoreManifest.self, from: try Data(contentsOf: manifestFile), path: "manifest")
            if version < 3 {
                // As their writers wrote them: no snapshot schema version nor coverage in the file, and a manifest
                // whose only checksum is the whole file's.
                let rewritten = try Self.olderVersion(version, of: file, in: directory)
                try rewritten.write(to: file)
                manifest.wholeStoreByteCount = Int64(rewritten.count)
                manifest.wholeStoreChecksum = Checksum.crc32(rewritten)
                manifest.contentChecksum = nil
                try PropertyListFile.encode(manifest).write(to: manifestFile)
            }
            #expect(try Data(contentsOf: file)[8] == version)
            let c = try await Self.joiner(remote, in: directory)
            #expect(try await c.sync().installedWholeStore?.wholeStoreIdentifier == manifest.wholeStoreIdentifier)
            #expect(try NotesSchema.dump(c.store) == NotesSchema.dump(a.store))
        }
    }

    /// The same store as a file of format 1 (the header without its encoding byte) or 2 (the header without its
    /// snapshot schema version and coverage), with a zlib body.
    static func olderVersion(_ version: UInt8, of file: URL, in directory: TemporaryDirectory) throws -> Data {
        let snapshot = directory.url.appendingPathComponent("old-snapshot.sqlite")
        let header = try WholeStoreFile.read(file, to: snapshot, path: "v3")
        var fields = ByteSink()
        fields.appendString(header.wholeStoreIdentifier)
        fields.appendString(header.clientIdentifier)
        fields.appendInt64(Int64(header.schemaVersion))
        fields.appendUInt64(header.snapshotByteCount)
        if version == 2 { fields.bytes.append(WholeStoreCompression.zlib.rawValue) }
        var bytes = ByteSink()
        bytes.bytes += WholeStoreFile.magic + [version]
        bytes.appendUInt32(UInt32(fields.bytes.count))
        bytes.bytes += fields.bytes
        var body: [UInt8] = []
        let deflater = try DeflateStream(path: "v1") { body += $0 }
        try Data(contentsOf: snapshot).withUnsafeBytes { try deflater.write($0) }
        try deflater.finish()
        var data = Data(bytes.bytes + body)
        var trailer = ByteSink()
        trailer.appendUInt32(Checksum.crc32(data))
        data += trailer.bytes
        return data
    }

    @Test("A whole store read in pieces of any size gives the same snapshot, stored or compressed")
    func readerPieces() throws {
        let directory = TemporaryDirectory()
        let source = directory.url.appendingPathComponent("source.bin")
        try Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 7) }).write(to: source)
        for compression in WholeStoreCompression.allCases {
            let file = directory.url.appendingPathComponent("store-\(compression)")
            let written = try WholeStoreFile.write(
                snapshot: source, to: file,
                header: .init(
                    wholeStoreIdentifier: "W", clientIdentifier: "C", schemaVersion: 3, snapshotByteCount: 200_000,
                    compression: compression))
            let bytes = try Data(contentsOf: file)
            for size in [1, 3, 4, 5, 4096, 1 << 20] {
                let snapshot = directory.url.appendingPathComponent("snapshot-\(compression)-\(size)")
                let reader = try WholeStoreReader(snapshot: snapshot, path: "test", checksSnapshot: false)
                var offset = 0
                while offset < bytes.count {
                    try reader.consume(bytes.subdata(in: offset..<min(bytes.count, offset + size)))
                    offset += size
                }
                let result = try reader.finish()
                #expect(result.header.compression == compression && result.header.schemaVersion == 3)
                #expect(result.byteCount == written.byteCount && result.checksum == written.checksum)
                #expect(try Data(contentsOf: snapshot) == Data(contentsOf: source))
            }
        }
    }
}
