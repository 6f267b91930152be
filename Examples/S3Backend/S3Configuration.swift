import FolderSync
public import FolderSyncWebDAV
public import Foundation

/// Where a shared folder lives in an S3-compatible object store, and how to reach it.
public struct S3Configuration: Sendable {
    /// The service's URL: `https://s3.eu-west-1.amazonaws.com`, `http://127.0.0.1:9000`. Only scheme, host and port are
    /// used.
    public var endpoint: URL
    public var bucket: String
    /// A key prefix the shared folder lives under (`team/sync`), or empty for the whole bucket.
    public var prefix: String
    /// The region that signs requests (`us-east-1` for most S3-compatible servers).
    public var region: String
    public var credentials: S3Credentials
    /// `true`: `endpoint/bucket/key` (MinIO, Ceph, moto); `false`: `bucket.endpoint/key` (AWS's virtual-hosted style).
    public var usesPathStyle: Bool
    public var requestTimeout: TimeInterval = 30
    public var resourceTimeout: TimeInterval = 3600
    /// Retries of timeouts, lost connections, 5xx (S3's `SlowDown` is a 503) and 429, honouring `Retry-After`.
    public var retryPolicy = WebDAVRetryPolicy()

    public init(
        endpoint: URL, bucket: String, prefix: String = "", region: String = "us-east-1",
        credentials: S3Credentials, usesPathStyle: Bool = true
    ) {
        self.endpoint = endpoint
        self.bucket = bucket
        self.prefix = prefix
        self.region = region
        self.credentials = credentials
        self.usesPathStyle = usesPathStyle
    }

    /// Reads `http(s)://ACCESS_KEY:SECRET@host:port/bucket[/prefix]` (path style; the secret percent-encoded).
    ///
    /// - Throws: ``FolderSyncError/Code/invalidConfiguration`` when the URL lacks a bucket or credentials.
    public init(url: URL, region: String = "us-east-1") throws {
        guard let parts = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let scheme = parts.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = parts.host
        else {
            throw FolderSyncError(.invalidConfiguration, "an S3 location must be an http:// or https:// URL")
        }
        guard let id = parts.user, let secret = parts.password, !id.isEmpty, !secret.isEmpty else {
            throw FolderSyncError(.invalidConfiguration, "the S3 URL names no access key and secret")
        }
        let path = parts.path.split(separator: "/").map(String.init)
        guard let bucket = path.first else {
            throw FolderSyncError(.invalidConfiguration, "the S3 URL names no bucket")
        }
        var endpoint = URLComponents()
        endpoint.scheme = scheme
        endpoint.host = host
        endpoint.port = parts.port
        self.init(
            endpoint: endpoint.url!, bucket: bucket, prefix: path.dropFirst().joined(separator: "/"), region: region,
            credentials: S3Credentials(accessKeyID: id, secretAccessKey: secret))
    }
}
