import FolderSyncTesting
import Foundation
import Testing

@_spi(Tooling) @_spi(ModelAdapter) @testable import FolderSync
@testable import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Issue 25, items 6, 8 and 10: the file-manager backend follows no symbolic link below its root and reads within
/// bounds; PBKDF2 rounds are bounded; what FolderSync writes locally is the user's alone.
@Suite("Local folder security")
struct LocalFolderSecurityTests {
    static func mode(_ url: URL) -> mode_t {
        var info = stat()
        #expect(lstat(url.path, &info) == 0, "\(url.path) should exist")
        return info.st_mode & 0o777
    }

    static func isLink(_ error: FolderSyncError, _ code: FolderSyncError.Code, _ path: String) -> Bool {
        error.code == code && error.path == path && error.message.contains("symbolic link; not followed")
    }

    static func error(_ body: () async throws -> Void) async -> FolderSyncError? {
        do {
            try await body()
            return nil
        } catch {
            return error as? FolderSyncError ?? FolderSyncError(.localStoreFailed, "untyped: \(error)")
        }
    }

    @Test(
        "A marker linked to /dev/zero is refused, typed, without reading: bounded and unbounded reads, download and pieces"
    )
    func linkToDevZero() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let remote = FileManagerFileSystem(rootURL: root)
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("RecentSyncs"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: root.appendingPathComponent("RecentSyncs/B.recentsync").path, withDestinationPath: "/dev/zero")
        let path = try RemotePath("RecentSyncs/B.recentsync")

