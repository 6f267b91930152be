package import FolderSync
package import Foundation

/// Sends requests with authorization, retries and typed errors, reusing connections.
///
/// Package-visible so that other backends in this package (the S3 example) share its handling of
/// HTTP's traps (challenges, redirects that drop bodies, waits that must cost no CPU), its retries and
/// its typed errors.
///
/// One attempt is carried out by an ``HTTPEngine``: on Linux libcurl, called directly (``CurlEngine``),
/// because URLSession there spins on two cores while a request waits for its answer; elsewhere URLSession
/// (``URLSessionEngine``).
package final class HTTPTransport: Sendable {
    /// Headers to add to one attempt of a request (a signature that covers its date), computed just before it is sent.
    package typealias Authorizer = @Sendable (HTTPRequest) -> [String: String]

    private let engine: any HTTPEngine
    private let credentials: WebDAVCredentials?
    private let retry: WebDAVRetryPolicy
    /// How long an attempt may wait for the server (to connect, or for the next bytes) before it fails.
    package let requestTimeout: TimeInterval
    private let authorize: Authorizer?
    private let origin: (scheme: String?, host: String?, port: Int?)
    /// `host:port`, for messages about the connection.
    private let server: String
    /// Requests sent (every attempt counts) and retries, for ``WebDAVFileSystem/statistics``.
    package let counters = Locked(WebDAVStatistics())

    package init(
        baseURL: URL, credentials: WebDAVCredentials?, retry: WebDAVRetryPolicy,
        requestTimeout: TimeInterval, resourceTimeout: TimeInterval, authorize: Authorizer? = nil
    ) {
        let timeouts = HTTPTimeouts(request: requestTimeout, resource: resourceTimeout)
        engine = HTTPTransport.defaultEngine(timeouts: timeouts, credentials: credentials)
        self.credentials = credentials
        self.retry = retry
        self.requestTimeout = requestTimeout
        self.authorize = authorize
        origin = (baseURL.scheme?.lowercased(), baseURL.host?.lowercased(), baseURL.port)
        server = (baseURL.host ?? "the server") + (baseURL.port.map { ":\($0)" } ?? "")
    }

    /// libcurl where its headers were found at build time (Linux), else URLSession.
    ///
    /// `FOLDERSYNC_HTTP_ENGINE=urlsession` picks URLSession on Linux too: a diagnostic switch, kept so that a
    /// measurement can show what it costs (a test compares the CPU time of a wait on both).
    private static func defaultEngine(timeouts: HTTPTimeouts, credentials: WebDAVCredentials?) -> any HTTPEngine {
        #if canImport(CCurl)
        if ProcessInfo.processInfo.environment["FOLDERSYNC_HTTP_ENGINE"] != "urlsession" {
            return CurlEngine(timeouts: timeouts)
        }
        #endif
        return URLSessionEngine(timeouts: timeouts, credentials: credentials)
    }

    /// Sends `request`, retrying transient failures, following same-origin redirects of GET and PROPFIND.
    ///
    /// Answers with any status come back as they are, except those retried
    /// (429, 5xx but 501/505/507) while attempts remain; failures without an
    /// answer are thrown as typed errors naming `path`.
    /// - Parameter maximumBodySize: For a read of a bounded file: a successful answer whose body is larger is
    ///   refused (``/FolderSync/FolderSyncError/Code/corruptFile``) as soon as its `Content-Length` or its bytes
    ///   show it, without downloading the rest.
    /// - Parameter retriesLostAttempts: `false` for a request that must not be sent again as it is after an attempt
    ///   lost in transit (the server may still be carrying that attempt out): such a failure is thrown at once as a
    ///   ``LostAttempt``, and the caller sends another request (``WebDAVFileSystem``'s `PUT` picks a new name).
    package func send(
        _ request: HTTPRequest, path: RemotePath, downloadingTo download: URL? = nil,
        maximumBodySize: Int? = nil, retriesLostAttempts: Bool = true
    ) async throws -> HTTPResponse {
        var request = request
        var attempt = 1
        var redirects = 0
        var lostAttempt = false
        while true {
            // A request started by a task already cancelled would not be stopped by the cancellation handler.
            if Task.isCancelled {
                throw FolderSyncError(.cancelled, "the request was cancelled", path: path.description)
            }
            let response: HTTPResponse
            do {
                counters.withLock { $0.requests += 1 }
                response = try await engine.perform(
                    prepared(request), downloadingTo: download,
                    maximumBodySize: maximumBodySize.map(Int64.init))
            } catch let failure as TransportFailure {
                if !retriesLostAttempts, failure.isTransient {
                    throw LostAttempt(error: failure.error(path: path, server: server, timeout: requestTimeout))
                }
                guard failure.isTransient, attempt < retry.maximumAttempts else {
                    if case .bodyTooLarge(let size) = failure, let maximumBodySize {
                        try FolderSyncError.checkSize(size, maximumSize: maximumBodySize, path: path.description)
                    }
                    throw failure.error(path: path, server: server, timeout: requestTimeout)
                }
                try await wait(afterAttempt: attempt, retryAfter: nil)
                attempt += 1
                lostAttempt = true
                continue
            }
            if let target = redirectTarget(of: response, for: request), redirects < 3 {
                redirects += 1
                request.url = target
                continue
            }
            if Self.isTransient(status: response.status), attempt < retry.maximumAttempts {
                if let file = response.bodyFile { try? FileManager.default.removeItem(at: file) }
                try await wait(
                    afterAttempt: attempt, retryAfter: WebDAVRetryPolicy.retryAfter(response.header("Retry-After")))
                attempt += 1
                continue
            }
            var result = response
            result.followedLostAttempt = lostAttempt
            return result
        }
    }

    /// An attempt lost in transit, of a request sent with `retriesLostAttempts: false`: `error` says how.
    package struct LostAttempt: Error {
        package let error: FolderSyncError
    }

    /// Waits before the next attempt of a request that failed in a way that may pass (also used by callers
    /// that find an answer unusable, such as a cut-off listing), counting it as a retry.
    package func wait(afterAttempt attempt: Int, retryAfter: Duration?) async throws {
        counters.withLock { $0.retries += 1 }
        do {
            try await retry.sleep(retry.delay(afterAttempt: attempt, retryAfter: retryAfter))
        } catch {
            throw FolderSyncError(.cancelled, "the request was cancelled while waiting to retry")
        }
    }

    /// Attempts in all that a request may take, the first included.
    package var maximumAttempts: Int { retry.maximumAttempts }

    /// 429, 423 and server errors that may pass; 501 (not implemented), 505 (version) and 507 (full) will not.
    ///
    /// 423 (Locked) is what servers built on Go's x/net/webdav (rclone) answer
    /// to the second of two concurrent MOVEs to one destination: after a wait
    /// the retry gets the real answer (412 when the first one published).
    static func isTransient(status: Int) -> Bool {
        status == 429 || status == 423 || (500...599).contains(status) && ![501, 505, 507].contains(status)
    }

    /// Where a redirect of a request that may be re-sent safely points, when it stays on the same server.
    private func redirectTarget(of response: HTTPResponse, for request: HTTPRequest) -> URL? {
        guard [301, 302, 303, 307, 308].contains(response.status), request.mayFollowRedirects,
            let location = response.header("Location"),
            let target = URL(string: location, relativeTo: request.url)?.absoluteURL,
            target.scheme?.lowercased() == origin.scheme, target.host?.lowercased() == origin.host,
            target.port == origin.port
        else { return nil }
        if let file = response.bodyFile { try? FileManager.default.removeItem(at: file) }
        return target
    }

    /// The request as sent: its headers, the basic authorization (sent with every request, so that none costs a
    /// 401 round trip) and the authorizer's headers.
    private func prepared(_ request: HTTPRequest) -> HTTPRequest {
        var prepared = request
        if let credentials { prepared.headers["Authorization"] = credentials.basicAuthorization }
        for (name, value) in authorize?(request) ?? [:] { prepared.headers[name] = value }
        return prepared
    }
}

