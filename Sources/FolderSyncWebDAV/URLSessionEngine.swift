import FolderSync
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One attempt of a request through one URLSession (ephemeral, no cache, no cookies), so connections are reused.
///
/// The engine of platforms without libcurl's headers (Apple's). On Linux it is not used: there URLSession
/// keeps polling a socket for writing after libcurl stopped asking, so every wait for an answer spins on
/// two cores (see ``CurlEngine``). A bound on the body size is checked after the transfer here.
final class URLSessionEngine: HTTPEngine {
    private let session: URLSession
    private let delegate: SessionDelegate
    private let timeouts: HTTPTimeouts

    init(timeouts: HTTPTimeouts, credentials: WebDAVCredentials?) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.urlCredentialStorage = nil
        configuration.httpCookieStorage = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = timeouts.request
        configuration.timeoutIntervalForResource = timeouts.resource
        configuration.httpMaximumConnectionsPerHost = 4
        delegate = SessionDelegate(credentials: credentials)
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        self.timeouts = timeouts
    }

    deinit { session.finishTasksAndInvalidate() }

    func perform(_ request: HTTPRequest, downloadingTo download: URL?, maximumBodySize: Int64?) async throws
        -> HTTPResponse
    {
        let response = try await send(request, downloadingTo: download)
        if let maximumBodySize, (200..<300).contains(response.status) {
            let size =
                response.bodyFile.flatMap {
                    try? FileManager.default.attributesOfItem(atPath: $0.path)[.size] as? NSNumber
                }
                .map(\.int64Value) ?? Int64(response.body.count)
            if size > maximumBodySize {
                if let file = response.bodyFile { try? FileManager.default.removeItem(at: file) }
                throw TransportFailure.bodyTooLarge(size)
            }
        }
        return response
    }

    private func urlRequest(for request: HTTPRequest) -> URLRequest {
        var urlRequest = URLRequest(
            url: request.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeouts.request)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        return urlRequest
    }

    /// One attempt: a data, upload or download task, awaited with cancellation.
    private func send(_ request: HTTPRequest, downloadingTo download: URL?) async throws -> HTTPResponse {
        var urlRequest = urlRequest(for: request)
        let delegate = self.delegate
        let taskBox = Locked<URLSessionTask?>(nil)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, any Error>) in
                let finish: @Sendable (URLSessionTask?, Data?, URL?, URLResponse?, (any Error)?) -> Void = {
                    task, data, file, response, error in
                    let refused = task.map { delegate.wasRefused($0) } ?? false
                    if let task { delegate.forget(task) }
                    if refused {
                        if let file { try? FileManager.default.removeItem(at: file) }
                        continuation.resume(throwing: TransportFailure.credentialsRefused)
                    } else if let error {
                        continuation.resume(throwing: Self.failure(error))
                    } else if let http = response as? HTTPURLResponse {
                        var headers: [String: String] = [:]
                        for (name, value) in http.allHeaderFields {
                            headers[String(describing: name).lowercased()] = String(describing: value)
                        }
                        continuation.resume(
                            returning: HTTPResponse(
                                status: http.statusCode, headers: headers,
                                body: data ?? Data(), bodyFile: file))
                    } else {
                        continuation.resume(throwing: TransportFailure.noAnswer)
                    }
                }
                let task: URLSessionTask
                let box = Locked<URLSessionTask?>(nil)
                if let download {
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
                } else {
                    switch request.body {
                    case .none:
                        task = session.dataTask(with: urlRequest) { data, response, error in
                            finish(box.withLock { $0 }, data, nil, response, error)
                        }
                    case .data(let data):
                        urlRequest.setValue(String(data.count), forHTTPHeaderField: "Content-Length")
                        task = session.uploadTask(with: urlRequest, from: data) { data, response, error in
                            finish(box.withLock { $0 }, data, nil, response, error)
                        }
                    case .file(let file):
                        let size =
                            (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?
                            .int64Value ?? 0
                        urlRequest.setValue(String(size), forHTTPHeaderField: "Content-Length")
                        task = session.uploadTask(with: urlRequest, fromFile: file) { data, response, error in
                            finish(box.withLock { $0 }, data, nil, response, error)
                        }
                    }
                }
                box.withLock { $0 = task }
                taskBox.withLock { $0 = task }
                task.resume()
            }
        } onCancel: {
            taskBox.withLock { $0 }?.cancel()
        }
    }

    /// The transport's failure for an error of URLSession, in words rather than URLError's user info.
    static func failure(_ error: any Error) -> TransportFailure {
        if error is CancellationError { return .cancelled }
        guard let error = error as? URLError else { return .other("the request could not be sent") }
        switch error.code {
        case .secureConnectionFailed: return .tls("the handshake failed")
        case .serverCertificateHasBadDate, .serverCertificateNotYetValid:
            return .tls("the server's certificate is out of date")
        case .serverCertificateUntrusted, .serverCertificateHasUnknownRoot:
            return .tls("the server's certificate is not trusted")
        case .clientCertificateRejected, .clientCertificateRequired:
            return .tls("the server wants a client certificate")
        case .appTransportSecurityRequiresSecureConnection: return .tls("App Transport Security requires HTTPS")
        case .userAuthenticationRequired, .userCancelledAuthentication: return .credentialsRefused
        case .cancelled: return .cancelled
        case _ where mentionsTLS(error): return .tls(nil)
        case .timedOut: return .timedOut
        case .cannotConnectToHost, .notConnectedToInternet: return .cannotConnect
        case .cannotFindHost, .dnsLookupFailed: return .cannotResolve
        case .networkConnectionLost: return .connectionLost
        case .badServerResponse: return .noAnswer
        default: return .other("URL error \(error.code.rawValue)")
        }
    }

    /// On Linux, URLSession reports many TLS failures as "unknown" with OpenSSL's message (for example
    /// "SSL routines::wrong version number" when the server speaks plain HTTP).
    private static func mentionsTLS(_ error: URLError) -> Bool {
        let text =
            (error as NSError).localizedDescription + " "
            + String(describing: (error as NSError).userInfo[NSUnderlyingErrorKey] ?? "")
        return ["SSL", "TLS", "certificate"].contains { text.localizedCaseInsensitiveContains($0) }
    }
}