        let bounded = try #require(
            await Self.error { _ = try await remote.read(path, maximumSize: PropertyListFile.maximumByteCount) })
        #expect(Self.isLink(bounded, .corruptFile, path.description), "\(bounded)")
        let whole = try #require(await Self.error { _ = try await remote.read(path) })
        #expect(Self.isLink(whole, .corruptFile, path.description), "\(whole)")
        let pieces = try #require(await Self.error { try await remote.readPieces(of: path, size: 1 << 20) { _ in } })
        #expect(Self.isLink(pieces, .corruptFile, path.description), "\(pieces)")
        // A device node that is not a link (a remote someone else runs could hold one) is refused too.
        let device = try #require(
            await Self.error {
                _ = try await FileManagerFileSystem(rootURL: URL(fileURLWithPath: "/dev")).read(
                    try RemotePath("zero"), maximumSize: 1024)
            })
        #expect(device.code == .corruptFile && device.message.contains("not a regular file"), "\(device)")
    }

    @Test("A change set linked to a private file is not copied out: no download, nothing left in the helper folder")
    func linkToPrivateFile() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let secret = directory.url.appendingPathComponent("private.key")
        try LocalFiles.writeDurably(Data("secret-of-the-NAS-user".utf8), to: secret)
        #expect(Self.mode(secret) == 0o600)
        let remote = FileManagerFileSystem(rootURL: root)
        // a folder of the root is made only by itself
        try await remote.createDirectory(at: try RemotePath("SyncChanges"))
        try await remote.createDirectory(at: try RemotePath("SyncChanges/B"))
        try FileManager.default.createSymbolicLink(
            atPath: root.appendingPathComponent("SyncChanges/B/1-X.syncchg").path, withDestinationPath: secret.path)
        let path = try RemotePath("SyncChanges/B/1-X.syncchg")
        let downloads = directory.subdirectory("Downloads")
        let destination = downloads.appendingPathComponent("1-X.syncchg")

        let error = try #require(await Self.error { try await remote.download(path, toLocalFile: destination) })
        #expect(Self.isLink(error, .corruptFile, path.description), "\(error)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: downloads.path).isEmpty)
        // A regular file is downloaded private to this user.
        try Data("change set".utf8).write(to: root.appendingPathComponent("SyncChanges/B/2-Y.syncchg"))
        try await remote.download(try RemotePath("SyncChanges/B/2-Y.syncchg"), toLocalFile: destination)
        #expect(Self.mode(destination) == 0o600)
    }

    @Test("A client folder linked to a folder outside the share is not written, listed, moved into nor emptied through")
    func linkedFolder() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let outside = directory.subdirectory("outside")
        try Data("keep me".utf8).write(to: outside.appendingPathComponent("victim.txt"))
        let remote = FileManagerFileSystem(rootURL: root)
        try await remote.createDirectory(at: try RemotePath("Documents"))
        try await remote.createDirectory(at: try RemotePath("Documents/DOC/SyncChanges"))
        try FileManager.default.createSymbolicLink(
            atPath: root.appendingPathComponent("Documents/DOC/SyncChanges/A").path, withDestinationPath: outside.path)
        let folder = try RemotePath("Documents/DOC/SyncChanges/A")
        let linkPath = folder.description

        let write = try #require(
            await Self.error { try await remote.write(Data("set".utf8), to: folder.appending("1-X.syncchg")) })
        #expect(Self.isLink(write, .permissionDenied, linkPath), "\(write)")
        try await remote.write(Data("set".utf8), to: try RemotePath("Documents/DOC/staged"))
        let move = try #require(
            await Self.error {
                try await remote.move(
                    from: try RemotePath("Documents/DOC/staged"), to: folder.appending("1-X.syncchg"), replacing: false)
            })
        #expect(Self.isLink(move, .permissionDenied, linkPath), "\(move)")
        let make = try #require(await Self.error { try await remote.createDirectory(at: folder.appending("sub")) })
        #expect(Self.isLink(make, .permissionDenied, linkPath), "\(make)")
        let list = try #require(await Self.error { _ = try await remote.contentsOfDirectory(at: folder) })
        #expect(Self.isLink(list, .permissionDenied, linkPath), "\(list)")
        let remove = await Self.error { try await remote.remove(folder.appending("victim.txt")) }
        #expect(remove.map { Self.isLink($0, .permissionDenied, linkPath) } == true, "\(String(describing: remove))")
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path) == ["victim.txt"])
        // Removing the link itself removes the link, never what it points to.
        try await remote.remove(folder)
        #expect(try String(contentsOf: outside.appendingPathComponent("victim.txt"), encoding: .utf8) == "keep me")
    }

    @Test(
        "The client whose own change-set folder is a link to outside the share stops with permissionDenied and publishes nothing there"
    )
    func syncThroughLinkedFolder() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let remote = FileManagerFileSystem(rootURL: root)
        let a = try await TestClient.make(remote, name: "A", in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'first')")
        try await a.sync()
        let own = root.appendingPathComponent(
            a.document.relativePathToThisDocumentSyncChangesThisClientDirectory.description)
        let outside = directory.subdirectory("outside")
        try FileManager.default.removeItem(at: own)
        try FileManager.default.createSymbolicLink(atPath: own.path, withDestinationPath: outside.path)

        try a.execute("INSERT INTO notes(id, title) VALUES ('n2', 'second')")
        let error = try #require(await Self.error { try await a.sync() })
        #expect(error.code == .permissionDenied && error.message.contains("symbolic link"), "\(error)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path).isEmpty)
        #expect(try a.store.hasUnpublishedChanges(), "the write should still be pending")
    }

    @Test("A root that is itself a link (a mount point moved aside) still works")
    func linkedRoot() async throws {
        let directory = TemporaryDirectory()
        let real = directory.subdirectory("real")
        let link = directory.url.appendingPathComponent("share")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: real.path)
        let remote = FileManagerFileSystem(rootURL: link)
        try await remote.createDirectory(at: try RemotePath("a"))
        try await remote.createDirectory(at: try RemotePath("a/b"))
        try await remote.write(Data("x".utf8), to: try RemotePath("a/b/f"))
        #expect(try await remote.read(try RemotePath("a/b/f"), maximumSize: 10) == Data("x".utf8))
        #expect(Self.mode(real.appendingPathComponent("a/b/f")) == 0o644, "remote files keep shared modes")
        #expect(Self.mode(real.appendingPathComponent("a/b")) == 0o755, "remote folders keep shared modes")
        let tooLarge = try #require(
            await Self.error { _ = try await remote.read(try RemotePath("a/b/f"), maximumSize: 0) })
        #expect(tooLarge.code == .corruptFile)
    }

    @Test(
        "PBKDF2 rounds outside 600,000…10,000,000 are refused before any derivation, naming the key file",
        arguments: [9_000_000_000_000_000_000, 2_147_483_648, 10_000_001, 599_999])
    func roundsBounded(iterations: Int) async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        _ = try await TestClient.encrypted(
            remote, name: "A", in: directory, answers: EncryptionAnswers(.password("right")))
        let layout = try RemoteLayout(applicationIdentifier: "com.example.notes")
        var info = try PropertyListFile.decode(
            EncryptionKeyInfo.self, from: try await remote.read(layout.encryptionKeyFile), path: "key")
        #expect(info.iterations == EncryptionKeyInfo.minimumIterations)
        info.iterations = iterations
        try await remote.write(try PropertyListFile.encode(info), to: layout.encryptionKeyFile)

        let started = Date()
        let error = try #require(
            await Self.error { _ = try await EncryptedFileSystem.unlocking(remote, layout: layout, password: "right") })
        #expect(error.path == layout.encryptionKeyFile.description)
        #expect(
            error.code == (iterations < EncryptionKeyInfo.minimumIterations ? .tamperedFile : .corruptFile), "\(error)")
        #expect(Date().timeIntervalSince(started) < 2, "nothing should have been derived")
    }

    @Test("The helper folder and what sync writes in it are this user's alone; snapshots and decrypted copies too")
    func privateModes() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let remote = FileManagerFileSystem(rootURL: root)
        // A helper folder left 0755 by an older version is made private at registration.
        let helper = directory.subdirectory("A").appendingPathComponent("helper")
        try FileManager.default.createDirectory(
            at: helper, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let a = try await TestClient.make(remote, name: "A", in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'x')")
        try await a.sync()
        let layout = a.document.localLayout
        #expect(Self.mode(layout.helperDirectory) == 0o700)
        #expect(Self.mode(layout.registrationFile) == 0o600)
        #expect(Self.mode(layout.downloadsDirectory) == 0o700)
        #expect(Self.mode(layout.syncLockFile) == 0o600)
        // A whole store's snapshot, unpacked, is 0600.
        _ = try #require(try await a.document.uploadWholeStore())
        let (file, _) = HostileFiles.wholeStore(of: a, remoteRoot: root)
        let snapshot = directory.url.appendingPathComponent("snapshot.sqlite")
        _ = try WholeStoreFile.read(file, to: snapshot, path: "store")
        #expect(Self.mode(snapshot) == 0o600)
        #expect(Self.mode(file) == 0o644, "remote files keep shared modes")
        // A reset's backup of the store.
        let backup = layout.backupsDirectory.appendingPathComponent("backup.sqlite")
        try LocalFiles.createDirectory(layout.backupsDirectory)
        try a.store.backup(to: backup)
        #expect(Self.mode(layout.backupsDirectory) == 0o700 && Self.mode(backup) == 0o600)
        // Scratch folders for decrypted copies: 0700, named for the user, new each time.
        let scratch = try LocalFiles.privateScratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        #expect(Self.mode(scratch) == 0o700 && scratch.lastPathComponent.hasPrefix("foldersync-\(getuid())-"))
        #expect(
            try LocalFiles.privateScratchDirectory(in: directory.url)
                != LocalFiles.privateScratchDirectory(in: directory.url))
    }

    @Test("The default readPieces downloads into a private scratch folder, removed afterwards")
    func defaultReadPiecesScratch() async throws {
        let directory = TemporaryDirectory()
        let memory = InMemoryFileSystem()
        try await memory.write(Data("whole store".utf8), to: try RemotePath("w"))
        let seen = Locked<[String]>([])
        let observing = ObservingDownloads(base: memory) { url in
            var info = stat()
            _ = lstat(url.deletingLastPathComponent().path, &info)
            seen.withLock {
                $0.append(
                    "\(url.deletingLastPathComponent().lastPathComponent.hasPrefix("foldersync-\(getuid())-")) \(String(info.st_mode & 0o777, radix: 8))"
                )
            }
        }
        var collected = Data()
        try await observing.readPieces(of: try RemotePath("w"), size: 4) { collected += $0 }
        #expect(collected == Data("whole store".utf8))
        #expect(seen.current == ["true 700"])
        _ = directory
    }

    @Test(
        "A whole store claiming more bytes than the disk can take is refused before anything is written (a zlib bomb)")
    func claimedSizeBounded() throws {
        let directory = TemporaryDirectory()
        // A valid file in every checksum: a header claiming 2^60 bytes, a zlib body of 1 MiB of zeros (a kilobyte).
        var body: [UInt8] = []
        let deflater = try DeflateStream(path: "bomb") { body += $0 }
        try Data(count: 1 << 20).withUnsafeBytes { try deflater.write($0) }
        try deflater.finish()
        var bytes = Data(
            WholeStoreFile.encodedHeader(
                .init(
                    wholeStoreIdentifier: "W", clientIdentifier: "C", schemaVersion: 1,
                    snapshotByteCount: 1 << 60, compression: .zlib)) + body)
        var trailer = ByteSink()
        trailer.appendUInt32(Checksum.crc32(bytes))
        bytes += trailer.bytes
        let file = directory.url.appendingPathComponent("bomb.ticdsync")
        try bytes.write(to: file)
        let snapshot = directory.url.appendingPathComponent("out.sqlite")
        #expect { _ = try WholeStoreFile.read(file, to: snapshot, path: "WholeStore.ticdsync") } throws: { error in
            let error = error as? FolderSyncError
            return error?.code == .localStoreFailed && error?.path == "WholeStore.ticdsync"
                && error?.message.contains("more than the local disk can take") == true
        }
        #expect(!FileManager.default.fileExists(atPath: snapshot.path))
    }
}

/// A backend without its own readPieces (the protocol's default), telling where each download goes.
private struct ObservingDownloads: RemoteFileSystem {
    let base: InMemoryFileSystem
    let observe: @Sendable (URL) -> Void
    func contentsOfDirectory(at path: RemotePath) async throws -> [RemoteItem] {
        try await base.contentsOfDirectory(at: path)
    }
    func item(at path: RemotePath) async throws -> RemoteItem? { await base.item(at: path) }
    func read(_ path: RemotePath) async throws -> Data { try await base.read(path) }
    func write(_ data: Data, to path: RemotePath) async throws { try await base.write(data, to: path) }
    func move(from source: RemotePath, to destination: RemotePath, replacing: Bool) async throws {
        try await base.move(from: source, to: destination, replacing: replacing)
    }
    func remove(_ path: RemotePath) async throws { try await base.remove(path) }
    func createDirectory(at path: RemotePath) async throws { try await base.createDirectory(at: path) }
    func download(_ path: RemotePath, toLocalFile url: URL) async throws {
        observe(url)
        try LocalFiles.writeDurably(try await read(path), to: url)
    }
}
