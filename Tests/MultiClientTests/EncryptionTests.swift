import Crypto
import Foundation
import GRDB
import Logging
import Testing

@_spi(Tooling) @_spi(ModelAdapter) @testable import FolderSync
@testable import TestSupport

@Suite("End-to-end encryption")
struct EncryptionTests {
    static let secrets = [
        "Quarterly plan for Zanzibar", "the vault code is 4711", "Holidays-Folder", "urgent-tag-xyzzy",
        "Private Notes Of Ann", "Ann's laptop secret",
    ]

    /// Three clients write every kind of secret, one uploads a whole store, the third bootstraps from it.
    private func threeClientSync(_ directory: TemporaryDirectory, encrypted: Bool) async throws -> URL {
        let root = directory.subdirectory("remote")
        let remote = FileManagerFileSystem(rootURL: root)
        func client(_ name: String, description: String) async throws -> TestClient {
            let folder = directory.subdirectory(name)
            let store = try NotesSchema.open(folder.appendingPathComponent("notes.sqlite"))
            let app = ApplicationSyncManager(remote: remote, environment: Fixture.quietEnvironment())
            if encrypted { app.encryptionHandler = { _ in .password("correct horse battery staple") } }
            try await app.register(
                .init(
                    applicationIdentifier: "com.example.notes", clientIdentifier: "client-\(name)",
                    clientDescription: description, userInfo: ["owner": "Ann's laptop secret"]))
            let document = try await DocumentSyncManager(
                applicationSyncManager: app,
                registering: .init(
                    documentIdentifier: "DOC", documentDescription: "Private Notes Of Ann",
                    helperDirectory: folder.appendingPathComponent("helper")),
                store: store, remoteDocumentCreationHandler: { _ in true })
            return TestClient(app: app, document: document, store: store)
        }
        let a = try await client("A", description: "Ann's laptop secret")
        let b = try await client("B", description: "phone")
        try a.execute("INSERT INTO folders VALUES ('f1', 'Holidays-Folder')")
        try a.execute(
            "INSERT INTO notes VALUES ('n1', 'Quarterly plan for Zanzibar', ?, 'f1')",
            [String(repeating: "the vault code is 4711. ", count: 50)])
        try b.execute("INSERT INTO tags VALUES ('t1', 'urgent-tag-xyzzy')")
        try await converge(a, b)
        try b.execute("INSERT INTO note_tags VALUES ('nt1', 'n1', 't1')")
        try await converge(a, b)
        _ = try await a.document.uploadWholeStore()
        let c = try await client("C", description: "tablet")
        try c.execute("UPDATE notes SET body = 'the vault code is 4711 (moved)' WHERE id = 'n1'")
        try await converge(a, b, c)
        #expect(try NotesSchema.dump(a.store) == NotesSchema.dump(c.store))
        #expect(try c.value("SELECT name FROM tags") == "urgent-tag-xyzzy")
        return root
    }

    @Test("After a three-client sync no remote file contains a note's text, title, folder or tag, or a description")
    func nothingInClear() async throws {
        let directory = TemporaryDirectory()
        let root = try await threeClientSync(directory, encrypted: true)
        let files = try remoteFiles(root)
        #expect(files.keys.contains { $0.hasSuffix("WholeStore.ticdsync") })
        #expect(files.keys.contains { $0.hasSuffix(".syncchg") })
        for (path, bytes) in files {
            for secret in Self.secrets {
                #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(path) contains \(secret)")
            }
            let clear =
                path.hasSuffix("/FormatVersion.plist") || path.hasSuffix("/ReadMe.txt")
                || path.hasSuffix("/Encryption/EncryptionKey.plist") || path.contains("/IntegrityKey/")
            #expect(clear || bytes.prefix(8) == SealedFileHeader.magic, "\(path) is not sealed")
        }
    }

    @Test("The same run without encryption leaves descriptions and change sets readable, so the search above can fail")
    func clearWithoutEncryption() async throws {
        let directory = TemporaryDirectory()
        let root = try await threeClientSync(directory, encrypted: false)
        let all = try remoteFiles(root).values.reduce(Data(), +)
        #expect(all.range(of: Data("Private Notes Of Ann".utf8)) != nil)
        #expect(all.range(of: Data("Ann's laptop secret".utf8)) != nil)
        #expect(all.range(of: SealedFileHeader.magic) == nil)
    }

