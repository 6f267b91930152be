import Crypto
import FolderSync
import FolderSyncWebDAV
import Foundation

/// The S3 calls the backend makes, on one bucket: HEAD, GET, PUT (optionally publish-if-absent), COPY,
/// DELETE, DeleteObjects and ListObjectsV2 with continuation. Every request is signed (``SignatureV4``)
/// and sent through FolderSyncWebDAV's HTTP transport (libcurl on Linux, URLSession elsewhere; retries with backoff,
/// typed errors).
final class S3Bucket: Sendable {
    struct ObjectInfo: Sendable {
        var size: Int64?
        var etag: String?
        var lastModified: Date?
    }

    let configuration: S3Configuration
    let transport: HTTPTransport
    /// `/bucket` (path style) or empty (virtual-hosted style), percent-encoded: every object URL starts with it.
    private let bucketPath: String
    private let origin: URL
    private let host: String

    init(_ configuration: S3Configuration) throws {
        guard let scheme = configuration.endpoint.scheme?.lowercased(), scheme == "http" || scheme == "https",
            var host = configuration.endpoint.host, !configuration.bucket.isEmpty
        else {
            throw FolderSyncError(
                .invalidConfiguration, "an S3 endpoint must be an http:// or https:// URL, with a bucket")
        }
        if !configuration.usesPathStyle { host = "\(configuration.bucket).\(host)" }
        var parts = URLComponents()
        parts.scheme = scheme
        parts.host = host
        parts.port = configuration.endpoint.port
        guard let origin = parts.url else {
            throw FolderSyncError(.invalidConfiguration, "the S3 endpoint is not a valid URL")
        }
        self.configuration = configuration
        self.origin = origin
        self.host = configuration.endpoint.port.map { "\(host):\($0)" } ?? host
        bucketPath = configuration.usesPathStyle ? "/" + SignatureV4.uriEncode(configuration.bucket) : ""
        let signer = SignatureV4(credentials: configuration.credentials, region: configuration.region)
        let signedHost = self.host
        transport = HTTPTransport(
            baseURL: origin, credentials: nil, retry: configuration.retryPolicy,
            requestTimeout: configuration.requestTimeout, resourceTimeout: configuration.resourceTimeout,
            authorize: { request in
                let payloadHash: String =
                    switch request.body {
                    case .none: SignatureV4.payloadHash(Data())
                    case .data(let data): SignatureV4.payloadHash(data)
                    case .file: SignatureV4.unsignedPayload
                    }
                let url = URLComponents(url: request.url, resolvingAgainstBaseURL: false)
                let query = url?.queryItems?.map { ($0.name, $0.value ?? "") } ?? []
                return signer.authorization(
                    method: request.method, host: signedHost,
                    encodedPath: url?.percentEncodedPath ?? "/",
                    query: query, headers: request.headers,
                    payloadHash: payloadHash, date: Date())
            })
    }

    // MARK: Keys

    /// The object key of a file at `path` (the configured prefix, then the path's components).
    func key(for path: RemotePath) -> String {
        let prefix = configuration.prefix.split(separator: "/").map(String.init)
        return (prefix + path.components).joined(separator: "/")
    }

    /// The prefix every key inside the folder `path` starts with (ends with `/`, or is empty for the bucket's root).
    func folderPrefix(for path: RemotePath) -> String {
        let key = key(for: path)
        return key.isEmpty ? "" : key + "/"
    }

    private func url(key: String, query: [(String, String)] = []) -> URL {
        let path =
            key.isEmpty
            ? (bucketPath.isEmpty ? "/" : bucketPath)
            : bucketPath + "/" + SignatureV4.uriEncode(key, keepingSlash: true)
        var text = origin.absoluteString + path
        if !query.isEmpty { text += "?" + SignatureV4.canonicalQuery(query) }
        return URL(string: text)!
    }

    // MARK: Objects

    /// HEAD: the object's size and version tag, or `nil` when there is no such object.
    func head(_ key: String, path: RemotePath) async throws -> ObjectInfo? {
        let response = try await transport.send(HTTPRequest(method: "HEAD", url: url(key: key)), path: path)
        if response.status == 404 { return nil }
        guard (200..<300).contains(response.status) else { throw error(response, "HEAD", path: path) }
        return ObjectInfo(
            size: response.header("Content-Length").flatMap(Int64.init),
            etag: response.header("ETag")?.trimmingCharacters(in: CharacterSet(charactersIn: "\"")),
            lastModified: response.header("Last-Modified").flatMap(Self.httpDate))
    }

    /// GET into memory, or into `file` (streamed); `nil` when there is no such object. - Parameter maximumSize: A
    /// larger object is refused with `corruptFile` by its `Content-Length` (or as soon as more bytes came), without
    /// downloading the rest.
    func get(_ key: String, path: RemotePath, downloadingTo file: URL? = nil, maximumSize: Int? = nil) async throws
        -> HTTPResponse?
    {
        let response = try await transport.send(
            HTTPRequest(method: "GET", url: url(key: key)), path: path, downloadingTo: file,
            maximumBodySize: maximumSize)
        if response.status == 404 {
            if let file = response.bodyFile { try? FileManager.default.removeItem(at: file) }
            return nil
        }
        guard (200..<300).contains(response.status) else {
            let body = response.bodyFile.flatMap { try? Data(contentsOf: $0) } ?? response.body
            if let file = response.bodyFile { try? FileManager.default.removeItem(at: file) }
            throw error(status: response.status, body: body, "GET", path: path)
        }
        return response
    }

