import Foundation
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import FolderSyncWebDAV
@testable import TestSupport

/// The WebDAV transport's answers to hostile or broken servers: oversized files, cut-off listings, and the
/// refusal to send a password in clear to another machine.
@Suite("WebDAV transport")
struct WebDAVTransportTests {
    /// A file system on `url` that does not retry (unless told) and does not wait between attempts.
    private static func fileSystem(_ url: URL, attempts: Int = 1) throws -> WebDAVFileSystem {
        var configuration = WebDAVFileSystem.Configuration(baseURL: url)
        configuration.requestTimeout = 10
        configuration.retryPolicy = WebDAVRetryPolicy(maximumAttempts: attempts, sleep: { _ in }, random: { 0 })
        return try WebDAVFileSystem(configuration: configuration)
    }

    /// The bytes the misbehaving server wrote into the connection before the client stopped reading.
    private static func sent(_ log: [String]) throws -> Int {
        let line = try #require(log.first { $0.hasPrefix("SENT ") }, "\(log)")
        return try #require(Int(line.dropFirst(5)))
    }

    static let marker = try! RemotePath("com.example.notes/Documents/notes/RecentSyncs/B.recentsync")

    @Test(
        "A 300 MB file read with a bound is refused by its Content-Length: corruptFile naming it, one request, not downloaded",
        arguments: [true, false])
    func boundedRead(announced: Bool) async throws {
        let server = try await MisbehavingServer([["status": 200, "zeros": 300_000_000, "announce": announced]])
        let remote = try Self.fileSystem(server.url)
        let start = ContinuousClock.now
        do {
            _ = try await remote.read(Self.marker, maximumSize: 1 << 20)
            Issue.record("a 300 MB marker was read")
        } catch let error as FolderSyncError {
            #expect(error.code == .corruptFile && error.path == Self.marker.description, "\(error)")
            #expect(error.message.contains("more than the 1048576"), "\(error)")
        }
        let elapsed = ContinuousClock.now - start
        let log = await server.stop()
        let sent = try Self.sent(log)
        // What the server could push into the kernel's socket buffers before the client hung up: a few MB.
        #expect(sent < 32 << 20, "the server sent \(sent) bytes of 300 MB")
        #expect(remote.statistics.requests == 1, "no size check before the GET, no retry")
        #expect(elapsed < .seconds(20))
        print(
            "bounded read (Content-Length \(announced ? "announced" : "absent")): refused after \(sent) bytes sent of 300000000"
        )
    }

    @Test("A file within the bound is read whole, in one request")
    func boundedReadWithin() async throws {
        let server = try await MisbehavingServer([["status": 200, "body": "small marker"]])
        let remote = try Self.fileSystem(server.url)
        #expect(try await remote.read(Self.marker, maximumSize: 100) == Data("small marker".utf8))
        #expect(await server.stop().count == 1)
    }

