import Foundation

/// One HTTP request as the file system builds it; the transport adds authorization.
struct HTTPRequest: Sendable {
    enum Body: Sendable {
        case none
        case data(Data)
        /// Streamed from a local file, never loaded whole.
        case file(URL)
    }

    var method: String
    var url: URL
    var headers: [String: String] = [:]
    var body: Body = .none

    /// GET, HEAD and PROPFIND may be followed to a redirect target; anything that sends content or changes state may not.
    var mayFollowRedirects: Bool { ["GET", "HEAD", "PROPFIND"].contains(method) }
}

/// An HTTP answer: status, headers with lower-cased names, and the body (or the local file it was streamed to).
struct HTTPResponse: Sendable {
    var status: Int
    var headers: [String: String]
    var body: Data
    /// Where a streamed GET body was saved, for downloads.
    var bodyFile: URL?
    /// Whether an earlier attempt of this request failed without an answer: it may have been carried out.
    var followedLostAttempt = false

    func header(_ name: String) -> String? { headers[name.lowercased()] }
}