/// Answers authentication challenges once and refuses redirects, so that no request hangs or loses its body.
///
/// On Linux a session without a delegate waits forever on a 401, and
/// URLSession follows a redirect of a PUT without its body (an empty file
/// would be uploaded). Here a challenge is answered once per task with the
/// configured credentials, then cancelled (the task is remembered as refused,
/// so the transport reports `permissionDenied`); every redirect is handed
/// back to the transport, which follows it itself only for GET and PROPFIND.
final class SessionDelegate: NSObject, URLSessionTaskDelegate, Sendable {
    private let credentials: WebDAVCredentials?
    /// Tasks that were challenged already, and tasks whose credentials were refused.
    private let state = Locked((answered: Set<Int>(), refused: Set<Int>()))

    init(credentials: WebDAVCredentials?) {
        self.credentials = credentials
    }

    /// Whether the server refused this task's credentials (it ended with a cancelled challenge).
    func wasRefused(_ task: URLSessionTask) -> Bool {
        state.withLock { $0.refused.contains(task.taskIdentifier) }
    }

    func forget(_ task: URLSessionTask) {
        state.withLock {
            $0.answered.remove(task.taskIdentifier)
            $0.refused.remove(task.taskIdentifier)
        }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        #if canImport(Darwin)
        let method = challenge.protectionSpace.authenticationMethod
        if method == NSURLAuthenticationMethodServerTrust || method == NSURLAuthenticationMethodClientCertificate {
            completionHandler(.performDefaultHandling, nil)
            return
        }
        #endif
        let id = task.taskIdentifier
        let firstTime = state.withLock { $0.answered.insert(id).inserted }
        if firstTime, challenge.previousFailureCount == 0, let credentials {
            completionHandler(
                .useCredential,
                URLCredential(user: credentials.user, password: credentials.password, persistence: .none))
        } else {
            state.withLock { _ = $0.refused.insert(id) }
            completionHandler(.cancelAuthenticationChallenge, nil)
        }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