    @Test("A request that sent a body and gets no answer times out after the request timeout of silence, as a GET does")
    func silentAfterBody() async throws {
        let server = try await MisbehavingServer([["hang": true]])
        var configuration = WebDAVFileSystem.Configuration(baseURL: server.url)
        configuration.requestTimeout = 1
        configuration.retryPolicy = .none
        let remote = try WebDAVFileSystem(configuration: configuration)
        for request in ["PROPFIND", "PUT", "GET"] {
            let start = ContinuousClock.now
            do {
                switch request {
                case "PROPFIND": _ = try await remote.item(at: RemotePath("folder"))
                case "PUT": try await remote.write(Data(count: 1000), to: RemotePath("file"))
                default: _ = try await remote.read(RemotePath("file"))
                }
                Issue.record("\(request) to a silent server succeeded")
            } catch let error as FolderSyncError {
                #expect(
                    error.code == .connectionFailed && error.message.contains("did not answer within 1 s"), "\(error)")
            }
            let elapsed = ContinuousClock.now - start
            // Without the timeout, the server would hold the request 30 s; libcurl's own speed check would take 6 s.
            #expect(elapsed >= .seconds(1) && elapsed < .seconds(5), "\(request) timed out after \(elapsed)")
        }
        _ = await server.stop()
    }

    static let listing = """
        <?xml version="1.0" encoding="utf-8"?>
        <D:multistatus xmlns:D="DAV:"><D:response><D:href>/share/</D:href><D:propstat><D:prop><D:resourcetype><D:collection/></D:resourcetype></D:prop>\
        <D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response><D:response><D:href>/share/a</D:href><D:propstat><D:prop>\
        <D:resourcetype/><D:getcontentlength>3</D:getcontentlength></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response></D:multistatus>
        """

    @Test("A cut-off PROPFIND answer is asked for again, not fatal")
    func cutOffListingRetried() async throws {
        let cut = String(Self.listing.prefix(Self.listing.count / 2))
        let server = try await MisbehavingServer([
            ["status": 207, "body": cut], ["status": 207, "body": Self.listing],
        ])
        let remote = try Self.fileSystem(server.url, attempts: 4)
        let items = try await remote.contentsOfDirectory(at: .root)
        #expect(items.map(\.name) == ["a"])
        #expect(await server.stop().count == 2)
        #expect(remote.statistics.retries == 1)
    }

    @Test("A PROPFIND answer that stays cut off is remoteIOFailed, said in words")
    func cutOffListingFails() async throws {
        let server = try await MisbehavingServer([["status": 207, "body": String(Self.listing.prefix(200))]])
        let remote = try Self.fileSystem(server.url, attempts: 3)
        do {
            _ = try await remote.contentsOfDirectory(at: RemotePath("folder"))
            Issue.record("a cut-off listing was accepted")
        } catch let error as FolderSyncError {
            #expect(error.code == .remoteIOFailed && error.path == "folder")
            #expect(error.description.contains("cut off"), "\(error)")
            for dump in ["Code=", "(null)", "NSXMLParserErrorDomain", "Error Domain"] {
                #expect(!error.description.contains(dump), "\(error)")
            }
        }
        #expect(await server.stop().count == 3)
    }

    @Test(
        "Credentials over clear http:// to another machine are refused (invalidConfiguration naming the URL) unless allowed; loopback, https and no credentials are fine"
    )
    func insecureCredentials() throws {
        let password = "hunter2-\(UUID().uuidString.prefix(6))"
        let alice = WebDAVCredentials(user: "alice", password: password)
        for url in [
            "http://dav.example.com/share", "http://alice:\(password)@dav.example.com/share", "http://10.0.0.7:8080/x",
        ] {
            do {
                _ = try WebDAVFileSystem(baseURL: URL(string: url)!, credentials: url.contains("@") ? nil : alice)
                Issue.record("\(url): credentials accepted over clear http")
            } catch let error as FolderSyncError {
                #expect(error.code == .invalidConfiguration, "\(error)")
                #expect(
                    error.path?.hasPrefix("http://") == true
                        && error.description.contains("FOLDERSYNC_WEBDAV_ALLOW_HTTP"), "\(error)")
                #expect(!error.description.contains(password), "\(error)")
            }
        }
        _ = try WebDAVFileSystem(
            baseURL: URL(string: "http://dav.example.com/share")!, credentials: alice, allowsInsecureCredentials: true)
        _ = try WebDAVFileSystem(baseURL: URL(string: "https://dav.example.com/share")!, credentials: alice)
        _ = try WebDAVFileSystem(baseURL: URL(string: "http://dav.example.com/share")!)
        for loopback in ["http://127.0.0.1:8080/", "http://127.1.2.3/", "http://localhost/x", "http://[::1]:8080/x"] {
            _ = try WebDAVFileSystem(baseURL: URL(string: loopback)!, credentials: alice)
        }
        #expect(!WebDAVFileSystem.isLoopback("127.example.com") && !WebDAVFileSystem.isLoopback("128.0.0.1"))
        #expect(!WebDAVFileSystem.isLoopback("localhost.example.com"))

        let environment = [WebDAVCredentials.userVariable: "alice", WebDAVCredentials.passwordVariable: password]
        #expect(throws: FolderSyncError.self) {
            try RemoteLocation.fileSystem(for: "http://dav.example.com/share", environment: environment)
        }
        var allowed = environment
        allowed[RemoteLocation.allowHTTPVariable] = "1"
        #expect(
            try RemoteLocation.fileSystem(for: "http://dav.example.com/share", environment: allowed) is WebDAVFileSystem
        )
    }

    @Test("foldersync refuses credentials over clear http:// to another machine in one line, without the password")
    func insecureCredentialsTool() async throws {
        let result = try await FoldersyncTool.run(
            ["documents", "list", "--remote", "http://dav.example.invalid/share"],
            environment: [
                WebDAVCredentials.userVariable: "alice",
                WebDAVCredentials.passwordVariable: "tool-secret-42",
            ])
        #expect(result.status == 2)
        #expect(
            result.errors.split(separator: "\n").count == 1 && result.errors.contains("FOLDERSYNC_WEBDAV_ALLOW_HTTP"),
            "\(result.errors)")
        #expect(result.errors.contains("http://dav.example.invalid/share"), "\(result.errors)")
        #expect(!result.errors.contains("tool-secret-42"))
    }
}
