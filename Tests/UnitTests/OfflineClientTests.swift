import FolderSyncTesting
import Foundation
import GRDB
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

@Suite("A client away for a long time")
struct OfflineClientTests {
    @Test(
        "A client offline during 50 vacuumed syncs of others is expired, then re-joins through a whole store without losing its offline writes"
    )
    func offlineThroughVacuums() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let remote = FileManagerFileSystem(rootURL: root)
        let day: TimeInterval = 86_400
        let clock = Locked(Date(timeIntervalSince1970: 1_767_323_045))
        var environment = Fixture.quietEnvironment()
        environment.now = { clock.current }
        var clients: [TestClient] = []
        for name in ["A", "B", "C"] {
            let client = try await TestClient.make(remote, name: name, in: directory, environment: environment)
            client.document.policy.wholeStoreUploadAfterChangeSets = 5  // uploads (and vacuums) during ordinary syncs
            clients.append(client)
        }
        let (a, b, c) = (clients[0], clients[1], clients[2])
        try a.execute("INSERT INTO notes(id, title) VALUES ('start', 'everyone has this')")
        try await converge(a, b, c)

        // C goes away with writes nobody has seen.
        try c.execute("INSERT INTO notes(id, title) VALUES ('c-offline-1', 'written on the plane')")
        try c.execute("UPDATE notes SET body = 'C was here' WHERE id = 'start'")
        let cBefore = try NotesSchema.dump(c.store)
        // Expiry judges silence by the folder's own dates, not by the clients' clocks: the folder shows C silent.
        try await backdateFiles(of: "client-C", in: remote, to: Date().addingTimeInterval(-60 * day))

        for round in 1...50 {
            clock.withLock { $0 += 2 * day }
            try a.execute("INSERT INTO notes(id, title) VALUES (?, ?)", ["a\(round)", "A round \(round)"])
            try b.execute("INSERT INTO notes(id, title) VALUES (?, ?)", ["b\(round)", "B round \(round)"])
            try await a.sync()
            try await b.sync()
            if round % 10 == 0 {
                let report = try await a.document.vacuum(expireClientsAfter: 30 * day)
                #expect(
                    report.expiredClients.isEmpty || report.expiredClients == ["client-C"], "\(report.expiredClients)")
            }
        }
        // Vacuums (explicit, and automatic after uploads) removed the change sets C would have needed.
        let remaining = try await remote.contentsOfDirectory(
            at: a.document.relativePathToThisDocumentSyncChangesThisClientDirectory
        )
        .compactMap { RemoteLayout.parseChangeSetFileName($0.name)?.sequence }
        #expect(!remaining.contains(1), "A's change sets: \(remaining.sorted())")
        #expect(try await remote.exists(a.document.layout.deletedClientFile("DOC", client: "client-C")))

        // C comes back: it was expired, so it stops with a typed error and a backup, its data untouched.
        do {
            try await c.sync()
            Issue.record("an expired client synced")
        } catch let error as FolderSyncError {
            #expect(error.code == .clientDeleted, "\(error)")
            #expect(error.backupPath.map { FileManager.default.fileExists(atPath: $0) } == true)
        }
        #expect(try NotesSchema.dump(c.store) == cBefore)

        let rejoined = try await c.document.rejoin()
        #expect(rejoined.changeSetsSent > 0)
        try await converge(a, b, c)
        let final = try NotesSchema.dump(a.store)
        #expect(try NotesSchema.dump(b.store) == final)
        #expect(try NotesSchema.dump(c.store) == final)
        #expect(try a.value("SELECT title FROM notes WHERE id = 'c-offline-1'") == "written on the plane")
        #expect(try a.value("SELECT body FROM notes WHERE id = 'start'") == "C was here")
        #expect(try c.value("SELECT count(*) FROM notes") == "102")
    }
}
