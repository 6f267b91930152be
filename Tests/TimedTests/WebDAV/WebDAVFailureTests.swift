import FolderSyncWebDAV
import Foundation
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// Runs `body` and expects a ``FolderSyncError`` with `code`.
private func expectCode<T>(
    _ code: FolderSyncError.Code, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> T
) async {
    do {
        _ = try await body()
        Issue.record("expected \(code), but it succeeded", sourceLocation: sourceLocation)
    } catch {
        #expect(
            (error as? FolderSyncError)?.code == code, "expected \(code), got \(error)", sourceLocation: sourceLocation)
    }
}

/// Errors and retries against a server that misbehaves on purpose, and wrong credentials on the real servers.
@Suite("WebDAV failures and retries")
struct WebDAVFailureTests {
    /// A file system on `server` whose retry waits are recorded instead of slept.
    private static func fileSystem(
        _ url: URL, attempts: Int = 4, timeout: TimeInterval = 30,
        sleeps: Locked<[Duration]>
    ) throws -> WebDAVFileSystem {
        var configuration = WebDAVFileSystem.Configuration(baseURL: url)
        configuration.requestTimeout = timeout
        configuration.retryPolicy = WebDAVRetryPolicy(
            maximumAttempts: attempts,
            sleep: { duration in
                sleeps.withLock { $0.append(duration) }
            }, random: { 0 })
        return try WebDAVFileSystem(configuration: configuration)
    }

