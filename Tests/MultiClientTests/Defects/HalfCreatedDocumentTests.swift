import Foundation
import GRDB
import TestProcesses
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// Issue 38, item 6: a document whose creation was interrupted between `documentInfo.plist` and `IntegrityKey/<key>`
/// was dead for every device for good (every sync `integrityKeyMismatch` and one more backup, `rejoin` the same,
/// `doctor --repair` no help). The creator is killed by `strace` at its renames and links in the shared folder, as
/// a crash would stop it, through the built `notes` and `foldersync`.
@Suite("Half-created documents", .serialized)
struct HalfCreatedDocumentTests {
    static let application = "com.example.notes"
    static let creatorID = "C0000000-0000-4000-8000-00000000000C"

    /// Two notes devices on one folder: `creator`, whose client identifier is ``creatorID``, and `joiner`.
    struct Scene {
        let directory: TemporaryDirectory
        let shared: URL
        var creator: URL { directory.url.appendingPathComponent("creator.sqlite") }
        var joiner: URL { directory.url.appendingPathComponent("joiner.sqlite") }
        var document: URL { shared.appendingPathComponent("\(application)/Documents/notes") }

        init(_ name: String = #function) throws {
            directory = TemporaryDirectory(name)
            shared = directory.subdirectory("shared")
        }

        func notes(_ database: URL, _ arguments: [String], under strace: [String] = []) throws -> Subprocess.Result {
            let notes = buildProductsDirectory.appendingPathComponent("notes").path
            let command = ["--db", database.path, "--remote", shared.path] + arguments
            return strace.isEmpty
                ? try Subprocess.run(notes, command) : try Subprocess.run("/usr/bin/strace", strace + [notes] + command)
        }

        /// The creator's first note, and its client identifier set to ``creatorID`` (so its folders can be named
        /// first).
        func prepareCreator() throws {
            try prepare(creator, note: "written by the creator", client: creatorID)
        }

        /// A first note in `database`, and its client identifier set to `client`.
        func prepare(_ database: URL, note: String, client: String) throws {
            #expect(try notes(database, ["add", note]).status == 0)
            try DatabaseQueue(path: database.path).write { db in
                try db.execute(
                    sql: "INSERT OR REPLACE INTO settings(key, value) VALUES ('client', ?)", arguments: [client])
            }
        }

        /// A first sync (of the creator, by default), killed by SIGKILL at the `count`-th call of `syscall` whose
        /// folder is one of `folders` (relative to the shared folder). Returns whether it was killed.
        func killFirstSync(of database: URL? = nil, at syscall: String, count: Int, in folders: [String]) throws -> Bool
        {
            let traced = folders.flatMap { ["-P", shared.appendingPathComponent($0).path] }
            let result = try notes(
                database ?? creator, ["sync"],
                under: ["-f", "-qq", "-o", "/dev/null"] + traced
                    + ["-e", "trace=\(syscall)", "-e", "inject=\(syscall):signal=SIGKILL:when=\(count)"])
            return result.status != 0
        }

