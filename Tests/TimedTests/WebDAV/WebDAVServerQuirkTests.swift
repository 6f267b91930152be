import Foundation
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import FolderSyncWebDAV
@testable import TestSupport

/// What servers differ on, checked on each: folders deleted and moved (nginx wants a trailing slash), vacuum run by
/// the tool, and version tags where a server lists no ETag (nginx).
@Suite("WebDAV server differences")
struct WebDAVServerQuirkTests {
    /// `remote`'s URL with the server's credentials, as an operator would type it for the tool.
    static func toolURL(_ remote: WebDAVFileSystem, server: String) throws -> String {
        var components = URLComponents(url: try WebDAVTestServers.url(server), resolvingAgainstBaseURL: false)!
        components.percentEncodedPath = remote.baseURL.path(percentEncoded: true)
        return components.url!.absoluteString
    }

    @Test("Folders, empty or not, are removed and moved on every server", arguments: WebDAVTestServers.names)
    func foldersRemovedAndMoved(_ server: String) async throws {
        let remote = try await WebDAVTestServers.fileSystem(server)
        try await remote.createDirectory(at: RemotePath("empty"))
        try await remote.createDirectory(at: RemotePath("full/inner"))
        try await remote.write(Data("x".utf8), to: RemotePath("full/inner/file"))
        try await remote.createDirectory(at: RemotePath("moving"))
        try await remote.write(Data("y".utf8), to: RemotePath("moving/file"))

        try await remote.remove(RemotePath("empty"))
        try await remote.remove(RemotePath("full"))
        try await remote.remove(RemotePath("never-there"))
        try await remote.move(from: RemotePath("moving"), to: RemotePath("moved"), replacing: false)
        #expect(try await remote.item(at: RemotePath("empty")) == nil)
        #expect(try await remote.item(at: RemotePath("full")) == nil)
        #expect(try await remote.read(RemotePath("moved/file")) == Data("y".utf8))
        #expect(try await remote.item(at: RemotePath("moving")) == nil)
    }

    @Test(
        "A write into a missing folder is remoteItemNotFound naming the folder on every server (nginx answers 500)",
        arguments: WebDAVTestServers.names)
    func writeIntoMissingFolder(_ server: String) async throws {
        let remote = try await WebDAVTestServers.fileSystem(server) {
            $0.retryPolicy = WebDAVRetryPolicy(sleep: { _ in })
        }
        do {
            try await remote.write(Data("x".utf8), to: RemotePath("missing/file"))
            Issue.record("\(server): a write into a missing folder succeeded")
        } catch let error as FolderSyncError {
            #expect(error.code == .remoteItemNotFound && error.path == "missing", "\(server): \(error)")
            #expect(error.message.contains("parent folder does not exist"), "\(server): \(error)")
        }
    }

    @Test(
        "foldersync deletes a client and vacuums its folders on every server, exit 0",
        arguments: WebDAVTestServers.names)
    func vacuumThroughTool(_ server: String) async throws {
        let directory = TemporaryDirectory()
        let remote = try await WebDAVTestServers.fileSystem(server)
        let (a, b) = try await TestClient.pair(remote, in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'from A')")
        try b.execute("INSERT INTO notes(id, title) VALUES ('n2', 'from B')")
        try await converge(a, b)
        let url = try Self.toolURL(remote, server: server)
        let deletion = try await FoldersyncTool.run([
            "clients", "delete", "client-B", "--document", "DOC", "--yes", "--remote", url,
        ])
        #expect(deletion.status == 0, "\(deletion.errors)")
        let vacuum = try await FoldersyncTool.run(["vacuum", "--remote", url, "--json"])
        #expect(vacuum.status == 0, "\(server): \(vacuum.errors)\(vacuum.output)")
        struct Report: Decodable {
            struct Document: Decodable {
                struct Removal: Decodable {
                    var path: String
                    var reason: String
                }
                var removed: [Removal]
            }
            var documents: [Document]
            var failed: Bool
        }
        let report = try FoldersyncTool.json(Report.self, vacuum)
        #expect(!report.failed)
        let folders = report.documents.flatMap(\.removed).filter { $0.reason == "deletedClientFolder" }.map(\.path)
        #expect(
            folders.contains { $0.hasSuffix("SyncCommands/client-B") },
            "\(report.documents.flatMap(\.removed).map(\.path))")
        for folder in folders { #expect(try await remote.item(at: RemotePath(folder)) == nil, "\(folder)") }
        let again = try await FoldersyncTool.run(["vacuum", "--remote", url])
        #expect(again.status == 0, "\(again.errors)")
    }

