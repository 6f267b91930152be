package import FolderSync
package import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends requests over one URLSession (so connections are reused), with authorization, retries and typed errors.
///
/// Package-visible so that other backends in this package (the S3 example) share its handling of
/// URLSession's traps (challenges, redirects that drop bodies), its retries and its typed errors.
package final class HTTPTransport: Sendable {
    /// Headers to add to one attempt of a request (a signature that covers its date), computed just before it is sent.
    package typealias Authorizer = @Sendable (HTTPRequest) -> [String: String]

    private let session: URLSession
    private let delegate: SessionDelegate
    private let credentials: WebDAVCredentials?
    private let retry: WebDAVRetryPolicy
    private let requestTimeout: TimeInterval
    private let authorize: Authorizer?
    private let origin: (scheme: String?, host: String?, port: Int?)
    /// Requests sent (every attempt counts) and retries, for ``WebDAVFileSystem/statistics``.
    package let counters = Protected(WebDAVStatistics())

    package init(baseURL: URL, credentials: WebDAVCredentials?, retry: WebDAVRetryPolicy,
                 requestTimeout: TimeInterval, resourceTimeout: TimeInterval, authorize: Authorizer? = nil) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.urlCredentialStorage = nil
        configuration.httpCookieStorage = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = requestTimeout
        configuration.timeoutIntervalForResource = resourceTimeout
        configuration.httpMaximumConnectionsPerHost = 4
        delegate = SessionDelegate(credentials: credentials)
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        self.credentials = credentials
        self.retry = retry
        self.requestTimeout = requestTimeout
        self.authorize = authorize
        origin = (baseURL.scheme?.lowercased(), baseURL.host?.lowercased(), baseURL.port)
    }

    deinit { session.finishTasksAndInvalidate() }

    /// Sends `request`, retrying transient failures, following same-origin redirects of GET and PROPFIND.
    ///
    /// Answers with any status come back as they are, except those retried
    /// (429, 5xx but 501/505/507) while attempts remain; failures without an
    /// answer are thrown as typed errors naming `path`.
    package func send(_ request: HTTPRequest, path: RemotePath, downloadingTo download: URL? = nil) async throws -> HTTPResponse {
        var request = request
        var attempt = 1
        var redirects = 0
        var lostAttempt = false
        while true {
            // A request started by a task already cancelled would not be stopped by the cancellation handler.
            if Task.isCancelled { throw FolderSyncError(.cancelled, "the request was cancelled", path: path.description) }
            let response: HTTPResponse
            do {
                response = try await sendOnce(request, downloadingTo: download)
            } catch let failure as TransportFailure {
                guard failure.isTransient, attempt < retry.maximumAttempts else {
                    throw failure.error(path: path)
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
                try await wait(afterAttempt: attempt, retryAfter: WebDAVRetryPolicy.retryAfter(response.header("Retry-After")))
                attempt += 1
                continue
            }
            var result = response
            result.followedLostAttempt = lostAttempt
            return result
        }
    }

    private func wait(afterAttempt attempt: Int, retryAfter: Duration?) async throws {
        counters.withLock { $0.retries += 1 }
        do {
            try await retry.sleep(retry.delay(afterAttempt: attempt, retryAfter: retryAfter))
        } catch {
            throw FolderSyncError(.cancelled, "the request was cancelled while waiting to retry")
        }
    }

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
              target.port == origin.port else { return nil }
        if let file = response.bodyFile { try? FileManager.default.removeItem(at: file) }
        return target
    }

    private func urlRequest(for request: HTTPRequest) -> URLRequest {
        var urlRequest = URLRequest(url: request.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: requestTimeout)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        if let credentials { urlRequest.setValue(credentials.basicAuthorization, forHTTPHeaderField: "Authorization") }
        for (name, value) in authorize?(request) ?? [:] { urlRequest.setValue(value, forHTTPHeaderField: name) }
        return urlRequest
    }

    /// One attempt: a data, upload or download task, awaited with cancellation.
    private func sendOnce(_ request: HTTPRequest, downloadingTo download: URL?) async throws -> HTTPResponse {
        counters.withLock { $0.requests += 1 }
        var urlRequest = urlRequest(for: request)
        let delegate = self.delegate
        let taskBox = Protected<URLSessionTask?>(nil)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, any Error>) in
                let finish: @Sendable (URLSessionTask?, Data?, URL?, URLResponse?, (any Error)?) -> Void = { task, data, file, response, error in
                    let refused = task.map { delegate.wasRefused($0) } ?? false
                    if let task { delegate.forget(task) }
                    if refused {
                        if let file { try? FileManager.default.removeItem(at: file) }
                        continuation.resume(throwing: TransportFailure.credentialsRefused)
                    } else if let error {
                        continuation.resume(throwing: TransportFailure(error))
                    } else if let http = response as? HTTPURLResponse {
                        var headers: [String: String] = [:]
                        for (name, value) in http.allHeaderFields {
                            headers[String(describing: name).lowercased()] = String(describing: value)
                        }
                        continuation.resume(returning: HTTPResponse(status: http.statusCode, headers: headers,
                                                                    body: data ?? Data(), bodyFile: file))
                    } else {
                        continuation.resume(throwing: TransportFailure.noAnswer)
                    }
                }
                let task: URLSessionTask
                if let download {
                    let box = Protected<URLSessionTask?>(nil)
                    task = session.downloadTask(with: urlRequest) { location, response, error in
                        // The temporary file is deleted when this handler returns: move it next to its destination now.
                        var moved: URL?
                        var failure = error
                        if let location, error == nil {
                            do {
                                try? FileManager.default.removeItem(at: download)
                                try FileManager.default.moveItem(at: location, to: download)
                                moved = download
                            } catch {
                                failure = error
                            }
                        }
                        finish(box.withLock { $0 }, nil, moved, response, failure)
                    }
                    box.withLock { $0 = task }
                } else {
                    switch request.body {
                    case .none:
                        let box = Protected<URLSessionTask?>(nil)
                        task = session.dataTask(with: urlRequest) { data, response, error in
                            finish(box.withLock { $0 }, data, nil, response, error)
                        }
                        box.withLock { $0 = task }
                    case .data(let data):
                        urlRequest.setValue(String(data.count), forHTTPHeaderField: "Content-Length")
                        let box = Protected<URLSessionTask?>(nil)
                        task = session.uploadTask(with: urlRequest, from: data) { data, response, error in
                            finish(box.withLock { $0 }, data, nil, response, error)
                        }
                        box.withLock { $0 = task }
                    case .file(let file):
                        let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.int64Value ?? 0
                        urlRequest.setValue(String(size), forHTTPHeaderField: "Content-Length")
                        let box = Protected<URLSessionTask?>(nil)
                        task = session.uploadTask(with: urlRequest, fromFile: file) { data, response, error in
                            finish(box.withLock { $0 }, data, nil, response, error)
                        }
                        box.withLock { $0 = task }
                    }
                }
                taskBox.withLock { $0 = task }
                task.resume()
            }
        } onCancel: {
            taskBox.withLock { $0 }?.cancel()
        }
    }
}

