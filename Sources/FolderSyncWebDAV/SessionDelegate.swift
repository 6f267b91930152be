import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Answers authentication challenges once and refuses redirects, so that no request hangs or loses its body.
///
/// On Linux a session without a delegate waits forever on a 401, and
/// URLSession follows a redirect of a PUT without its body (an empty file
/// would be uploaded). Here a challenge is answered once per task with the
/// configured credentials, then cancelled (the task is remembered as refused,
/// so the transport reports `permissionDenied`); every redirect is handed
/// back to the transport, which follows it itself only for GET and PROPFIND.
final class SessionDelegate: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    private let credentials: WebDAVCredentials?
    /// Tasks that were challenged already, and tasks whose credentials were refused.
    private let state = Protected((answered: Set<Int>(), refused: Set<Int>()))

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

    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
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
            completionHandler(.useCredential, URLCredential(user: credentials.user, password: credentials.password, persistence: .none))
        } else {
            state.withLock { _ = $0.refused.insert(id) }
            completionHandler(.cancelAuthenticationChallenge, nil)
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(nil)
    }
}