        /// After a creation stopped anywhere: the joiner and the creator each sync (twice, in turn), every sync
        /// succeeds, both hold both notes, nothing was backed up, and `doctor` finds the folder healthy.
        func expectEveryDeviceUsesIt(_ label: String) throws {
            #expect(try notes(joiner, ["add", "written by the joiner"]).status == 0, "\(label)")
            for database in [joiner, creator, joiner, creator] {
                let sync = try notes(database, ["sync"])
                #expect(sync.status == 0, "\(label): \(database.lastPathComponent): \(sync.errors)")
            }
            let lists = try [creator, joiner].map { try notes($0, ["list"]).output }
            #expect(
                lists[0] == lists[1] && lists[0].contains("written by the creator")
                    && lists[0].contains("written by the joiner"),
                "\(label): \(lists)")
            for database in [creator, joiner] {
                let backups = URL(fileURLWithPath: database.path + ".foldersync/Backups")
                #expect(
                    !FileManager.default.fileExists(atPath: backups.path),
                    "\(label): \(database.lastPathComponent) made a backup")
            }
            let doctor = try Subprocess.run(
                buildProductsDirectory.appendingPathComponent("foldersync").path,
                ["doctor", "--remote", shared.path], standardError: .sameAsOutput)
            #expect(doctor.status == 0, "\(label): \(doctor.output)")
        }
    }

    @Test(
        "The issue's reproduction: the creator killed at its first rename in IntegrityKey/; every device syncs, nothing backed up"
    )
    func killedBeforeItsIntegrityKey() throws {
        let scene = try Scene()
        try scene.prepareCreator()
        #expect(
            try scene.killFirstSync(at: "renameat", count: 1, in: ["\(Self.application)/Documents/notes/IntegrityKey"]))
        #expect(
            FileManager.default.fileExists(atPath: scene.document.appendingPathComponent("documentInfo.plist").path))
        #expect(try Self.keys(in: scene).isEmpty)
        try scene.expectEveryDeviceUsesIt("killed before IntegrityKey")
        #expect(try Self.keys(in: scene).count == 1)
    }

    /// A local folder has `RENAME_NOREPLACE`, so publishing never falls back to `linkat` here.
    @Test(
        "The creator killed at each rename and publish of its first sync (tree, device, document, key, change set, marker): every device syncs",
        arguments: ["renameat", "renameat2"])
    func killedAtEveryStep(_ syscall: String) throws {
        var kills = 0
        for count in 1... {
            try #require(count < 100, "the first sync made more than 100 calls of \(syscall)")
            let scene = try Scene("killedAtEveryStep\(syscall)\(count)")
            try scene.prepareCreator()
            let app = Self.application
            let document = "\(app)/Documents/notes"
            let folders = [
                app, "\(app)/ClientDevices/\(Self.creatorID)", document, "\(document)/IntegrityKey",
                "\(document)/SyncChanges/\(Self.creatorID)", "\(document)/RecentSyncs",
            ]
            let killed = try scene.killFirstSync(at: syscall, count: count, in: folders)
            try scene.expectEveryDeviceUsesIt(
                "\(syscall) #\(count)\(killed ? "" : " (not killed: the sync ran to its end)")")
            guard killed else { break }
            kills += 1
        }
        // The clear tree and a document take two atomic publishes (renameat2) and four atomic writes (renameat) before
        // the first change set.
        #expect(kills >= ["renameat": 4, "renameat2": 2][syscall]!, "\(syscall): \(kills) kills")
        print("\(syscall): the creator's first sync killed at each of its \(kills) calls")
    }

    @Test(
        "A joiner killed in its first registration, once it found the tree, never makes one in an empty mount point later"
    )
    func interruptedJoinerNeverFillsAnEmptyMountPoint() throws {
        let scene = try Scene()
        try scene.prepareCreator()
        #expect(try scene.notes(scene.creator, ["sync"]).status == 0)
        let joinerID = "J0000000-0000-4000-8000-00000000000J"
        try scene.prepare(scene.joiner, note: "written by the joiner", client: joinerID)
        // Killed writing its device info: it read FormatVersion.plist, and registered nothing yet.
        #expect(
            try scene.killFirstSync(
                of: scene.joiner, at: "renameat", count: 1, in: ["\(Self.application)/ClientDevices/\(joinerID)"]))
        let away = scene.directory.url.appendingPathComponent("away")
        try FileManager.default.moveItem(at: scene.shared, to: away)
        // the share unmounted
        try FileManager.default.createDirectory(at: scene.shared, withIntermediateDirectories: false)
        let unmounted = try scene.notes(scene.joiner, ["sync"])
        #expect(unmounted.status == 1 && unmounted.errors.contains("remoteUnavailable"), "\(unmounted.errors)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: scene.shared.path).isEmpty,
            "a tree was made in the empty mount point")
        try FileManager.default.removeItem(at: scene.shared)
        try FileManager.default.moveItem(at: away, to: scene.shared)
        try scene.expectEveryDeviceUsesIt("the joiner back on the mounted share")
    }

    @Test("doctor --repair completes a half-created document that no client has synced since")
    func doctorRepairs() throws {
        let scene = try Scene()
        try scene.prepareCreator()
        #expect(
            try scene.killFirstSync(at: "renameat", count: 1, in: ["\(Self.application)/Documents/notes/IntegrityKey"]))
        let foldersync = buildProductsDirectory.appendingPathComponent("foldersync").path
        let before = try Subprocess.run(foldersync, ["doctor", "--remote", scene.shared.path, "--json"])
        #expect(before.output.contains("\"repair\" : \"writeIntegrityKey\""), "\(before.output)")
        let repaired = try Subprocess.run(
            foldersync, ["doctor", "--remote", scene.shared.path, "--repair"], standardError: .sameAsOutput)
        #expect(repaired.status == 0 && repaired.output.contains("written"), "\(repaired.output)")
        #expect(try Self.keys(in: scene).count == 1)
        try scene.expectEveryDeviceUsesIt("repaired by doctor")
    }

    @Test("A documentInfo.plist naming a key that is no file name is refused as corrupt; nothing is written")
    func hostileKeyRefused() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("shared")
        let remote = FileManagerFileSystem(rootURL: root)
        _ = try await TestClient.launch(remote, name: "A", in: directory)
        let layout = try RemoteLayout(applicationIdentifier: Self.application)
        let info = DocumentInfo(
            documentIdentifier: "DOC", documentDescription: "Notes", userInfo: [:], integrityKey: "../../escape",
            createdByClient: "client-A", creationDate: Date(timeIntervalSince1970: 0))
        try await remote.write(try PropertyListFile.encode(info), to: layout.documentInfoFile("DOC"))
        try await remote.remove(layout.integrityKeyDirectory("DOC"))
        let before = treeListing(of: root)
        await #expect { _ = try await TestClient.launch(remote, name: "B", in: directory) } throws: {
            ($0 as? FolderSyncError)?.code == .corruptFile
                && ($0 as? FolderSyncError)?.message.contains("integrity key") == true
        }
        #expect(treeListing(of: root).filter { !before.contains($0) }.allSatisfy { $0.contains("client-B") })
        #expect(!treeListing(of: root).contains { $0.contains("escape") })
    }

    static func keys(in scene: Scene) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: scene.document.appendingPathComponent("IntegrityKey").path)
            .filter { !$0.hasPrefix(".") }
    }
}
