import FolderSyncTesting
import Foundation
import GRDB
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// Defect found from outside (issue 19, item 1): vacuum removed change sets covered only by a damaged whole
/// store, so a new device got nothing; `doctor` said healthy. A store now counts as covering only once read whole
/// and matched against its manifest, `doctor` reads every one, and a damaged store is replaced.
@Suite("Damaged whole stores")
struct DamagedWholeStoreTests {
    static let damages: [String: @Sendable (Data) -> Data] = [
        "4 bytes overwritten in the middle": { data in
            var damaged = data
            for offset in (data.count / 2)..<(data.count / 2 + 4) { damaged[offset] ^= 0x5A }
            return damaged
        },
        "truncated": { $0.prefix($0.count / 3) },
        "empty": { _ in Data() },
        "zero-filled": { Data(count: $0.count) },
    ]

    @Test(
        "A damaged whole store covers nothing: vacuum keeps the change sets, doctor reports it, a new device gets every note, and its uploader replaces it",
        arguments: damages.keys.sorted())
    func damagedStore(_ damage: String) async throws {
        let directory = TemporaryDirectory()
        let clock = LivenessTests.TestClock()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let laptop = try await TestClient.make(remote, name: "laptop", in: directory, environment: clock.environment)
        let tablet = try await TestClient.make(remote, name: "tablet", in: directory, environment: clock.environment)
        try await tablet.sync()
        for index in 1...55 {
            try laptop.execute("INSERT INTO notes(id, title) VALUES (?, 'note')", [String(format: "n%02d", index)])
            try await laptop.sync()
        }
        clock.advance(2 * 86_400)
        try await laptop.sync()
        // Damaged after the laptop last looked at it (a sync does once per launch and with the heartbeat).
        let storePath = laptop.document.relativePathToThisDocumentWholeStoreThisClientDirectoryWholeStoreFile
        let intact = try await remote.read(storePath)
        try await remote.write(Self.damages[damage]!(intact), to: storePath)
        // The tablet fell silent two days ago, as the folder's own dates show it.
        try await backdateFiles(of: "client-tablet", in: remote, to: Date().addingTimeInterval(-2 * 86_400))
        let report = try await laptop.document.vacuum(expireClientsAfter: VacuumOperation.minimumClientExpiry)
        #expect(report.expiredClients == ["client-tablet"])
        #expect(
            report.removedChangeSets.isEmpty,
            "removed \(report.removedChangeSets.count) change sets covered only by a damaged store")
        #expect(report.wholeStoreCheck.damaged.map(\.path) == [storePath], "\(report.wholeStoreCheck)")

