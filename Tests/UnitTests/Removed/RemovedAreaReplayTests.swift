import FolderSyncTesting
import Foundation
import GRDB
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// Issue 39: nothing removed from a shared folder is gone at once. The four vacuum and deletion defects found so far
/// (a damaged whole store trusted, a cached verification trusted, a deleted client's only store removed, two vacuums
/// at once), replayed with their safeguards switched off (``RemovalSafeguard``): each still removes what only it
/// held, but into the removed area, and a new device still ends with every write, healed from there.
@Suite("Removed area: the defects replayed without their fixes")
struct RemovedAreaReplayTests {
    private static let notes = "SELECT group_concat(id) FROM (SELECT id FROM notes ORDER BY id)"

    private func add(_ client: TestClient, _ ids: [String]) async throws {
        for id in ids {
            try client.execute("INSERT INTO notes(id, title) VALUES (?, 'note')", [id])
            try await client.sync()
        }
    }

    /// Clients that upload and vacuum only when told, so that each replay decides what happens when.
    private func client(_ remote: any RemoteFileSystem, _ name: String, in directory: TemporaryDirectory) async throws
        -> TestClient
    {
        let client = try await TestClient.make(remote, name: name, in: directory)
        client.document.policy.wholeStoreUploadAfterChangeSets = nil
        client.document.policy.vacuumsAfterWholeStoreUpload = false
        client.document.policy.acknowledgementDelay = 0
        return client
    }

    /// The operator's vacuum and client deletion, with `disabled` safeguards off.
    private func operatorTool(
        _ remote: any RemoteFileSystem, disabled: Set<RemovalSafeguard>,
        cache: URL? = nil
    ) throws -> DocumentMaintenance {
        let context = DocumentOperationContext(
            fileSystem: remote, layout: try RemoteLayout(applicationIdentifier: Fixture.application),
            documentIdentifier: "DOC", clientIdentifier: "operator",
            environment: Fixture.quietEnvironment())
        var options = DocumentMaintenance.Options(verificationCacheFile: cache)
        options.disabledSafeguards = disabled
        return try DocumentMaintenance(context: context, options: options)
    }