/// What happened to a request that got no HTTP answer, before it is turned into a ``/FolderSync/FolderSyncError``.
enum TransportFailure: Error {
    case credentialsRefused
    case noAnswer
    case url(URLError)
    case other(any Error)

    init(_ error: any Error) {
        if let error = error as? URLError { self = .url(error) } else { self = .other(error) }
    }

    /// Timeouts and dropped or refused connections may pass; TLS and authentication failures will not.
    var isTransient: Bool {
        guard case .url(let error) = self else { return false }
        return [.timedOut, .cannotConnectToHost, .networkConnectionLost, .notConnectedToInternet].contains(error.code)
    }

    /// On Linux, URLSession reports many TLS failures as "unknown" with OpenSSL's message (for example
    /// "SSL routines::wrong version number" when the server speaks plain HTTP).
    private static func mentionsTLS(_ error: URLError) -> Bool {
        let text = (error as NSError).localizedDescription + " " + String(describing: (error as NSError).userInfo[NSUnderlyingErrorKey] ?? "")
        return ["SSL", "TLS", "certificate"].contains { text.localizedCaseInsensitiveContains($0) }
    }

    func error(path: RemotePath) -> FolderSyncError {
        let where_ = path.description
        switch self {
        case .credentialsRefused:
            return FolderSyncError(.permissionDenied, "the server refused the credentials (HTTP 401)", path: where_)
        case .noAnswer:
            return FolderSyncError(.remoteIOFailed, "the server's answer is not HTTP", path: where_)
        case .other(let error):
            if error is CancellationError { return FolderSyncError(.cancelled, "the request was cancelled", path: where_) }
            return FolderSyncError(.connectionFailed, "the request failed", path: where_, underlying: error)
        case .url(let error):
            let reason = "URLError \(error.code.rawValue)"
            switch error.code {
            case .secureConnectionFailed, .serverCertificateHasBadDate, .serverCertificateUntrusted,
                 .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid, .clientCertificateRejected,
                 .clientCertificateRequired, .appTransportSecurityRequiresSecureConnection:
                return FolderSyncError(.tlsFailed, "the TLS connection to the server failed (\(reason))", path: where_)
            case .userAuthenticationRequired, .userCancelledAuthentication:
                return FolderSyncError(.permissionDenied, "the server refused the credentials (\(reason))", path: where_)
            case .cancelled:
                return FolderSyncError(.cancelled, "the request was cancelled", path: where_)
            case _ where Self.mentionsTLS(error):
                return FolderSyncError(.tlsFailed, "the TLS connection to the server failed (\(reason))", path: where_, underlying: error)
            case .timedOut:
                return FolderSyncError(.connectionFailed, "the server did not answer in time (\(reason))", path: where_)
            default:
                return FolderSyncError(.connectionFailed, "the server cannot be reached (\(reason))", path: where_, underlying: error)
            }
        }
    }
}