    @Test("A wrong password is re-asked; cancelling after it gives wrongPassword and leaves the local store alone")
    func wrongPassword() async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let a = try await TestClient.encrypted(
            remote, name: "A", in: directory, answers: EncryptionAnswers(.password("right")))
        try a.execute("INSERT INTO notes(id, title) VALUES ('a1', 'from A')")
        try await a.sync()

        // B has local data of its own before it first registers.
        let storeURL = directory.subdirectory("B").appendingPathComponent("notes.sqlite")
        let local = try NotesSchema.open(storeURL)
        try await local.database.write {
            try $0.execute(sql: "INSERT INTO notes(id, title) VALUES ('b0', 'B offline')")
        }
        let localBefore = try NotesSchema.dump(local)
        let pendingBefore = try await local.database.read {
            try Int.fetchOne($0, sql: "SELECT count(*) FROM \(StoreSchema.pendingChangesTable)")
        }

        let wrong = EncryptionAnswers(.password("wrong"), .password("Right"), .cancel)
        await #expect {
            _ = try await TestClient.encrypted(remote, name: "B", in: directory, answers: wrong)
        } throws: { ($0 as? FolderSyncError)?.code == .wrongPassword }
        #expect(wrong.asked == [.passwordNeeded, .wrongPassword, .wrongPassword])
        #expect(
            !FileManager.default.fileExists(atPath: directory.subdirectory("B").appendingPathComponent("keys").path))

        let cancelled = EncryptionAnswers(.cancel)
        await #expect {
            _ = try await TestClient.encrypted(remote, name: "B", in: directory, answers: cancelled)
        } throws: { ($0 as? FolderSyncError)?.code == .registrationCancelled }
        #expect(try NotesSchema.dump(local) == localBefore, "the local store changed")
        #expect(
            try await local.database.read {
                try Int.fetchOne($0, sql: "SELECT count(*) FROM \(StoreSchema.pendingChangesTable)")
            }
                == pendingBefore)
        #expect(
            try await remote.contentsOfDirectory(
                at: try RemoteLayout(applicationIdentifier: "com.example.notes").clientDevicesDirectory
            )
            .map(\.name) == ["client-A"], "B registered although its password was wrong")

        let retried = EncryptionAnswers(.password("wrong"), .password("right"))
        let b = try await TestClient.encrypted(remote, name: "B", in: directory, answers: retried)
        #expect(retried.asked == [.passwordNeeded, .wrongPassword])
        try await b.sync()
        #expect(try b.value("SELECT title FROM notes WHERE id = 'a1'") == "from A")
        #expect(try b.value("SELECT title FROM notes WHERE id = 'b0'") == "B offline")
    }

    @Test("The password key is saved 0600 in the key store, without the password, and the next launch asks nothing")
    func savedKey() async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        _ = try await TestClient.encrypted(
            remote, name: "A", in: directory, answers: EncryptionAnswers(.password("hunter2-password")))
        let keyFile = FileEncryptionKeyStore(directory: directory.subdirectory("A").appendingPathComponent("keys"))
            .fileURL(for: "com.example.notes")
        let attributes = try FileManager.default.attributesOfItem(atPath: keyFile.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let saved = try Data(contentsOf: keyFile)
        #expect(saved.count == 32 && saved.range(of: Data("hunter2-password".utf8)) == nil)

        let relaunch = EncryptionAnswers()
        let again = try await TestClient.encrypted(remote, name: "A", in: directory, answers: relaunch)
        #expect(relaunch.asked.isEmpty)
        #expect(again.app.shouldUseEncryption)
    }

    /// A and B of an encrypted document; A has published two change sets.
    private func twoChangeSets(_ directory: TemporaryDirectory) async throws -> (
        TestClient, FileManagerFileSystem, [RemotePath]
    ) {
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let a = try await TestClient.encrypted(
            remote, name: "A", in: directory, answers: EncryptionAnswers(.password("pw")))
        let b = try await TestClient.encrypted(
            remote, name: "B", in: directory, answers: EncryptionAnswers(.password("pw")))
        try b.execute("INSERT INTO notes(id, title) VALUES ('b1', 'B was here')")
        try await b.sync()
        for n in 1...2 {
            try a.execute(
                "INSERT INTO notes(id, title, body) VALUES (?, 'from A', ?)",
                ["a\(n)", String(repeating: "text ", count: 100 * n)])
            try await a.sync()
        }
        let folder = a.document.relativePathToThisDocumentSyncChangesThisClientDirectory
        let paths = try await remote.contentsOfDirectory(at: folder).map { folder.appending($0.name) }.sorted()
        try #require(paths.count == 2)
        return (b, remote, paths)
    }

    /// B's sync goes on without the tampered change set: a warning names it, and nothing of it (or after it) is
    /// applied.
    private func expectTampered(_ b: TestClient, path: RemotePath, kind: SyncWarning.Kind = .unreadableFile)
        async throws
    {
        let before = try NotesSchema.dump(b.store)
        let ledgerBefore = try b.store.appliedChangeSets()
        let report = try await b.sync()
        #expect(report.warnings.contains { $0.kind == kind && $0.path == path.description }, "\(report.warnings)")
        #expect(try NotesSchema.dump(b.store) == before, "the local store changed")
        #expect(try b.store.appliedChangeSets() == ledgerBefore, "the ledger changed")
    }

    @Test(
        "A flipped byte anywhere in an encrypted change set is skipped with a warning naming it; the local store is unchanged"
    )
    func flippedByte() async throws {
        let directory = TemporaryDirectory()
        let (b, remote, paths) = try await twoChangeSets(directory)
        let bytes = try await remote.read(paths[0])
        // Every byte but the format version's: magic, chunk size, salt, ciphertext, tags.
        for offset in [
            0, 7, 12, 13, 16, 47, SealedFileHeader.size, SealedFileHeader.size + 1, bytes.count / 2, bytes.count - 17,
            bytes.count - 1,
        ] {
            var damaged = bytes
            damaged[offset] ^= 0x01
            try await remote.write(damaged, to: paths[0])
            try await expectTampered(b, path: paths[0])
        }
        // A changed format version is read as a newer format: parked, naming the file, with nothing applied.
        var newer = bytes
        newer[9] ^= 0x01
        try await remote.write(newer, to: paths[0])
        try await expectTampered(b, path: paths[0], kind: .changeSetParked)
        try await remote.write(bytes.dropLast(), to: paths[0])
        try await expectTampered(b, path: paths[0])
        try await remote.write(bytes, to: paths[0])
        try await b.sync()
        #expect(try b.value("SELECT count(*) FROM notes") == "3")
    }

    @Test(
        "Two change sets swapped are skipped with a warning naming the file; a sealed marker copied over another client's is ignored, and the folder listed instead"
    )
    func swappedFiles() async throws {
        let directory = TemporaryDirectory()
        let (b, remote, paths) = try await twoChangeSets(directory)
        let first = try await remote.read(paths[0])
        let second = try await remote.read(paths[1])
        try await remote.write(second, to: paths[0])
        try await remote.write(first, to: paths[1])
        try await expectTampered(b, path: paths[0])

        try await remote.write(first, to: paths[0])
        try await remote.write(second, to: paths[1])
        let layout = try RemoteLayout(applicationIdentifier: "com.example.notes")
        let markerA = layout.recentSyncFile("DOC", client: "client-A")
        let markerB = layout.recentSyncFile("DOC", client: "client-B")
        try await remote.write(try await remote.read(markerB), to: markerA)
        let report = try await b.sync()
        #expect(
            report.warnings.contains { $0.kind == .unreadableFile && $0.path == markerA.description },
            "\(report.warnings)")
        #expect(report.changeSetsApplied == 2, "A's change sets, found by listing its folder, are intact")
    }

    @Test("A password change rewrites only the key file; others go on, and ask for the new password at relaunch")
    func passwordChange() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let remote = FileManagerFileSystem(rootURL: root)
        let a = try await TestClient.encrypted(
            remote, name: "A", in: directory, answers: EncryptionAnswers(.password("old")))
        let b = try await TestClient.encrypted(
            remote, name: "B", in: directory, answers: EncryptionAnswers(.password("old")))
        let c = try await TestClient.encrypted(
            remote, name: "C", in: directory, answers: EncryptionAnswers(.password("old")))
        try a.execute("INSERT INTO notes(id, title) VALUES ('a1', 'before the change')")
        try await converge(a, b, c)
        _ = try await a.document.uploadWholeStore()

        await #expect { try await a.app.changeEncryptionPassword(from: "not it", to: "new") } throws: {
            ($0 as? FolderSyncError)?.code == .wrongPassword
        }
        let before = try remoteFiles(root)
        try await a.app.changeEncryptionPassword(from: "old", to: "new")
        let after = try remoteFiles(root)
        #expect(Set(before.keys) == Set(after.keys), "files were added or removed")
        let changed = before.keys.filter { before[$0] != after[$0] }
        #expect(changed == ["com.example.notes/Encryption/EncryptionKey.plist"])

        // Running clients keep their data key and go on syncing.
        try b.execute("INSERT INTO notes(id, title) VALUES ('b1', 'after the change')")
        try await converge(a, b, c)
        #expect(try a.value("SELECT title FROM notes WHERE id = 'b1'") == "after the change")

        // At relaunch B's saved key no longer matches: it is asked, the old password is wrong, the new one opens.
        let relaunch = EncryptionAnswers(.password("old"), .password("new"))
        let b2 = try await TestClient.encrypted(remote, name: "B", in: directory, answers: relaunch)
        #expect(relaunch.asked == [.passwordChanged, .wrongPassword])
        try c.execute("INSERT INTO notes(id, title) VALUES ('c1', 'from C')")
        try await converge(a, b2, c)
        #expect(try NotesSchema.dump(b2.store) == NotesSchema.dump(a.store))
        #expect(try b2.value("SELECT title FROM notes WHERE id = 'c1'") == "from C")
    }

    /// Answers through the delegate, as an app without closures would.
    final class PasswordDelegate: ApplicationSyncManagerDelegate {
        let answers: EncryptionAnswers
        init(_ answers: EncryptionAnswers) { self.answers = answers }
        func applicationSyncManager(
            _ manager: ApplicationSyncManager, didPauseRegistrationFor request: EncryptionRequest
        ) async -> EncryptionAnswer {
            answers.answer(request)
        }
    }

    /// Keeps every log message with its metadata, at every level.
    struct CapturingLogHandler: LogHandler {
        let lines: Locked<[String]>
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            lines.withLock { $0.append("\(event.message) \(event.metadata ?? [:]) \(self.metadata)") }
        }
    }

    @Test("The delegate answers encryption questions; no password or key reaches the log, even at trace level")
    func delegateAndLogs() async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let lines = Locked<[String]>([])
        var environment = Fixture.quietEnvironment()
        environment.logger = Logger(label: "capture") { _ in CapturingLogHandler(lines: lines) }
        func register(_ name: String, _ answers: EncryptionAnswers) async throws -> ApplicationSyncManager {
            let delegate = PasswordDelegate(answers)
            let app = ApplicationSyncManager(remote: remote, environment: environment)
            app.delegate = delegate
            app.encryptionKeyStore = FileEncryptionKeyStore(directory: directory.subdirectory(name))
            try await app.register(
                .init(
                    applicationIdentifier: "com.example.notes", clientIdentifier: "client-\(name)",
                    clientDescription: name))
            return withExtendedLifetime(delegate) { app }
        }
        let first = EncryptionAnswers(.password("first-secret-pw"))
        let a = try await register("A", first)
        #expect(first.asked == [.newApplication] && a.shouldUseEncryption)
        let second = EncryptionAnswers(.password("wrong-secret-pw"), .password("first-secret-pw"))
        let b = try await register("B", second)
        #expect(second.asked == [.passwordNeeded, .wrongPassword] && b.shouldUseEncryption)
        try await a.changeEncryptionPassword(from: "first-secret-pw", to: "second-secret-pw")

        let logged = lines.current.joined(separator: "\n")
        #expect(logged.contains("Wrong password"), "the log was not captured: \(logged)")
        for secret in ["first-secret-pw", "wrong-secret-pw", "second-secret-pw"] {
            #expect(!logged.contains(secret))
        }
        let savedKey = try #require(
            try FileEncryptionKeyStore(directory: directory.subdirectory("A")).passwordKey(for: "com.example.notes"))
        #expect(
            !logged.contains(savedKey.base64EncodedString())
                && !logged.contains(savedKey.map { String(format: "%02x", $0) }.joined()))
    }

    @Test("Two clients creating an encrypted application at the same moment end with one key both can read, 10 times")
    func concurrentCreation() async throws {
        for round in 0..<10 {
            let directory = TemporaryDirectory()
            let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
            func register(_ name: String) async throws -> ApplicationSyncManager {
                let app = ApplicationSyncManager(remote: remote, environment: Fixture.quietEnvironment())
                app.encryptionHandler = { _ in .password("shared") }
                try await app.register(
                    .init(
                        applicationIdentifier: "com.example.notes", clientIdentifier: "client-\(name)",
                        clientDescription: name))
                return app
            }
            async let first = register("A")
            async let second = register("B")
            let (a, b) = try await (first, second)
            let layout = try RemoteLayout(applicationIdentifier: "com.example.notes")
            #expect(a.shouldUseEncryption && b.shouldUseEncryption, "round \(round)")
            let deviceA = try await b.remote.read(layout.deviceInfoFile("client-A"))
            let deviceB = try await a.remote.read(layout.deviceInfoFile("client-B"))
            #expect(
                try PropertyListFile.decode(DeviceInfo.self, from: deviceA, path: "A").clientIdentifier == "client-A")
            #expect(
                try PropertyListFile.decode(DeviceInfo.self, from: deviceB, path: "B").clientIdentifier == "client-B")
        }
    }

    @Test(
        "Without a handler a new application is not encrypted and an encrypted one is refused with registrationCancelled"
    )
    func unattended() async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        _ = try await TestClient.encrypted(
            remote, name: "A", in: directory, answers: EncryptionAnswers(.password("pw")))
        await #expect { _ = try await TestClient.make(remote, name: "B", in: directory) } throws: {
            ($0 as? FolderSyncError)?.code == .registrationCancelled
        }
        let plain = FileManagerFileSystem(rootURL: directory.subdirectory("plain"))
        let client = try await TestClient.make(plain, name: "C", in: directory)
        #expect(!client.app.shouldUseEncryption)
    }
}