/// How long an attempt may wait: ``request`` for a connection or for the next bytes, ``resource`` in all.
struct HTTPTimeouts: Sendable {
    var request: TimeInterval
    var resource: TimeInterval
}

/// Carries out one attempt of a request: no retries, no redirects followed, an answer with any status returned.
protocol HTTPEngine: Sendable {
    /// Sends `request` (authorization included) once.
    /// - Parameters:
    ///   - download: Where to stream the body, instead of memory.
    ///   - maximumBodySize: A successful answer with a larger body fails with ``TransportFailure/bodyTooLarge(_:)``,
    ///     as soon as its size is known, without reading the rest.
    /// - Throws: ``TransportFailure`` when no complete answer came.
    func perform(_ request: HTTPRequest, downloadingTo download: URL?, maximumBodySize: Int64?) async throws
        -> HTTPResponse
}

/// What happened to a request that got no usable HTTP answer, before it is turned into a
/// ``/FolderSync/FolderSyncError``.
enum TransportFailure: Error, Equatable {
    /// The server asked for credentials again after it was given them (URLSession only: libcurl returns the 401).
    case credentialsRefused
    /// What came back is not HTTP.
    case noAnswer
    /// No connection or no bytes within the request timeout.
    case timedOut
    /// The connection was refused or could not be made.
    case cannotConnect
    /// The server's host name does not resolve.
    case cannotResolve
    /// The connection closed before the whole answer came (or before the request was sent).
    case connectionLost
    /// The TLS handshake failed; the reason in a few words, when known.
    case tls(String?)
    case cancelled
    /// A successful answer's body is larger than the request allowed: its size, or the bytes seen before stopping.
    case bodyTooLarge(Int64)
    /// A local file could not be read (an upload) or written (a download).
    case localFile(String)
    /// Anything else, in a few words.
    case other(String)

