import FolderSync
import Foundation
import GRDB
import Testing

@testable import TestSupport

/// An app that syncs in the background: a write made while the folder is away is published once it is back, with
/// no call of the app's, however the watcher's looks at the folder fell.
@Suite("Watching after a failed sync", .serialized)
struct WatchingAfterOutageTests {
    @Test(
        "A sync that found the folder away is made again once the folder is back, though the watcher never saw it away")
    func syncAgainAfterFailedSync() async throws {
        let directory = TemporaryDirectory()
        let shared = directory.subdirectory("shared")
        let folder = directory.subdirectory("A")
        let remote = ListingCounter(FileManagerFileSystem(rootURL: shared))
        let a = try await AppDevice.register(
            "A",
            store: try GRDBStore(
                path: folder.appendingPathComponent("notes.sqlite").path,
                tables: [SyncedTable("notes")], connection: .pool,
                migrator: AppDevice.migrator),
            helper: folder.appendingPathComponent("helper"), shared: shared, remote: remote)
        let b = try await AppDevice.make("B", in: directory, shared: shared, connection: .pool)
        try await a.sync()
        let before = remote.listings
        a.document.startWatchingRemote(debounce: .milliseconds(50), pollInterval: .seconds(5))
        defer { a.document.stopWatchingRemote() }
        // The watcher's first look at the folder (at once) is done before the folder goes away; the next is 5 s later.
        let firstLook = ContinuousClock.now + .seconds(30)
        while remote.listings == before, ContinuousClock.now < firstLook {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(remote.listings > before)

        // Away for a moment only: the app's own sync finds it away, the watcher's looks do not.
        let away = directory.url.appendingPathComponent("shared-away")
        try FileManager.default.moveItem(at: shared, to: away)
        try a.write("INSERT INTO notes(id, body) VALUES ('n1', 'written while the folder was away')")
        await #expect { try await a.sync() } throws: { ($0 as? FolderSyncError)?.code == .remoteUnavailable }
        try FileManager.default.moveItem(at: away, to: shared)

        // Nothing else happens in the folder (no other device's marker to notice): only the watcher can publish it.
        let deadline = ContinuousClock.now + .seconds(30)
        while a.document.hasUnpublishedChanges, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))  // a look at A's state until the deadline
        }
        #expect(!a.document.hasUnpublishedChanges, "the write made while the folder was away was not published")
        try await b.sync()
        #expect(try b.notes() == ["n1=written while the folder was away"])
    }
}

/// A remote that counts the listings that answered (the watcher's looks at the folder among them).
final class ListingCounter: ForwardingFileSystem, @unchecked Sendable {
    private let count = Locked(0)
    var listings: Int { count.current }

    override func contentsOfDirectory(at path: RemotePath) async throws -> [RemoteItem] {
        let items = try await super.contentsOfDirectory(at: path)
        count.withLock { $0 += 1 }
        return items
    }
}