@Suite("Sealed file format")
struct SealedFileTests {
    let dataKey = SymmetricKey(size: .bits256)
    let path = try! RemotePath("com.example.notes/Documents/DOC/WholeStore/client-A/WholeStore.ticdsync")

    @Test(
        "Sealing and opening round-trip in memory and streaming, either way, at chunk boundaries",
        arguments: [
            0, 1, SealedFileHeader.defaultChunkSize - 1, SealedFileHeader.defaultChunkSize,
            SealedFileHeader.defaultChunkSize + 1,
            3 * SealedFileHeader.defaultChunkSize + 17,
        ])
    func roundTrip(size: Int) throws {
        let directory = TemporaryDirectory()
        let plain = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        let source = directory.url.appendingPathComponent("plain")
        let sealedURL = directory.url.appendingPathComponent("sealed")
        let opened = directory.url.appendingPathComponent("opened")
        try plain.write(to: source)
        try SealedFile.seal(fileAt: source, to: sealedURL, dataKey: dataKey, path: path)
        let sealed = try Data(contentsOf: sealedURL)
        let chunks = max(1, (size + SealedFileHeader.defaultChunkSize - 1) / SealedFileHeader.defaultChunkSize)
        #expect(sealed.count == SealedFileHeader.size + size + chunks * SealedFileHeader.tagSize)
        #expect(try SealedFile.open(sealed, dataKey: dataKey, path: path) == plain)
        try SealedFile.seal(plain, dataKey: dataKey, path: path).write(to: sealedURL)
        try SealedFile.open(fileAt: sealedURL, to: opened, dataKey: dataKey, path: path)
        #expect(try Data(contentsOf: opened) == plain)
    }

