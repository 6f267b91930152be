import FolderSyncTesting
import Foundation
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

@Suite("Remote layout")
struct RemoteLayoutTests {
    static let goldenDirectory = repositoryRoot.appendingPathComponent(
        "RemoteLayouts/v2/golden/two-clients-one-document")

    /// Set `FOLDERSYNC_RECORD_GOLDEN=1` to rewrite the golden tree after a deliberate format change.
    static var recording: Bool { ProcessInfo.processInfo.environment["FOLDERSYNC_RECORD_GOLDEN"] == "1" }

    @Test("Two clients registering one document produce exactly the golden tree, byte for byte")
    func goldenTree() async throws {
        let temporary = TemporaryDirectory()
        let root = temporary.subdirectory("remote")
        let remote = FileManagerFileSystem(rootURL: root)
        // One environment: the same clock and identifier sequence as when the golden tree was recorded.
        let environment = Fixture.environment()
        try await Fixture.register(
            remote, client: Fixture.clientA, helper: temporary.subdirectory("A"), environment: environment)
        try await Fixture.register(
            remote, client: Fixture.clientB, helper: temporary.subdirectory("B"), environment: environment)

        let listing = treeListing(of: root)
        let treeFile = Self.goldenDirectory.appendingPathComponent("TREE.txt")
        let filesDirectory = Self.goldenDirectory.appendingPathComponent("files")
        if Self.recording {
            try? FileManager.default.removeItem(at: Self.goldenDirectory)
            try FileManager.default.createDirectory(at: filesDirectory, withIntermediateDirectories: true)
            try (listing.joined(separator: "\n") + "\n").write(to: treeFile, atomically: true, encoding: .utf8)
            for path in listing where !path.hasSuffix("/") {
                let target = filesDirectory.appendingPathComponent(path)
                try FileManager.default.createDirectory(
                    at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
                try FileManager.default.copyItem(at: root.appendingPathComponent(path), to: target)
            }
        }
        let golden = try String(contentsOf: treeFile, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(listing == golden)
        for path in listing where !path.hasSuffix("/") {
            let actual = try Data(contentsOf: root.appendingPathComponent(path))
            let expected = try Data(contentsOf: filesDirectory.appendingPathComponent(path))
            #expect(actual == expected, "\(path) differs from the golden file")
        }
    }

    @Test("Every path of the golden tree matches an entry of the catalog, and every required entry appears")
    func goldenTreeMatchesCatalog() throws {
        let golden = try String(contentsOf: Self.goldenDirectory.appendingPathComponent("TREE.txt"), encoding: .utf8)
            .split(separator: "\n").map(String.init)
        var used = Set<String>()
        for line in golden {
            let kind: RemoteLayoutEntry.Kind = line.hasSuffix("/") ? .directory : .file
            let path = try RemotePath(line)
            let entry = try #require(RemoteLayout.entry(matching: path, kind: kind), "no catalog entry for \(line)")
            used.insert(entry.pattern)
        }
        let required = RemoteLayout.catalog.filter { !$0.optional }.map(\.pattern)
        #expect(
            Set(required).subtracting(used).isEmpty,
            "missing from a registered tree: \(Set(required).subtracting(used))")
    }

    @Test("RemoteLayouts/v2/layout.json is the catalog")
    func layoutJSON() throws {
        let url = repositoryRoot.appendingPathComponent("RemoteLayouts/v2/layout.json")
        if Self.recording {
            try RemoteLayout.catalogJSON().write(to: url)
        }
        let document = try JSONDecoder().decode(RemoteLayoutDocument.self, from: Data(contentsOf: url))
        #expect(document.formatVersion == RemoteLayout.formatVersion)
        #expect(document.temporaryFilePrefix == TemporaryName.prefix)
        #expect(document.entries == RemoteLayout.catalog)
    }

    @Test("Paths are classified by the catalog; temporaries and desktop-agent copies are unknown")
    func classification() throws {
        let layout = try RemoteLayout(applicationIdentifier: "app")
        let name = RemoteLayout.changeSetFileName(
            sequence: 42, changeSetIdentifier: "0A1B2C3D-0000-4000-8000-000000000001")
        #expect(name == "000000000042-0A1B2C3D-0000-4000-8000-000000000001.syncchg")
        let changeSet = layout.syncChangesDirectory("doc", client: "c").appending(name)
        #expect(RemoteLayout.entry(matching: changeSet, kind: .file)?.format == "change-set")
        #expect(RemoteLayout.parseChangeSetFileName(name)?.sequence == 42)
        #expect(
            RemoteLayout.parseChangeSetFileName(name)?.changeSetIdentifier == "0A1B2C3D-0000-4000-8000-000000000001")
        for notAChangeSet in [
            "000000000042-0A1B2C3D (1).syncchg", "000000000000-0A1B.syncchg", "000000000042-.syncchg",
            "00000000004２-0A1B.syncchg", "000000000042-0A1B.syncchg.part", "000000000042_0A1B.syncchg",
            "000000000042-ＡＢ.syncchg", "000000000042-0A1B.syncchG", TemporaryName.make(for: name),
        ] {
            #expect(RemoteLayout.parseChangeSetFileName(notAChangeSet) == nil, "\(notAChangeSet) should not parse")
            #expect(
                RemoteLayout.changeSetSequence(ofFileName: notAChangeSet) == nil, "\(notAChangeSet) has no sequence")
        }
        #expect(RemoteLayout.changeSetSequence(ofFileName: name) == 42)
        #expect(RemoteLayout.changeSetSequence(ofFileName: name, after: 41) == 42)
        #expect(RemoteLayout.changeSetSequence(ofFileName: name, after: 42) == nil)
        #expect(RemoteLayout.changeSetSequence(ofFileName: "000000000042-0A1B (1).syncchg", after: 41) == nil)
        for stray in [
            "000000000042-0A1B2C3D-0000-4000-8000-000000000001 (1).syncchg", "42-abc.syncchg",
            TemporaryName.make(for: name), "notes.txt", ".DS_Store",
        ] {
            let path = layout.syncChangesDirectory("doc", client: "c").appending(stray)
            #expect(RemoteLayout.entry(matching: path, kind: .file) == nil, "\(stray) should be unknown")
        }
        #expect(RemoteLayout.entry(matching: layout.deviceInfoFile("c"), kind: .file)?.perClient == true)
        #expect(
            RemoteLayout.entry(matching: layout.recentSyncFile("doc", client: "c"), kind: .file)?.format
                == "recent-sync")
    }

    @Test("The document sync manager exposes every relativePathTo… path")
    func relativePaths() async throws {
        let (app, configuration) = Fixture.application(InMemoryFileSystem(), client: "C")
        try app.configure(configuration)
        let manager = try DocumentSyncManager(
            applicationSyncManager: app,
            configuration: Fixture.documentConfiguration(helper: URL(fileURLWithPath: "/tmp/h"), document: "D"))
        let appFolder = "com.example.notes"
        let expected: [(RemotePath, String)] = [
            (manager.relativePathToClientDevicesDirectory, "\(appFolder)/ClientDevices"),
            (manager.relativePathToInformationDirectory, "\(appFolder)/Information"),
            (manager.relativePathToInformationDeletedDocumentsDirectory, "\(appFolder)/Information/DeletedDocuments"),
            (
                manager.relativePathToDeletedDocumentsThisDocumentIdentifierPlistFile,
                "\(appFolder)/Information/DeletedDocuments/D.plist"
            ),
            (manager.relativePathToDocumentsDirectory, "\(appFolder)/Documents"),
            (manager.relativePathToThisDocumentDirectory, "\(appFolder)/Documents/D"),
            (manager.relativePathToThisDocumentInfoPlistFile, "\(appFolder)/Documents/D/documentInfo.plist"),
            (manager.relativePathToThisDocumentIntegrityKeyDirectory, "\(appFolder)/Documents/D/IntegrityKey"),
            (manager.relativePathToThisDocumentDeletedClientsDirectory, "\(appFolder)/Documents/D/DeletedClients"),
            (
                manager.relativePathToThisDocumentDeletedClientsThisClientPlistFile,
                "\(appFolder)/Documents/D/DeletedClients/C.plist"
            ),
            (manager.relativePathToThisDocumentSyncChangesDirectory, "\(appFolder)/Documents/D/SyncChanges"),
            (
                manager.relativePathToThisDocumentSyncChangesThisClientDirectory,
                "\(appFolder)/Documents/D/SyncChanges/C"
            ),
            (manager.relativePathToThisDocumentSyncCommandsDirectory, "\(appFolder)/Documents/D/SyncCommands"),
            (
                manager.relativePathToThisDocumentSyncCommandsThisClientDirectory,
                "\(appFolder)/Documents/D/SyncCommands/C"
            ),
            (manager.relativePathToThisDocumentWholeStoreDirectory, "\(appFolder)/Documents/D/WholeStore"),
            (manager.relativePathToThisDocumentWholeStoreThisClientDirectory, "\(appFolder)/Documents/D/WholeStore/C"),
            (
                manager.relativePathToThisDocumentWholeStoreThisClientDirectoryWholeStoreFile,
                "\(appFolder)/Documents/D/WholeStore/C/WholeStore.ticdsync"
            ),
            (
                manager.relativePathToThisDocumentWholeStoreThisClientDirectoryAppliedSyncChangeSetsFile,
                "\(appFolder)/Documents/D/WholeStore/C/AppliedSyncChangeSets.ticdsync"
            ),
            (manager.relativePathToThisDocumentTemporaryFilesDirectory, "\(appFolder)/Documents/D/TemporaryFiles"),
            (
                manager.relativePathToThisDocumentTemporaryWholeStoreDirectory,
                "\(appFolder)/Documents/D/TemporaryFiles/WholeStore"
            ),
            (
                manager.relativePathToThisDocumentTemporaryWholeStoreThisClientDirectory,
                "\(appFolder)/Documents/D/TemporaryFiles/WholeStore/C"
            ),
            (
                manager.relativePathToThisDocumentTemporaryWholeStoreThisClientDirectoryWholeStoreFile,
                "\(appFolder)/Documents/D/TemporaryFiles/WholeStore/C/WholeStore.ticdsync"
            ),
            (
                manager.relativePathToThisDocumentTemporaryWholeStoreThisClientDirectoryAppliedSyncChangeSetsFile,
                "\(appFolder)/Documents/D/TemporaryFiles/WholeStore/C/AppliedSyncChangeSets.ticdsync"
            ),
            (manager.relativePathToThisDocumentRecentSyncsDirectory, "\(appFolder)/Documents/D/RecentSyncs"),
            (
                manager.relativePathToThisDocumentRecentSyncsDirectoryThisClientFile,
                "\(appFolder)/Documents/D/RecentSyncs/C.recentsync"
            ),
        ]
        for (path, string) in expected { #expect(path.description == string) }
        #expect(manager.helperFileDirectory.path == "/tmp/h")
        #expect(manager.localLayout.registrationFile.path == "/tmp/h/Registration.plist")
        #expect(manager.localLayout.stagedSyncChangesDirectory.path == "/tmp/h/StagedSyncChanges")
    }

    @Test("Remote paths refuse components that escape the tree")
    func remotePathSafety() throws {
        for bad in ["../x", "a/../b", "./a", "a/\0"] {
            #expect(throws: FolderSyncError.self) { try RemotePath(bad) }
        }
        #expect(try RemotePath("/a//b/") == RemotePath.root.appending("a").appending("b"))
    }
}
