/// Counts of the HTTP work a ``WebDAVFileSystem`` did, for tests and tuning (how many requests an idle sync costs).
public struct WebDAVStatistics: Sendable, Hashable {
    /// HTTP requests sent, every attempt and followed redirect included.
    public var requests = 0
    /// Attempts that were repeated after a transient failure.
    public var retries = 0

    /// Zero counts.
    public init() {}
}