    @Test("503 with Retry-After is retried after the server's delay, then succeeds")
    func retryAfter() async throws {
        let server = try await MisbehavingServer([
            ["status": 503, "headers": ["Retry-After": "7"]],
            ["status": 200, "body": "hello"],
        ])
        let sleeps = Locked<[Duration]>([])
        let remote = try Self.fileSystem(server.url, sleeps: sleeps)
        let data = try await remote.read(RemotePath("file"))
        let requests = await server.stop()
        #expect(String(decoding: data, as: UTF8.self) == "hello")
        #expect(sleeps.current == [.seconds(7)])
        #expect(
            remote.statistics
                == {
                    var s = WebDAVStatistics()
                    s.requests = 2
                    s.retries = 1
                    return s
                }())
        #expect(requests == ["GET /share/file 0", "GET /share/file 0"])
    }

    @Test("Server errors are retried with exponential backoff, then fail with remoteIOFailed")
    func backoffThenFailure() async throws {
        let server = try await MisbehavingServer([["status": 500]])
        let sleeps = Locked<[Duration]>([])
        let remote = try Self.fileSystem(server.url, sleeps: sleeps)
        await expectCode(.remoteIOFailed) { try await remote.read(RemotePath("file")) }
        let requests = await server.stop()
        #expect(requests.count == 4)
        #expect(sleeps.current == [.milliseconds(250), .milliseconds(500), .milliseconds(1000)])
    }

    @Test("429 on PUT is retried and the upload completes with its body")
    func tooManyRequests() async throws {
        let server = try await MisbehavingServer([
            ["status": 429, "headers": ["Retry-After": "2"]],
            ["status": 201],
            ["status": 201],
        ])
        let sleeps = Locked<[Duration]>([])
        let remote = try Self.fileSystem(server.url, sleeps: sleeps)
        try await remote.write(Data("12345".utf8), to: RemotePath("file"))
        let requests = await server.stop()
        #expect(sleeps.current == [.seconds(2)])
        #expect(requests.count == 3)
        #expect(
            requests.prefix(2).allSatisfy { $0.hasPrefix("PUT /share/.foldersync-tmp-") && $0.hasSuffix(" 5") },
            "\(requests)")
        #expect(requests.last?.hasPrefix("MOVE /share/.foldersync-tmp-") == true)
    }

    @Test("507 is remoteFull at once, without retries")
    func insufficientStorage() async throws {
        let server = try await MisbehavingServer([["status": 507]])
        let sleeps = Locked<[Duration]>([])
        let remote = try Self.fileSystem(server.url, sleeps: sleeps)
        await expectCode(.remoteFull) { try await remote.write(Data("x".utf8), to: RemotePath("file")) }
        // One PUT; then a listing, for what the full server may have kept of it (removed).
        #expect(await server.stop().filter { $0.hasPrefix("PUT ") }.count == 1)
        #expect(sleeps.current.isEmpty)
    }

    @Test(
        "MKCOL refused with 403 for a folder that is there (Apache's answer when another client made it first) succeeds; with none there it is permissionDenied"
    )
    func mkcolRaceLost() async throws {
        let folder = """
            <?xml version="1.0" encoding="utf-8"?>
            <D:multistatus xmlns:D="DAV:"><D:response><D:href>/share/folder/</D:href><D:propstat><D:prop><D:resourcetype><D:collection/>\
            </D:resourcetype></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response></D:multistatus>
            """
        let sleeps = Locked<[Duration]>([])
        let lost = try await MisbehavingServer([["status": 403], ["status": 207, "body": folder]])
        try await Self.fileSystem(lost.url, sleeps: sleeps).createDirectory(at: RemotePath("folder"))
        #expect(await lost.stop().map { $0.prefix { $0 != " " } } == ["MKCOL", "PROPFIND"])

        let refused = try await MisbehavingServer([["status": 403], ["status": 404]])
        await expectCode(.permissionDenied) {
            try await Self.fileSystem(refused.url, sleeps: sleeps).createDirectory(at: RemotePath("folder"))
        }
        #expect(await refused.stop().map { $0.prefix { $0 != " " } } == ["MKCOL", "PROPFIND"])
        #expect(sleeps.current.isEmpty)
    }

    @Test("A redirected PUT is not followed, so no empty file is uploaded")
    func redirectedPut() async throws {
        let server = try await MisbehavingServer([["status": 307, "headers": ["Location": "/elsewhere/file"]]])
        let sleeps = Locked<[Duration]>([])
        let remote = try Self.fileSystem(server.url, sleeps: sleeps)
        await expectCode(.remoteIOFailed) { try await remote.write(Data("abc".utf8), to: RemotePath("file")) }
        let requests = await server.stop()
        #expect(requests.count == 1 && requests[0].hasSuffix(" 3"), "\(requests)")
    }

    @Test("A redirected GET is followed on the same server")
    func redirectedGet() async throws {
        let server = try await MisbehavingServer([
            ["status": 301, "headers": ["Location": "/share/moved"]],
            ["status": 200, "body": "moved"],
        ])
        let remote = try Self.fileSystem(server.url, sleeps: Locked([]))
        #expect(try await remote.read(RemotePath("file")) == Data("moved".utf8))
        #expect(await server.stop() == ["GET /share/file 0", "GET /share/moved 0"])
    }

    @Test("A server that never answers fails with connectionFailed after the request timeout")
    func hangingServer() async throws {
        let server = try await MisbehavingServer([["hang": true]])
        let remote = try Self.fileSystem(server.url, attempts: 2, timeout: 1, sleeps: Locked([]))
        let start = ContinuousClock.now
        await expectCode(.connectionFailed) { try await remote.read(RemotePath("file")) }
        #expect(ContinuousClock.now - start < .seconds(15))
        #expect(await server.stop().count == 2)
    }

    @Test("An unreachable server fails with connectionFailed after bounded retries")
    func unreachable() async throws {
        let server = try await MisbehavingServer([["status": 200]])
        let url = server.url
        _ = await server.stop()
        let sleeps = Locked<[Duration]>([])
        let remote = try Self.fileSystem(url, sleeps: sleeps)
        await expectCode(.connectionFailed) { try await remote.item(at: RemotePath("file")) }
        #expect(sleeps.current.count == 3)
        #expect(remote.statistics.requests == 4)
    }

    @Test("HTTPS to a server that speaks plain HTTP fails with tlsFailed")
    func tlsFailure() async throws {
        let server = try await MisbehavingServer([["status": 200]])
        var components = URLComponents(url: server.url, resolvingAgainstBaseURL: false)!
        components.scheme = "https"
        let remote = try Self.fileSystem(components.url!, attempts: 1, sleeps: Locked([]))
        await expectCode(.tlsFailed) { try await remote.item(at: RemotePath("file")) }
        _ = await server.stop()
    }

    @Test(
        "A wrong password is permissionDenied promptly, and the password appears in no message",
        arguments: WebDAVTestServers.names)
    func wrongPassword(_ server: String) async throws {
        var components = URLComponents(url: try WebDAVTestServers.url(server), resolvingAgainstBaseURL: false)!
        components.password = "wrong-password-\(UUID().uuidString.prefix(6))"
        let remote = try WebDAVFileSystem(baseURL: components.url!)
        let start = ContinuousClock.now
        do {
            _ = try await remote.contentsOfDirectory(at: .root)
            Issue.record("listing with a wrong password should fail")
        } catch let error as FolderSyncError {
            #expect(error.code == .permissionDenied, "\(error)")
            #expect(!error.description.contains(components.password!), "\(error)")
        }
        // The request count is the check; the time bound only catches URLSession's endless wait on a 401
        // (generous, so that a loaded machine does not fail it).
        #expect(remote.statistics.requests <= 2)
        #expect(ContinuousClock.now - start < .seconds(90))
    }
}