        let doctor = try RemoteTreeDoctor(fileSystem: remote, applicationIdentifier: Fixture.application)
        let findings = try await doctor.examine().findings
        #expect(
            findings.contains {
                $0.check == .corruptWholeStore && $0.severity == .error && $0.path == storePath.description
            }, "\(findings)")

        let newDevice = try await TestClient.make(remote, name: "new", in: directory, environment: clock.environment)
        try await newDevice.sync()
        #expect(try newDevice.value("SELECT count(*) FROM notes") == "55")

        // The laptop owes a store: its next sync uploads one, and the vacuum after it removes what it covers.
        let healing = try await laptop.sync()
        #expect(healing.uploadedWholeStore != nil)
        let healed = try await laptop.document.vacuum()
        #expect(healed.wholeStoreCheck.damaged.isEmpty)
        #expect(try await doctor.examine().findings.allSatisfy { $0.check != .corruptWholeStore })
        let late = try await TestClient.make(remote, name: "late", in: directory, environment: clock.environment)
        try await late.sync()
        #expect(try late.value("SELECT count(*) FROM notes") == "55")
    }

    @Test(
        "A whole store damaged, or removed, after a vacuum left it the only copy of its sets: its uploader's next launch notices and uploads a new one, and a new device gets every note",
        arguments: ["damaged", "removed (quarantined by an operator)"])
    func damagedAfterVacuum(_ what: String) async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let laptop = try await TestClient.launch(remote, name: "laptop", in: directory)
        for index in 1...55 {
            try laptop.execute("INSERT INTO notes(id, title) VALUES (?, 'note')", [String(format: "n%02d", index)])
            try await laptop.sync()
        }
        // The 50th set brought a whole store, and the vacuum after it removed the sets the store holds.
        let sets = try await remote.contentsOfDirectory(
            at: laptop.document.layout.syncChangesDirectory("DOC", client: "client-laptop"))
        #expect(sets.count == 5)
        let storePath = laptop.document.relativePathToThisDocumentWholeStoreThisClientDirectoryWholeStoreFile
        if what == "damaged" {
            try await remote.write(
                Self.damages["4 bytes overwritten in the middle"]!(try await remote.read(storePath)), to: storePath)
        } else {
            try await remote.remove(storePath.parent)
        }

        let relaunched = try await TestClient.launch(remote, name: "laptop", in: directory)
        let report = try await relaunched.sync()
        #expect(
            report.warnings.contains { $0.kind == .wholeStoreUnusable && $0.path == storePath.description },
            "\(report.warnings)")
        #expect(report.uploadedWholeStore != nil)
        let again = try await relaunched.sync()
        #expect(again.uploadedWholeStore == nil && again.warnings.isEmpty, "the new store was taken for a damaged one")
        let newDevice = try await TestClient.launch(remote, name: "new", in: directory)
        try await newDevice.sync()
        #expect(try newDevice.value("SELECT count(*) FROM notes") == "55")
    }

    @Test(
        "A store verified by an earlier vacuum is not read again until it changes; the report says what verifying cost")
    func verificationIsRemembered() async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let a = try await TestClient.make(remote, name: "A", in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'one')")
        try await a.sync()
        let manifest = try #require(try await a.document.uploadWholeStore())
        let first = try await a.document.vacuum()
        #expect(first.wholeStoreCheck.verified == 1 && first.wholeStoreCheck.bytesRead == manifest.wholeStoreByteCount)
        let second = try await a.document.vacuum()
        #expect(
            second.wholeStoreCheck.verified == 0 && second.wholeStoreCheck.verifiedEarlier == 1
                && second.wholeStoreCheck.bytesRead == 0)
        // The file changes under the same name (same size): it is read again, and found damaged.
        let path = a.document.relativePathToThisDocumentWholeStoreThisClientDirectoryWholeStoreFile
        var bytes = try await remote.read(path)
        bytes[bytes.count / 2] ^= 0xFF
        try await remote.write(bytes, to: path)
        let third = try await a.document.vacuum()
        #expect(third.wholeStoreCheck.verified == 0 && third.wholeStoreCheck.damaged.count == 1)
    }

    @Test(
        "A manifest that claims more than its store contains is not believed: the store is skipped at install and covers nothing for vacuum"
    )
    func lyingManifest() async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let a = try await TestClient.make(remote, name: "A", in: directory)
        let b = try await TestClient.make(remote, name: "B", in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('a1', 'one')")
        try await a.sync()
        try await b.sync()
        let manifestPath = a.document.relativePathToThisDocumentWholeStoreThisClientDirectoryAppliedSyncChangeSetsFile
        _ = try await a.document.uploadWholeStore()
        var manifest = try PropertyListFile.decode(
            WholeStoreManifest.self, from: try await remote.read(manifestPath), path: "m")
        manifest.covers["client-B"] = 1_000_000
        try await remote.write(try PropertyListFile.encode(manifest), to: manifestPath)
        let report = try await a.document.vacuum()
        #expect(report.wholeStoreCheck.damaged.count == 1, "\(report.wholeStoreCheck)")
        let z = try await TestClient.make(remote, name: "Z", in: directory)
        let joined = try await z.sync()
        #expect(joined.installedWholeStore == nil)
        #expect(joined.warnings.contains { $0.kind == .wholeStoreUnusable })
        try b.execute("INSERT INTO notes(id, title) VALUES ('b1', 'B still counts')")
        try await b.sync()
        try await z.sync()
        #expect(try z.value("SELECT group_concat(id) FROM (SELECT id FROM notes ORDER BY id)") == "a1,b1")
    }
}