    /// A new device joins and must end with `expected`, having healed from the removed area.
    /// A new device joins and must end with `expected`; `healing`: having healed from the removed area itself.
    private func expectHealedJoin(
        _ remote: any RemoteFileSystem, in directory: TemporaryDirectory, expected: String,
        healing: Bool = true, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let newcomer = try await TestClient.make(remote, name: "new", in: directory)
        let report = try await newcomer.sync()
        #expect(try newcomer.value(Self.notes) == expected, sourceLocation: sourceLocation)
        #expect(
            report.warnings.contains { $0.kind == .recoveredFromRemoved } == healing, "\(report.warnings)",
            sourceLocation: sourceLocation)
    }

    @Test(
        "A damaged whole store trusted (issue 19, item 1): vacuum removes the sets only it claimed to hold; a new device heals from the removed area"
    )
    func damagedStoreTrusted() async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let a = try await client(remote, "A", in: directory)
        let b = try await client(remote, "B", in: directory)
        try await add(a, ["a1", "a2", "a3"])
        try await b.sync()
        _ = try #require(try await a.document.uploadWholeStore())
        let store = a.document.relativePathToThisDocumentWholeStoreThisClientDirectoryWholeStoreFile
        var bytes = try await remote.read(store)
        bytes[bytes.count / 2] ^= 0xFF
        try await remote.write(bytes, to: store)
        try await add(b, ["b1"])  // B acknowledges A's sets

        let report = try await operatorTool(remote, disabled: [.verifiesWholeStores]).vacuum()
        #expect(report.removedChangeSets.count == 3, "the replay removed \(report.removedChangeSets)")
        try await expectHealedJoin(remote, in: directory, expected: "a1,a2,a3,b1")
    }

    @Test(
        "A cached verification trusted (issue 38, item 3): the store damaged in place after a vacuum verified it; a new device heals"
    )
    func cachedVerificationTrusted() async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let a = try await client(remote, "A", in: directory)
        let b = try await client(remote, "B", in: directory)
        try await b.sync()
        try await add(a, ["a1", "a2", "a3"])
        _ = try #require(try await a.document.uploadWholeStore())
        let tool = try operatorTool(
            remote, disabled: [.rereadsRememberedStores], cache: directory.url.appendingPathComponent("cache.json"))
        #expect(try await tool.vacuum().wholeStoreCheck.verified == 1)
        try flipByteInPlace(
            remote.url(for: a.document.relativePathToThisDocumentWholeStoreThisClientDirectoryWholeStoreFile))
        try await add(b, ["b1"])

        let report = try await tool.vacuum()
        #expect(report.removedChangeSets.count == 3 && report.wholeStoreCheck.verifiedEarlier == 1, "\(report)")
        try await expectHealedJoin(remote, in: directory, expected: "a1,a2,a3,b1")
    }

    @Test(
        "A deleted client's only store removed (issue 38, item 4): after a failed join left a store covering little; a new device heals"
    )
    func deletedClientsOnlyStore() async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let a = try await client(remote, "A", in: directory)
        try await add(a, ["a1", "a2", "a3"])
        _ = try #require(try await a.document.uploadWholeStore())
        let tool = try operatorTool(remote, disabled: [.keepsOnlyStoreOfDeletedClient])
        #expect(try await tool.vacuum().removedChangeSets.count == 3)  // A alone: its store covers them
        let store = remote.url(for: a.document.relativePathToThisDocumentWholeStoreThisClientDirectoryWholeStoreFile)
        let intact = try Data(contentsOf: store)
        try flipByteInPlace(store)
        let joiner = try await client(remote, "J", in: directory)
        // Its join meets the damaged store; it heals from the removed area where the vacuum put A's sets, and owes a
        // store of its own, which now covers them (before the removed area, it covered nothing of A).
        let joined = try await joiner.sync()
        #expect(joined.uploadedWholeStore?.covers["client-A"] == 3, "\(joined.warnings)")
        #expect(joined.warnings.contains { $0.kind == .recoveredFromRemoved }, "\(joined.warnings)")
        try overwriteInPlace(store, with: intact)

        let deletion = try await tool.deleteClient("client-A")
        #expect(!deletion.keptWholeStore && deletion.removalFolder != nil)
        try await expectHealedJoin(remote, in: directory, expected: "a1,a2,a3", healing: false)
        // With the joiner's store gone too, only the removed area holds A's writes: a device joining heals from it.
        try FileManager.default.moveItem(
            at: remote.url(for: joiner.document.relativePathToThisDocumentWholeStoreThisClientDirectory),
            to: directory.url.appendingPathComponent("aside"))
        let late = try await TestClient.make(remote, name: "late", in: directory)
        let report = try await late.sync()
        #expect(try late.value(Self.notes) == "a1,a2,a3")
        #expect(report.warnings.contains { $0.kind == .recoveredFromRemoved }, "\(report.warnings)")
    }

    @Test(
        "Two vacuums at once (issue 24, item 3): each removes the store the other kept, no store is left; a new device heals"
    )
    func racingVacuums() async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let a = try await client(remote, "A", in: directory)
        let b = try await client(remote, "B", in: directory)
        try await add(a, ["a1"])
        try await add(b, ["b1"])
        try await converge(a, b)
        _ = try #require(try await a.document.uploadWholeStore())
        try await add(b, ["b2"])
        try await converge(a, b)
        _ = try #require(try await b.document.uploadWholeStore())  // B's store dominates A's

        let held = ConcurrentVacuumTests.HeldBeforeRemoving(remote)
        let first = Task { try await operatorTool(held, disabled: [.removesWhatItPlanned]).vacuum() }
        await held.waitUntilHeld()
        try await add(a, ["a2"])
        try await converge(a, b)
        _ = try #require(try await a.document.uploadWholeStore())  // A's newer store dominates B's
        _ = try await operatorTool(remote, disabled: [.removesWhatItPlanned]).vacuum()
        held.release()
        _ = try await first.value

        let stores = try await remote.contentsOfDirectoryIfPresent(
            at: a.document.relativePathToThisDocumentWholeStoreDirectory)
        #expect(stores.filter { $0.kind == .directory }.isEmpty, "the replay left a store: \(stores.map(\.name))")
        try await expectHealedJoin(remote, in: directory, expected: "a1,a2,b1,b2")
    }
}
