import FolderSyncTesting
import Foundation
import GRDB
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

@Suite("Attachment vacuum and doctor")
struct AttachmentMaintenanceTests {
    @Test(
        "Vacuum removes an attachment only once no kept change set or whole store references it, and after the grace period"
    )
    func vacuum() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let remote = FileManagerFileSystem(rootURL: root)
        let a = WholeStoreTests.manual(try await TestClient.make(remote, name: "A", in: directory))
        let b = WholeStoreTests.manual(try await TestClient.make(remote, name: "B", in: directory))
        var references: [AttachmentReference] = []
        for (index, seed) in [10, 11].enumerated() {
            let file = directory.url.appendingPathComponent("file\(index)")
            try pseudoRandomBytes(5_000, seed: UInt64(seed)).write(to: file)
            references.append(try a.document.attachFile(at: file))
            try a.execute("INSERT INTO notes(id, body) VALUES (?, ?)", ["n\(index)", references[index].databaseValue])
        }
        let (kept, dropped) = (references[0], references[1])
        try await a.sync()
        try await b.sync()
        try a.execute("DELETE FROM notes WHERE id = 'n1'")
        try await converge(a, b)
        func vacuum(dryRun: Bool, age: TimeInterval) async throws -> [String] {
            let context = DocumentOperationContext(
                fileSystem: remote, layout: a.document.layout, documentIdentifier: "DOC",
                clientIdentifier: "operator", environment: Fixture.quietEnvironment())
            let report = try await VacuumOperation(
                context: context,
                options: VacuumOperation.Options(dryRun: dryRun, temporaryFileAge: age)
            ).run()
            return report.removed.filter { $0.reason == .unreferencedAttachment }.map(\.path.name)
        }
        #expect(try await vacuum(dryRun: true, age: 0) == [], "the first change set still references it")

        try #require(try await a.document.uploadWholeStore() != nil)
        #expect(
            try await vacuum(dryRun: true, age: 3600) == [],
            "an attachment younger than the grace period may be about to be referenced")
        #expect(try await vacuum(dryRun: true, age: 0) == [dropped.sha256])
        #expect(try remoteAttachments(root).count == 2, "a dry run removes nothing")
        #expect(try await vacuum(dryRun: false, age: 0) == [dropped.sha256])
        #expect(Array(try remoteAttachments(root).keys) == [kept.sha256])

        let c = try await TestClient.make(remote, name: "C", in: directory)
        let report = try await c.sync()
        #expect(report.goneAttachments.isEmpty)
        #expect(try NotesSchema.dump(a.store) == NotesSchema.dump(c.store))
        #expect(c.document.localFile(for: kept) != nil)
    }

    @Test("Vacuum keeps an unreferenced attachment that a client references again while the vacuum runs")
    func vacuumRace() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let remote = FileManagerFileSystem(rootURL: root)
        let a = WholeStoreTests.manual(try await TestClient.make(remote, name: "A", in: directory))
        let file = directory.url.appendingPathComponent("file")
        try pseudoRandomBytes(5_000, seed: 14).write(to: file)
        let reference = try a.document.attachFile(at: file)
        try a.execute("INSERT INTO notes(id, body) VALUES ('n1', ?)", [reference.databaseValue])
        try await a.sync()
        try a.execute("DELETE FROM notes WHERE id = 'n1'")
        try await a.sync()
        try #require(try await a.document.uploadWholeStore() != nil)

        /// Between its survey and its removals, client A attaches the same contents again (present, so not uploaded).
        final class RacingVacuum: VacuumOperation, @unchecked Sendable {
            var listings = 0
            var race: (@Sendable () async throws -> Void)?
            override func fetchDocumentTree() async throws -> [RemotePath: [RemoteItem]] {
                listings += 1
                if listings == 2 { try await race?() }
                return try await super.fetchDocumentTree()
            }
        }
        let vacuum = RacingVacuum(
            context: DocumentOperationContext(
                fileSystem: remote, layout: a.document.layout, documentIdentifier: "DOC",
                clientIdentifier: "operator", environment: Fixture.quietEnvironment()),
            options: VacuumOperation.Options(temporaryFileAge: 0))
        vacuum.race = {
            try a.execute(
                "INSERT INTO notes(id, body) VALUES ('n2', ?)", [try a.document.attachFile(at: file).databaseValue])
            let report = try await a.sync()
            #expect(report.attachmentsUploaded == 0)
        }
        let report = try await vacuum.run()
        #expect(vacuum.listings == 2)
        #expect(!report.removed.contains { $0.reason == .unreferencedAttachment })
        #expect(Array(try remoteAttachments(root).keys) == [reference.sha256])
    }

    @Test("doctor checks every attachment against the SHA-256 that names it, and quarantines a corrupt one")
    func doctor() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let remote = FileManagerFileSystem(rootURL: root)
        let a = try await TestClient.make(remote, name: "A", in: directory)
        let file = directory.url.appendingPathComponent("file")
        try pseudoRandomBytes(5_000, seed: 12).write(to: file)
        let reference = try a.document.attachFile(at: file)
        try a.execute("INSERT INTO notes(id, body) VALUES ('n1', ?)", [reference.databaseValue])
        try await a.sync()
        let doctor = try RemoteTreeDoctor(fileSystem: remote, applicationIdentifier: "com.example.notes")
        #expect(try await doctor.examine().findings.filter(\.isProblem).isEmpty)

        let folder = root.appendingPathComponent("com.example.notes/Documents/DOC/Attachments")
        var bytes = try Data(contentsOf: folder.appendingPathComponent(reference.sha256))
        bytes[100] ^= 0x40
        try bytes.write(to: folder.appendingPathComponent(reference.sha256))
        try Data("not named by a hash".utf8).write(to: folder.appendingPathComponent("photo.jpg"))
        let findings = try await doctor.examine().findings.filter { $0.check == .corruptAttachment }
        #expect(
            findings.map { URL(fileURLWithPath: $0.path).lastPathComponent }.sorted()
                == ["photo.jpg", reference.sha256].sorted())
        #expect(findings.allSatisfy { $0.repair == .quarantine && $0.severity == .error })
        #expect(findings.contains { $0.message.contains("SHA-256") })
    }
}
