package import Foundation

/// One HTTP request as the file system builds it; the transport adds authorization.
package struct HTTPRequest: Sendable {
    package enum Body: Sendable {
        case none
        case data(Data)
        /// Streamed from a local file, never loaded whole.
        case file(URL)
    }

    package var method: String
    package var url: URL
    package var headers: [String: String] = [:]
    package var body: Body = .none

    package init(method: String, url: URL, headers: [String: String] = [:], body: Body = .none) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    /// GET, HEAD and PROPFIND may be followed to a redirect target; anything that sends content or changes state may
    /// not.
    var mayFollowRedirects: Bool { ["GET", "HEAD", "PROPFIND"].contains(method) }
}

/// An HTTP answer: status, headers with lower-cased names, and the body (or the local file it was streamed to).
package struct HTTPResponse: Sendable {
    package var status: Int
    package var headers: [String: String]
    package var body: Data
    /// Where a streamed GET body was saved, for downloads.
    package var bodyFile: URL?
    /// Whether an earlier attempt of this request failed without an answer: it may have been carried out.
    package var followedLostAttempt = false

    package func header(_ name: String) -> String? { headers[name.lowercased()] }
}