    // MARK: Version tags without ETags

    static func entry(modified: Date?, size: Int64?, etag: String? = nil) -> MultistatusEntry {
        MultistatusEntry(href: "/x", isCollection: false, contentLength: size, etag: etag, lastModified: modified)
    }

    @Test(
        "Without an ETag, a version tag is derived from date and size only for files settled 2 s before the server's clock"
    )
    func derivedTags() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(WebDAVFileSystem.derivedVersionTag(Self.entry(modified: now, size: 10), serverDate: now) == nil)
        #expect(WebDAVFileSystem.derivedVersionTag(Self.entry(modified: now - 1, size: 10), serverDate: now) == nil)
        #expect(WebDAVFileSystem.derivedVersionTag(Self.entry(modified: now - 2, size: 10), serverDate: now) != nil)
        #expect(WebDAVFileSystem.derivedVersionTag(Self.entry(modified: now - 2, size: 10), serverDate: nil) == nil)
        #expect(WebDAVFileSystem.derivedVersionTag(Self.entry(modified: now - 2, size: nil), serverDate: now) == nil)
        #expect(WebDAVFileSystem.derivedVersionTag(Self.entry(modified: nil, size: 10), serverDate: now) == nil)
        let a = WebDAVFileSystem.derivedVersionTag(Self.entry(modified: now - 5, size: 10), serverDate: now)
        let b = WebDAVFileSystem.derivedVersionTag(Self.entry(modified: now - 4, size: 10), serverDate: now)
        let c = WebDAVFileSystem.derivedVersionTag(Self.entry(modified: now - 5, size: 11), serverDate: now)
        #expect(Set([a, b, c]).count == 3)
    }

    /// Waits until the server lists `path` with a version tag (its own ETag, or one derived once the file is settled),
    /// which on a server without ETags takes its settling time. Returns the tag.
    static func settledTag(_ remote: WebDAVFileSystem, _ path: RemotePath) async throws -> String {
        let deadline = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < deadline {
            if let tag = try await remote.item(at: path)?.etag { return tag }
            try await Task.sleep(for: .milliseconds(250))
        }
        Issue.record("\(path) got no version tag in 15 s")
        return ""
    }

    @Test(
        "A file replaced by one of the same size, in the same second or later, never keeps its version tag",
        arguments: WebDAVTestServers.names)
    func sameSizeReplaceChangesTag(_ server: String) async throws {
        let remote = try await WebDAVTestServers.fileSystem(server)
        let path = try RemotePath("marker")
        for round in 0..<5 {
            // Written and replaced at once: both listings come within a second.
            try await remote.write(Data("version-a-\(round)".utf8), to: path)
            let first = try await remote.item(at: path)?.etag
            try await remote.write(Data("version-b-\(round)".utf8), to: path)
            let second = try await remote.item(at: path)?.etag
            #expect(
                first == nil || second == nil || first != second,
                "round \(round): tag \(first ?? "-") kept across a replace")
        }
        // A settled file (tagged, even on a server without ETags) replaced at once by one of the same size.
        let settled = try await Self.settledTag(remote, path)
        try await remote.write(Data("version-c-4".utf8), to: path)
        let replaced = try await remote.item(at: path)?.etag
        #expect(replaced != settled, "the settled tag \(settled) survived a same-size replace")
    }

    @Test(
        "An idle sync costs 2 requests on every server once the markers are settled", arguments: WebDAVTestServers.names
    )
    func idleSyncCostsTwoRequests(_ server: String) async throws {
        let directory = TemporaryDirectory()
        let remote = try await WebDAVTestServers.fileSystem(server)
        let (a, b) = try await TestClient.pair(remote, in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'hello')")
        try await converge(a, b)
        // On a server without ETags the markers get version tags once settled (2 s by the server's clock).
        let markers = a.document.layout.recentSyncsDirectory("DOC")
        for item in try await remote.contentsOfDirectory(at: markers) where !TemporaryName.isTemporary(item.name) {
            _ = try await Self.settledTag(remote, markers.appending(item.name))
        }
        // The first sync after that reads each marker that has just got a tag once more, and keeps the tag.
        try await a.sync()
        var counts: [Int] = []
        for _ in 0..<3 {
            let before = remote.statistics.requests
            try await a.sync()
            counts.append(remote.statistics.requests - before)
        }
        print("idle sync on \(server), markers settled: \(counts) HTTP requests")
        #expect(counts == [2, 2, 2], "\(server): \(counts)")
    }
}
