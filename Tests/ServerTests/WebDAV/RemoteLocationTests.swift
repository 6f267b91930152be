@_spi(Tooling) import FolderSync
import FolderSyncWebDAV
import Foundation
import Testing

@testable import TestSupport

/// `--remote` as notes and foldersync read it: one helper for paths, file:// and WebDAV URLs.
@Suite("Remote locations")
struct RemoteLocationTests {
    @Test("Paths and file:// URLs open the folder; http(s):// opens WebDAV with the environment's credentials")
    func kinds() throws {
        let directory = TemporaryDirectory()
        #expect(try RemoteLocation.fileSystem(for: directory.url.path) is FileManagerFileSystem)
        #expect(try RemoteLocation.fileSystem(for: directory.url.absoluteString) is FileManagerFileSystem)
        let environment = [WebDAVCredentials.userVariable: "alice", WebDAVCredentials.passwordVariable: "secret"]
        let remote = try RemoteLocation.fileSystem(for: "https://dav.example.com/share", environment: environment)
        let webDAV = try #require(remote as? WebDAVFileSystem)
        #expect(webDAV.baseURL.absoluteString == "https://dav.example.com/share/")
        #expect(WebDAVCredentials.fromEnvironment(environment)?.description.contains("secret") == false)
    }

    @Test("Missing folders and unknown schemes are refused with typed errors; passwords are redacted")
    func refusals() throws {
        #expect(throws: FolderSyncError.self) { try RemoteLocation.fileSystem(for: "/nonexistent/folder") }
        #expect(throws: FolderSyncError.self) { try RemoteLocation.fileSystem(for: "ftp://example.com/share") }
        #expect(RemoteLocation.redacted("https://bob:hunter2@dav.example.com/x") == "https://bob:***@dav.example.com/x")
        let webDAV = try WebDAVFileSystem(baseURL: URL(string: "http://bob:hunter2@127.0.0.1:1/a%20b")!)
        #expect(webDAV.baseURL.absoluteString == "http://127.0.0.1:1/a%20b/")
    }

    @Test("foldersync doctor checks a tree on a WebDAV server", arguments: WebDAVTestServers.names)
    func doctorOverWebDAV(_ server: String) async throws {
        let directory = TemporaryDirectory()
        let remote = try await WebDAVTestServers.fileSystem(server)
        let client = try await TestClient.make(remote, name: "A", in: directory)
        try client.execute("INSERT INTO notes(id, title) VALUES ('n1', 'hello')")
        try await client.sync()
        var components = URLComponents(url: try WebDAVTestServers.url(server), resolvingAgainstBaseURL: false)!
        components.percentEncodedPath = remote.baseURL.path(percentEncoded: true)
        let result = try await FoldersyncTool.run(["doctor", "--remote", components.url!.absoluteString])
        #expect(result.status == 0, "\(result.output)\(result.errors)")
        #expect(
            !result.output.contains(components.password ?? "\u{0}")
                && !result.errors.contains(components.password ?? "\u{0}"))
    }

    @Test(
        "foldersync takes the WebDAV password from --webdav-password-file, never from an argument, and never prints it",
        arguments: WebDAVTestServers.names)
    func passwordFile(_ server: String) async throws {
        let directory = TemporaryDirectory()
        let remote = try await WebDAVTestServers.fileSystem(server)
        let client = try await TestClient.make(remote, name: "A", in: directory)
        try await client.sync()
        let full = URLComponents(url: try WebDAVTestServers.url(server), resolvingAgainstBaseURL: false)!
        var bare = full
        (bare.user, bare.password) = (nil, nil)
        bare.percentEncodedPath = remote.baseURL.path(percentEncoded: true)
        let passwordFile = directory.url.appendingPathComponent("password")
        try ((full.password ?? "") + "\n").write(to: passwordFile, atomically: true, encoding: .utf8)
        let good = try await FoldersyncTool.run([
            "clients", "list", "--remote", bare.url!.absoluteString, "--user", full.user ?? "",
            "--webdav-password-file", passwordFile.path,
        ])
        #expect(good.status == 0, "\(good.errors)")
        #expect(good.output.contains("client-A"))

        try "not-the-password\n".write(to: passwordFile, atomically: true, encoding: .utf8)
        let bad = try await FoldersyncTool.run([
            "clients", "list", "--remote", bare.url!.absoluteString, "--user", full.user ?? "",
            "--webdav-password-file", passwordFile.path,
        ])
        #expect(bad.status == 2 && bad.errors.contains("permission"), "\(bad.errors)")
        #expect(!bad.errors.contains("not-the-password") && !bad.output.contains("not-the-password"))
    }
}