    @Test("A 48 MiB file goes up and down through encryption in a few MiB of memory, and comes back identical")
    func streams() async throws {
        let directory = TemporaryDirectory()
        let file = directory.url.appendingPathComponent("big")
        try Data().write(to: file)
        let handle = try FileHandle(forWritingTo: file)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<48 {
            try handle.write(
                contentsOf: Data(
                    (0..<(1 << 20) / 8).flatMap { _ in withUnsafeBytes(of: generator.next()) { Array($0) } }))
        }
        try handle.close()
        // Measured in a process of its own: tests running in parallel here would blur it.
        let result = try await ChildProcess(
            "foldersync-test-worker",
            [
                "encrypted-transfer", "--remote", directory.subdirectory("remote").path,
                "--file", file.path,
            ]
        ).finish()
        #expect(result.status == 0, "\(result.errors)")
        let words = result.output.split(separator: " ").map {
            String($0).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        try #require(words.count == 4, "\(result.output)")
        let size = 48 << 20
        let chunks = size / SealedFileHeader.defaultChunkSize
        #expect(Int(words[1]) == SealedFileHeader.size + size + chunks * SealedFileHeader.tagSize)
        let growth = try #require(Int(words[3]))
        #expect(growth < 16 << 20, "peak resident memory grew by \(growth) bytes moving a \(size)-byte file")
        #expect(FileManager.default.contentsEqual(atPath: file.path, andPath: file.path + ".back"))
    }

    @Test("A file cut at a chunk boundary, extended by a chunk, opened at another path or with another key is tampered")
    func refusals() throws {
        let plain = Data(count: 2 * SealedFileHeader.defaultChunkSize)
        let sealed = try SealedFile.seal(plain, dataKey: dataKey, path: path)
        let oneChunk = SealedFileHeader.size + SealedFileHeader.defaultChunkSize + SealedFileHeader.tagSize
        let other = try RemotePath("com.example.notes/Documents/DOC/WholeStore/client-B/WholeStore.ticdsync")
        let attempts: [(Data, RemotePath, SymmetricKey)] = [
            (sealed.prefix(oneChunk), path, dataKey),
            (sealed + sealed.suffix(SealedFileHeader.defaultChunkSize + SealedFileHeader.tagSize), path, dataKey),
            (sealed, other, dataKey),
            (sealed, path, SymmetricKey(size: .bits256)),
            (Data("not sealed at all, just a plain file of some length".utf8), path, dataKey),
        ]
        for (bytes, at, key) in attempts {
            #expect { try SealedFile.open(bytes, dataKey: key, path: at) } throws: {
                ($0 as? FolderSyncError)?.code == .tamperedFile
            }
        }
    }