    /// PUT: one request, so the object appears whole or not at all (S3 never shows a partial upload).
    ///
    /// With `ifAbsent`, sends `If-None-Match: *`: the server stores the object only if the key is free and
    /// answers 412 otherwise (`false` is returned). 409 means a concurrent conditional write to the same key
    /// is in flight; the request is repeated until one of them has won.
    @discardableResult
    func put(_ key: String, body: HTTPRequest.Body, ifAbsent: Bool = false, path: RemotePath) async throws -> Bool {
        var headers = ["Content-Type": "application/octet-stream"]
        if ifAbsent { headers["If-None-Match"] = "*" }
        for attempt in 1...5 {
            let response = try await transport.send(
                HTTPRequest(method: "PUT", url: url(key: key), headers: headers, body: body), path: path)
            switch response.status {
            case 200..<300: return true
            case 412 where ifAbsent: return false
            case 409 where ifAbsent && attempt < 5: try await Task.sleep(for: .milliseconds(50 * attempt))
            default: throw error(response, "PUT", path: path)
            }
        }
        return false
    }

    /// Server-side copy (the destination appears whole); the source must exist.
    func copy(from source: String, to destination: String, path: RemotePath) async throws {
        let copySource = bucketPath.isEmpty ? "/" + SignatureV4.uriEncode(configuration.bucket) : bucketPath
        let request = HTTPRequest(
            method: "PUT", url: url(key: destination),
            headers: ["x-amz-copy-source": copySource + "/" + SignatureV4.uriEncode(source, keepingSlash: true)])
        let response = try await transport.send(request, path: path)
        // A copy can fail after its 200 status line: the error is then in the body.
        guard (200..<300).contains(response.status), S3XML.error(response.body) == nil else {
            throw error(response, "COPY", path: path)
        }
    }

    /// DELETE of one object; deleting a missing key succeeds.
    func delete(_ key: String, path: RemotePath) async throws {
        let response = try await transport.send(HTTPRequest(method: "DELETE", url: url(key: key)), path: path)
        guard (200..<300).contains(response.status) || response.status == 404 else {
            throw error(response, "DELETE", path: path)
        }
    }

    /// DeleteObjects: up to 1,000 keys per request.
    func delete(keys: [String], path: RemotePath) async throws {
        for start in stride(from: 0, to: keys.count, by: 1000) {
            let batch = keys[start..<min(start + 1000, keys.count)]
            let objects = batch.map { "<Object><Key>\(Self.xmlEscaped($0))</Key></Object>" }.joined()
            let body = Data(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Delete><Quiet>true</Quiet>\(objects)</Delete>".utf8)
            let request = HTTPRequest(
                method: "POST", url: url(key: "", query: [("delete", "")]),
                headers: [
                    "Content-Type": "application/xml",
                    "Content-MD5": Data(Insecure.MD5.hash(data: body)).base64EncodedString(),
                ],
                body: .data(body))
            let response = try await transport.send(request, path: path)
            // With <Quiet>, the answer lists only the keys that could not be deleted.
            guard (200..<300).contains(response.status), S3XML.error(response.body) == nil else {
                throw error(response, "DeleteObjects", path: path)
            }
        }
    }

    /// ListObjectsV2 of every key under `prefix`, following continuation tokens; with `delimiter`, one level only.
    ///
    /// - Parameter limit: stop after this many keys and prefixes (a page is at most 1,000 anyway).
    func list(prefix: String, delimiter: String? = "/", limit: Int? = nil, path: RemotePath) async throws -> S3ListPage
    {
        var result = S3ListPage()
        var token: String?
        repeat {
            var query: [(String, String)] = [("list-type", "2"), ("prefix", prefix)]
            if let delimiter { query.append(("delimiter", delimiter)) }
            if let limit { query.append(("max-keys", String(limit))) }
            if let token { query.append(("continuation-token", token)) }
            let response = try await transport.send(
                HTTPRequest(method: "GET", url: url(key: "", query: query)), path: path)
            guard (200..<300).contains(response.status) else { throw error(response, "ListObjectsV2", path: path) }
            let page = try S3XML.listPage(response.body, path: path)
            result.objects += page.objects
            result.prefixes += page.prefixes
            token = page.nextContinuationToken
            if let limit, result.objects.count + result.prefixes.count >= limit { break }
        } while token != nil
        return result
    }

    // MARK: Errors

    private func error(_ response: HTTPResponse, _ operation: String, path: RemotePath) -> FolderSyncError {
        error(status: response.status, body: response.body, operation, path: path)
    }

    /// The ``FolderSyncError`` naming the cause of a failed request, with S3's error code (never a credential).
    private func error(status: Int, body: Data, _ operation: String, path: RemotePath) -> FolderSyncError {
        let s3 = S3XML.error(body)
        let what = "\(operation) answered HTTP \(status)" + (s3.map { " \($0.code): \($0.message)" } ?? "")
        let at = path.description
        switch (status, s3?.code) {
        case (401, _), (403, _): return FolderSyncError(.permissionDenied, "\(what)", path: at)
        case (404, "NoSuchBucket"):
            return FolderSyncError(.invalidConfiguration, "\(what): the bucket does not exist", path: at)
        case (404, _): return FolderSyncError(.remoteItemNotFound, "\(what): no such object", path: at)
        case (412, _): return FolderSyncError(.remoteItemExists, "\(what): already exists", path: at)
        case (_, "EntityTooLarge"), (_, "QuotaExceeded"), (507, _), (413, _):
            return FolderSyncError(.remoteFull, what, path: at)
        case (300..<400, _):
            return FolderSyncError(
                .remoteIOFailed, "\(what): the bucket is elsewhere (another region or endpoint)", path: at)
        default: return FolderSyncError(.remoteIOFailed, what, path: at)
        }
    }

    private static func xmlEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "'", with: "&apos;")
    }

    private static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text)
    }
}
