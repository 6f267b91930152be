import FolderSyncTesting
import Foundation
import GRDB
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// A recent-sync marker names its client's newest change sets, so that a reader that lacks only those fetches them
/// without listing a folder that may hold thousands (benchmark scenario 2); anything else falls back to the listing.
@Suite("Change sets announced by markers")
struct AnnouncedChangeSetTests {
    /// Records which folders are listed, and hides chosen files from downloads a given number of times.
    final class ObservedFileSystem: ForwardingFileSystem, @unchecked Sendable {
        let listed = Locked<[String]>([])
        let hidden = Locked<[String: Int]>([:])

        override func willForward(_ request: Request, path: RemotePath) async throws {
            if request == .list { listed.withLock { $0.append(path.description) } }
        }

        override func download(_ path: RemotePath, toLocalFile url: URL) async throws {
            let hide = hidden.withLock { hidden -> Bool in
                guard let times = hidden[path.name], times > 0 else { return false }
                hidden[path.name] = times - 1
                return true
            }
            if hide { throw FolderSyncError(.remoteItemNotFound, "hidden by the test", path: path.description) }
            try await super.download(path, toLocalFile: url)
        }

        func takeListed() -> [String] {
            listed.withLock { paths in
                defer { paths = [] }
                return paths
            }
        }
    }

    /// A's change-set folder (clients are `client-<name>` in document `DOC`).
    static let folderOfA = "SyncChanges/client-A"

    @Test(
        "A reader fetches the sets a marker names without listing the writer's folder; more new sets than it names are listed"
    )
    func announcedAndListed() async throws {
        let directory = TemporaryDirectory()
        let remote = ObservedFileSystem(FileManagerFileSystem(rootURL: directory.subdirectory("remote")))
        let (a, b) = try await TestClient.pair(remote, in: directory)
        for index in 0..<3 {
            try a.execute("INSERT INTO notes(id, title) VALUES ('n\(index)', 'note \(index)')")
            try await a.sync()
        }
        _ = remote.takeListed()
        let few = try await b.sync()
        #expect(few.changeSetsApplied == 3)
        #expect(!remote.takeListed().contains { $0.hasSuffix(Self.folderOfA) }, "B listed A's folder")

        let many = RecentSync.announcedChangeSetLimit + 5
        for index in 0..<many {
            try a.execute("UPDATE notes SET body = 'edit \(index)' WHERE id = 'n0'")
            try await a.sync()
        }
        let all = try await b.sync()
        #expect(all.changeSetsApplied == many)
        #expect(
            remote.takeListed().contains { $0.hasSuffix(Self.folderOfA) }, "B could not know every name without listing"
        )
        #expect(try NotesSchema.dump(a.store) == NotesSchema.dump(b.store))
    }

    @Test("A set its marker names but the remote does not show yet sends the reader to the listing, in the same sync")
    func notVisibleYet() async throws {
        let directory = TemporaryDirectory()
        let remote = ObservedFileSystem(FileManagerFileSystem(rootURL: directory.subdirectory("remote")))
        let (a, b) = try await TestClient.pair(remote, in: directory)
        a.document.policy.carriesChangeSetsInMarkers = false  // B reads each set from its file
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'one')")
        try await a.sync()
        try a.execute("INSERT INTO notes(id, title) VALUES ('n2', 'two')")
        try await a.sync()
        let names = try await remote.contentsOfDirectory(
            at: RemotePath("com.example.notes/Documents/DOC/\(Self.folderOfA)")
        )
        .map(\.name).filter { $0.hasSuffix(".syncchg") }.sorted()
        #expect(names.count == 2)
        remote.hidden.withLock { $0[names[1]] = 1 }  // the second set lags behind its marker, once
        _ = remote.takeListed()
        let report = try await b.sync()
        #expect(remote.takeListed().contains { $0.hasSuffix(Self.folderOfA) })
        #expect(report.changeSetsApplied == 2)
        #expect(
            !report.warnings.contains { $0.kind == .changeSetWaiting },
            "the second pass applied what the first left waiting")
        #expect(try b.value("SELECT group_concat(title) FROM (SELECT title FROM notes ORDER BY id)") == "one,two")
    }

    @Test(
        "A set a listing showed but its download does not find (a vacuum removed it since) does not fail the sync: the folder is listed again, the sets after it wait, the next sync applies them"
    )
    func listedThenGone() async throws {
        let directory = TemporaryDirectory()
        let remote = ObservedFileSystem(FileManagerFileSystem(rootURL: directory.subdirectory("remote")))
        let (a, b) = try await TestClient.pair(remote, in: directory)
        // More sets than a marker names: B lists A's folder.
        for index in 0..<(RecentSync.announcedChangeSetLimit + 2) {
            try a.execute("INSERT INTO notes(id, title) VALUES (?, 'note')", ["n\(index)"])
            try await a.sync()
        }
        let names = try await remote.contentsOfDirectory(
            at: RemotePath("com.example.notes/Documents/DOC/\(Self.folderOfA)")
        )
        .map(\.name).filter { $0.hasSuffix(".syncchg") }.sorted()
        remote.hidden.withLock { $0[names[0]] = 2 }  // not found after the listing, nor after the second listing
        _ = remote.takeListed()
        let report = try await b.sync()
        #expect(remote.takeListed().filter { $0.hasSuffix(Self.folderOfA) }.count == 2)
        #expect(report.changeSetsApplied == 0, "the later sets depend on the first")
        #expect(report.warnings.contains { $0.kind == .changeSetWaiting })
        let next = try await b.sync()
        #expect(next.changeSetsApplied == names.count)
    }
}