    @Test("Temporaries, staged whole stores and quarantined files are bound to where they are published")
    func binding() throws {
        let layout = try RemoteLayout(applicationIdentifier: "com.example.notes")
        let staged = layout.temporaryWholeStoreFile("DOC", client: "client-A")
        #expect(layout.publishedPath(of: staged) == layout.wholeStoreFile("DOC", client: "client-A"))
        let marker = layout.recentSyncFile("DOC", client: "client-A")
        #expect(layout.publishedPath(of: marker.parent.appending(TemporaryName.make(for: marker.name))) == marker)
        let quarantined = try RemotePath(
            "com.example.notes/Quarantine/20260102T030405Z/Documents/DOC/RecentSyncs/client-A.recentsync")
        #expect(layout.publishedPath(of: quarantined) == marker)
        #expect(
            !layout.isEncryptedWhenEnabled(layout.formatVersionFile)
                && !layout.isEncryptedWhenEnabled(layout.encryptionKeyFile))
        #expect(
            layout.isEncryptedWhenEnabled(layout.deviceInfoFile("client-A")) && layout.isEncryptedWhenEnabled(staged))
    }
}

@Suite("foldersync on an encrypted folder")
struct FoldersyncEncryptionTests {
    @Test(
        "foldersync reads an encrypted folder with --password-file or FOLDERSYNC_PASSWORD; without it or with a wrong one it stops"
    )
    func tool() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let remote = FileManagerFileSystem(rootURL: root)
        let a = try await TestClient.encrypted(
            remote, name: "A", in: directory, answers: EncryptionAnswers(.password("s3cret pass")))
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'exported secret')")
        try await a.sync()
        _ = try await a.document.uploadWholeStore()
        let passwordFile = directory.url.appendingPathComponent("password")
        try "s3cret pass\n".write(to: passwordFile, atomically: true, encoding: .utf8)

        let listed = try await FoldersyncTool.run([
            "documents", "list", "--remote", root.path, "--password-file", passwordFile.path,
        ])
        #expect(listed.status == 0 && listed.output.contains("Notes"), "\(listed.errors)")
        let doctor = try await FoldersyncTool.run(
            ["doctor", "--remote", root.path], environment: ["FOLDERSYNC_PASSWORD": "s3cret pass"])
        #expect(doctor.status == 0 && doctor.output.contains("Healthy"), "\(doctor.output)\(doctor.errors)")
        let output = directory.url.appendingPathComponent("out.sqlite").path
        let exported = try await FoldersyncTool.run([
            "export", "--remote", root.path, "--document", "DOC", "--output", output,
            "--password-file", passwordFile.path,
        ])
        #expect(exported.status == 0, "\(exported.errors)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: output)).range(of: Data("exported secret".utf8)) != nil)

        let sealedChangeSet = root.appendingPathComponent(
            a.document.relativePathToThisDocumentSyncChangesThisClientDirectory.description)
        let changeSetName = try #require(
            try FileManager.default.contentsOfDirectory(atPath: sealedChangeSet.path).first)
        let inspected = try await FoldersyncTool.run([
            "inspect", sealedChangeSet.appendingPathComponent(changeSetName).path,
        ])
        #expect(inspected.status == 2 && inspected.errors.contains("is encrypted"), "\(inspected.errors)")

        let missing = try await FoldersyncTool.run(["documents", "list", "--remote", root.path])
        #expect(missing.status == 2 && missing.errors.contains("is encrypted"), "\(missing.errors)")
        try "wrong pass\n".write(to: passwordFile, atomically: true, encoding: .utf8)
        let wrong = try await FoldersyncTool.run([
            "clients", "list", "--remote", root.path, "--password-file", passwordFile.path,
        ])
        #expect(wrong.status == 2 && wrong.errors.contains("wrongPassword"), "\(wrong.errors)")
        #expect(!wrong.errors.contains("wrong pass\n") && !wrong.output.contains("wrong pass"))
    }

    @Test("doctor reports a tampered file of an encrypted folder, naming it, and --repair quarantines it")
    func doctorTampered() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let remote = FileManagerFileSystem(rootURL: root)
        let a = try await TestClient.encrypted(
            remote, name: "A", in: directory, answers: EncryptionAnswers(.password("pw-doctor")))
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'x')")
        try await a.sync()
        let folder = a.document.relativePathToThisDocumentSyncChangesThisClientDirectory
        let path = folder.appending(try #require(try await remote.contentsOfDirectory(at: folder).first?.name))
        var bytes = try await remote.read(path)
        bytes[bytes.count / 2] ^= 0x80
        try await remote.write(bytes, to: path)
        let environment = ["FOLDERSYNC_PASSWORD": "pw-doctor"]
        let checked = try await FoldersyncTool.run(
            ["doctor", "--remote", root.path, "--repair"], environment: environment)
        #expect(
            checked.output.contains(path.description) && checked.output.contains("fails authentication"),
            "\(checked.output)\(checked.errors)")
        #expect(checked.output.contains("quarantined"), "\(checked.output)")
        #expect(!FileManager.default.fileExists(atPath: remote.url(for: path).path))
    }
}
