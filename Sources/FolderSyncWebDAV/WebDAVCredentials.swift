public import Foundation

/// A user name and password for HTTP basic authentication.
///
/// The password never appears in a description, a log line or an error
/// message: `print(credentials)` shows the user name only.
public struct WebDAVCredentials: Sendable, Hashable, CustomStringConvertible {
    /// The user name sent with every request.
    public var user: String
    /// The password; kept out of descriptions and messages.
    public var password: String

    /// The environment variables ``fromEnvironment(_:)`` reads, so apps and tools agree on them.
    public static let userVariable = "FOLDERSYNC_WEBDAV_USER"
    /// The environment variable holding the password; unset means an empty password.
    public static let passwordVariable = "FOLDERSYNC_WEBDAV_PASSWORD"

    /// Credentials for HTTP basic authentication as `user`.
    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    /// The credentials in `FOLDERSYNC_WEBDAV_USER` and `FOLDERSYNC_WEBDAV_PASSWORD`, or `nil` when the user is unset.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment)
        -> WebDAVCredentials?
    {
        guard let user = environment[userVariable], !user.isEmpty else { return nil }
        return WebDAVCredentials(user: user, password: environment[passwordVariable] ?? "")
    }

    /// The value of an `Authorization` header, sent with every request so that no request costs a 401 round trip.
    var basicAuthorization: String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    public var description: String { "WebDAVCredentials(user: \(user), password: <redacted>)" }
}
