import FolderSyncTesting
import Foundation
import Testing

@_spi(Tooling) @_spi(ModelAdapter) @testable import FolderSync
@testable import TestSupport

/// This client's own marker written by another installation of it: its past (a folder put back from a copy made a
/// moment before) is written again with a warning; a marker written since this installation announced itself is
/// another installation sharing the identity. Marker dates are whole seconds.
@Suite("This client's marker from another installation")
struct OwnMarkerTests {
    /// A's marker replaced by one another installation wrote in the second A last announced, saying `published`.
    static func markerOfAnotherInstallation(_ a: TestClient, _ remote: any RemoteFileSystem, published: Int64)
        async throws
    {
        let announced = try a.store.loadSyncState().remote
        let date = try #require(announced.announcedAt)
        let marker = RecentSync(
            clientIdentifier: a.document.clientIdentifier, lastSyncDate: date, publishedSequence: published,
            acknowledgement: [:], schemaVersion: 1, installation: "1A000000-0000-4000-8000-00000000000F")
        let path = a.document.layout.recentSyncFile("DOC", client: a.document.clientIdentifier)
        try await remote.write(try PropertyListFile.encode(marker), to: path)
    }

    @Test("A marker of the same second announcing fewer sets is this client's past: written again, with a warning")
    func sameSecondFewerSetsIsThePast() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let (a, _) = try await TestClient.pair(remote, in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'from A')")
        try await a.sync()
        try #require(try a.store.loadSyncState().remote.announcedSequence == 1)
        try await Self.markerOfAnotherInstallation(a, remote, published: 0)
        let report = try await a.sync()
        #expect(report.warnings.contains { $0.kind == .staleRecentSync })
    }

    @Test("A marker of the same second announcing as many sets is another installation's: clientIdentityShared")
    func sameSecondAsManySetsIsAnotherInstallation() async throws {
        let directory = TemporaryDirectory()
        let remote = InMemoryFileSystem()
        let (a, _) = try await TestClient.pair(remote, in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'from A')")
        try await a.sync()
        try await Self.markerOfAnotherInstallation(a, remote, published: 1)
        await #expect { try await a.sync() } throws: { ($0 as? FolderSyncError)?.code == .clientIdentityShared }
    }
}
