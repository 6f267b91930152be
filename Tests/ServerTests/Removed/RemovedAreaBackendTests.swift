import FolderSyncTesting
import FolderSyncWebDAV
import Foundation
import GRDB
import S3Backend
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// Issue 39 on every backend: a vacuum moves what it removes into the removed area in one request a file on WebDAV
/// (`MOVE`) and a server-side copy and a delete on S3, and a device that joins after the only whole store is gone
/// heals from there; encrypted, a file planted in the removed area gains nothing; the folder cannot shorten the grace.
@Suite("Removed area: backends, encryption, grace period")
struct RemovedAreaBackendTests {
    private static let notes = "SELECT group_concat(id) FROM (SELECT id FROM notes ORDER BY id)"

    /// Three rounds: A writes sets (2, 4, then 10), B applies them, A uploads a whole store, then a dry run and the
    /// vacuum, counted by `requests`. Then A's whole store goes (the wrong belief) and a new device joins: it must heal
    /// from the removed area. Returns the requests each moved file cost: the last two rounds' requests beyond their dry
    /// runs, their difference divided by the difference in files moved, so that what a vacuum costs once (the folder's
    /// clock, the removal's record and folders; the first round also creates `Removed/` and the day's folder) drops
    /// out.
    private func vacuumThenHeal(
        _ remote: any RemoteFileSystem, in directory: TemporaryDirectory,
        requests: () -> Int
    ) async throws -> Double {
        let a = try await TestClient.make(remote, name: "A", in: directory)
        let b = try await TestClient.make(remote, name: "B", in: directory)
        for client in [a, b] {
            client.document.policy.wholeStoreUploadAfterChangeSets = nil
            client.document.policy.vacuumsAfterWholeStoreUpload = false
            client.document.policy.acknowledgementDelay = 0
        }
        var rounds: [(extra: Int, moved: Int)] = []
        var written = 0
        for count in [2, 4, 10] {
            for _ in 0..<count {
                written += 1
                try a.execute("INSERT INTO notes(id, title) VALUES (?, 'note')", ["a\(written)"])
                try await a.sync()
            }
            try await b.sync()
            _ = try #require(try await a.document.uploadWholeStore())
            var before = requests()
            _ = try await a.document.vacuum(dryRun: true)
            let dryRun = requests() - before
            before = requests()
            let report = try await a.document.vacuum()
            let vacuum = requests() - before
            #expect(report.removedChangeSets.count == count && report.failures.isEmpty, "\(report)")
            let folder = try #require(report.removalFolder)
            let kept = folder.appending("SyncChanges").appending("client-A")
            #expect(
                try await remote.contentsOfDirectory(at: kept).filter { $0.kind == .file }.count == count, "in \(kept)")
            rounds.append((vacuum - dryRun, report.removed.count))
        }