    /// Timeouts and dropped or refused connections may pass; TLS and authentication failures will not.
    var isTransient: Bool {
        switch self {
        case .timedOut, .cannotConnect, .connectionLost: true
        default: false
        }
    }

    /// The typed error for a failure of a request about `path` sent to `server` (`host:port`).
    func error(path: RemotePath, server: String, timeout: TimeInterval) -> FolderSyncError {
        let at = path.description
        switch self {
        case .credentialsRefused:
            return FolderSyncError(.permissionDenied, "\(server) refused the credentials (HTTP 401)", path: at)
        case .noAnswer:
            return FolderSyncError(.remoteIOFailed, "\(server) answered something that is not HTTP", path: at)
        case .timedOut:
            return FolderSyncError(
                .connectionFailed, "\(server) did not answer within \(Self.seconds(timeout))", path: at)
        case .cannotConnect:
            return FolderSyncError(
                .connectionFailed, "cannot connect to \(server): the connection was refused or failed", path: at)
        case .cannotResolve:
            return FolderSyncError(
                .connectionFailed, "cannot find the server \(server): its name does not resolve", path: at)
        case .connectionLost:
            return FolderSyncError(
                .connectionFailed, "the connection to \(server) was lost before the answer was complete", path: at)
        case .tls(let reason):
            return FolderSyncError(
                .tlsFailed, "the TLS connection to \(server) failed" + (reason.map { ": \($0)" } ?? ""), path: at)
        case .cancelled:
            return FolderSyncError(.cancelled, "the request was cancelled", path: at)
        case .bodyTooLarge(let size):
            return FolderSyncError(
                .corruptFile, "is at least \(size) bytes, more than such a file can hold; not read", path: at)
        case .localFile(let reason):
            return FolderSyncError(.localStoreFailed, reason, path: at)
        case .other(let reason):
            return FolderSyncError(.connectionFailed, "the request to \(server) failed: \(reason)", path: at)
        }
    }

    /// `30 s`, `1.5 s`.
    private static func seconds(_ interval: TimeInterval) -> String {
        interval == interval.rounded() ? "\(Int(interval)) s" : String(format: "%.1f s", interval)
    }
}