        try await remote.remove(a.document.relativePathToThisDocumentWholeStoreThisClientDirectory)
        let newcomer = try await TestClient.make(remote, name: "C", in: directory)
        let joined = try await newcomer.sync()
        #expect(try newcomer.value("SELECT count(*) FROM notes") == "16")
        let warning = try #require(joined.warnings.first { $0.kind == .recoveredFromRemoved }, "\(joined.warnings)")
        #expect(warning.message.contains("a vacuum by client-A"), "\(warning.message)")
        print("vacuum rounds (requests beyond the dry run, files moved): \(rounds)")
        return Double(rounds[2].extra - rounds[1].extra) / Double(rounds[2].moved - rounds[1].moved)
    }

    @Test(
        "Over WebDAV a vacuum moves each file with one MOVE, and a new device heals from the removed area",
        arguments: WebDAVTestServers.names)
    func webDAV(_ server: String) async throws {
        let remote = try await WebDAVTestServers.fileSystem(server)
        let perFile = try await vacuumThenHeal(remote, in: TemporaryDirectory()) { remote.statistics.requests }
        print("vacuum on \(server): \(perFile) requests a moved file")
        #expect(perFile == 1, "one MOVE a file")
    }

    @Test("On the S3 example a vacuum moves each file with a server-side copy and a delete, and a new device heals")
    func s3() async throws {
        let remote = try S3TestServers.fileSystem()
        let perFile = try await vacuumThenHeal(remote, in: TemporaryDirectory()) { remote.statistics.requests }
        print("vacuum on moto: \(perFile) requests a moved file")
        // HEAD, COPY and DELETE; never the read and conditional write of a refusing move.
        #expect(perFile == 3, "a server-side copy and a delete a file")
    }

    @Test(
        "Encrypted: the removed area holds the sealed bytes, a new device heals from it, a planted file is refused as in its place"
    )
    func encrypted() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let remote = FileManagerFileSystem(rootURL: root)
        let a = try await TestClient.encrypted(
            remote, name: "A", in: directory, answers: EncryptionAnswers(.password("right")))
        a.document.policy.wholeStoreUploadAfterChangeSets = nil
        a.document.policy.vacuumsAfterWholeStoreUpload = false
        a.document.policy.carriesChangeSetsInMarkers = false  // readers read the sets' files, not copies in markers
        for id in ["a1", "a2"] {
            try a.execute("INSERT INTO notes(id, title) VALUES (?, 'secret')", [id])
            try await a.sync()
        }
        let sets = a.document.layout.syncChangesDirectory("DOC", client: "client-A")
        let published = try await remote.contentsOfDirectory(at: sets).filter { $0.kind == .file }.sorted {
            $0.name < $1.name
        }
        let sealed = try await remote.read(sets.appending(published[0].name))
        _ = try #require(try await a.document.uploadWholeStore())
        let report = try await a.document.vacuum()
        let folder = try #require(report.removalFolder)
        let kept = folder.appending("SyncChanges").appending("client-A").appending(published[0].name)
        #expect(try await remote.read(kept) == sealed, "the same sealed bytes")
        #expect(
            !String(decoding: try Data(contentsOf: root.appendingPathComponent(kept.description)), as: UTF8.self)
                .contains("secret"))
        try await remote.remove(a.document.relativePathToThisDocumentWholeStoreThisClientDirectory)

        // A set planted in the removed area (set 1's sealed bytes under set 2's name) fails its check as it would in
        // its place: the sync warns that set 2 cannot be used and applies nothing of it, in both cases alike.
        let second = folder.appending("SyncChanges").appending("client-A").appending(published[1].name)
        let honest = try await remote.read(second)
        try await remote.write(sealed, to: second)
        let planted = try await TestClient.encrypted(
            remote, name: "P", in: directory, answers: EncryptionAnswers(.password("right")))
        let fromRemoved = try await planted.sync()
        try await remote.write(honest, to: second)
        try await remote.write(sealed, to: sets.appending(published[1].name))
        let inPlace = try await TestClient.encrypted(
            remote, name: "Q", in: directory, answers: EncryptionAnswers(.password("right")))
        let fromPlace = try await inPlace.sync()
        for (client, report) in [(planted, fromRemoved), (inPlace, fromPlace)] {
            let refused = report.warnings.first { $0.kind == .unreadableFile }
            #expect(
                refused?.message.contains("change set 2 of client client-A") == true
                    && refused?.message.contains("fails authentication") == true, "\(report.warnings)")
            #expect(try client.value("SELECT count(*) FROM notes WHERE id = 'a2'") == "0")
        }
        try await remote.remove(sets.appending(published[1].name))

        let newcomer = try await TestClient.encrypted(
            remote, name: "C", in: directory, answers: EncryptionAnswers(.password("right")))
        let joined = try await newcomer.sync()
        #expect(try newcomer.value(Self.notes) == "a1,a2")
        #expect(joined.warnings.contains { $0.kind == .recoveredFromRemoved }, "\(joined.warnings)")
    }

    @Test("Nothing in the folder shortens the grace period: a record dated years back in a day folder of 1999 is kept")
    func graceFromTheFolderClockOnly() async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let a = try await TestClient.make(remote, name: "A", in: directory)
        a.document.policy.wholeStoreUploadAfterChangeSets = nil
        a.document.policy.vacuumsAfterWholeStoreUpload = false
        try a.execute("INSERT INTO notes(id, title) VALUES ('a1', 'note')")
        try await a.sync()
        _ = try #require(try await a.document.uploadWholeStore())
        let folder = try #require(try await a.document.vacuum().removalFolder)
        // A device (or the provider) rewrites the record with an old date and renames the day folder.
        let record = RemovalRecord(
            removedBy: "client-A", operation: .vacuum, removalDate: Date(timeIntervalSince1970: 0))
        try await remote.write(
            try PropertyListFile.encode(record), to: folder.appending(RemoteLayout.removalRecordFileName))
        let forged = folder.parent.parent.appending("19990101").appending(folder.name)
        try await remote.createDirectory(at: forged.parent)
        try await remote.move(from: folder, to: forged, replacing: false)

        let next = try await a.document.vacuum()
        #expect(next.purgedRemovals.isEmpty, "\(next.purgedRemovals)")
        #expect(try await remote.item(at: forged.appending(RemoteLayout.removalRecordFileName)) != nil)
        // And nobody can make it shorter than a day.
        await #expect(throws: FolderSyncError.self) {
            _ = try await DocumentMaintenance(
                context: DocumentOperationContext(
                    fileSystem: remote, layout: a.document.layout,
                    documentIdentifier: "DOC", clientIdentifier: "foldersync")
            )
            .vacuum(keepRemovedFor: 3600)
        }
    }
}
