public import FolderSync
public import Foundation

/// A ``/FolderSync/RemoteFileSystem`` that speaks WebDAV (RFC 4918) to a server directly, over HTTP or HTTPS.
///
/// Listings are `PROPFIND Depth: 1`; writes are a `PUT` under a temporary
/// name in the same collection, then `MOVE` with `Overwrite: T`, so readers
/// see the old or the new file; "publish if absent" is `MOVE` with
/// `Overwrite: F`, which the server refuses with 412 when the target exists.
/// Requests go through libcurl on Linux and URLSession elsewhere, connections are reused; transient
/// failures are retried (``WebDAVRetryPolicy``); credentials are sent as
/// HTTP basic authentication and never logged.
///
/// ```swift
/// let remote = try WebDAVFileSystem(baseURL: URL(string: "https://dav.example.com/sync/")!,
///                                   credentials: .fromEnvironment())
/// ```
public final class WebDAVFileSystem: RemoteFileSystem {
    /// Everything that decides how the file system talks to its server.
    public struct Configuration: Sendable {
        /// The URL of the shared folder (the tree's root). User information in it is used as credentials and removed.
        public var baseURL: URL
        /// Who to authenticate as; `nil` uses the user information of ``baseURL``, if any, else no authentication.
        public var credentials: WebDAVCredentials?
        /// How long one attempt of a request may wait, to connect or for the next bytes of the answer, before it
        /// fails and is retried (``retryPolicy``): 30 s by default.
        ///
        /// Waiting costs no CPU. A server that accepts connections and never answers holds a request for about
        /// `retryPolicy.maximumAttempts × requestTimeout` plus the backoff waits: about 2 minutes by default. The tools
        /// (`notes`, `foldersync`) take it from `FOLDERSYNC_WEBDAV_TIMEOUT` (seconds), through ``RemoteLocation``.
        public var requestTimeout: TimeInterval = 30
        /// How long one transfer may take in all, however long the file.
        public var resourceTimeout: TimeInterval = 3600
        /// When and how often transient failures are retried; four attempts with backoff by default.
        public var retryPolicy = WebDAVRetryPolicy()
        /// Whether credentials may be sent over clear `http://` to a host other than this machine; `false` by default.
        ///
        /// Basic authentication over `http://` shows the password to anyone on the path, so a configuration with
        /// credentials and an `http://` URL is refused with ``/FolderSync/FolderSyncError/Code/invalidConfiguration``
        /// unless this is set, or the host is the loopback interface (`localhost`, `127.0.0.0/8`, `::1`), where the
        /// request never leaves the machine. The tools set it from `FOLDERSYNC_WEBDAV_ALLOW_HTTP=1`.
        public var allowsInsecureCredentials = false

        /// A configuration with default timeouts and retries.
        /// - Parameters:
        ///   - baseURL: The shared folder's `http://` or `https://` URL.
        ///   - credentials: Who to authenticate as; `nil` takes them from `baseURL`'s user information, if any.
        public init(baseURL: URL, credentials: WebDAVCredentials? = nil) {
            self.baseURL = baseURL
            self.credentials = credentials
        }
    }

    let address: WebDAVAddress
    let transport: HTTPTransport

    /// The share's URL (with a trailing slash, without credentials).
    public var baseURL: URL { address.baseURL }

    /// HTTP requests sent so far.
    public var statistics: WebDAVStatistics { transport.counters.withLock { $0 } }

    /// How long one attempt of a request may wait for the server (``Configuration/requestTimeout``).
    public var requestTimeout: TimeInterval { transport.requestTimeout }

    /// A file system on the share the configuration names; it makes no request until used. - Throws:
    /// ``/FolderSync/FolderSyncError/Code/invalidConfiguration`` when the URL is not a valid `http` or `https` URL, or
    /// when it would send credentials over clear `http://` to another machine without
    /// ``Configuration/allowsInsecureCredentials``.
    public init(configuration: Configuration) throws {
        var credentials = configuration.credentials
        if credentials == nil, let user = configuration.baseURL.user {
            let decodedUser = user.removingPercentEncoding ?? user
            let password = configuration.baseURL.password.map { $0.removingPercentEncoding ?? $0 } ?? ""
            credentials = WebDAVCredentials(user: decodedUser, password: password)
        }
        address = try WebDAVAddress(baseURL: configuration.baseURL)
        if credentials != nil, !configuration.allowsInsecureCredentials, address.baseURL.scheme?.lowercased() == "http",
            !Self.isLoopback(address.baseURL.host)
        {
            throw FolderSyncError(
                .invalidConfiguration,
                "refusing to send the WebDAV password in clear over http:// to \(address.baseURL.host ?? "the server"): "
                    + "use https://, or allow it explicitly (allowsInsecureCredentials, FOLDERSYNC_WEBDAV_ALLOW_HTTP=1)",
                path: address.baseURL.absoluteString)
        }
        transport = HTTPTransport(
            baseURL: address.baseURL, credentials: credentials, retry: configuration.retryPolicy,
            requestTimeout: configuration.requestTimeout, resourceTimeout: configuration.resourceTimeout)
    }

    /// A file system on the share at `baseURL`, with default timeouts and retries.
    /// - Parameters:
    ///   - baseURL: The shared folder's `http://` or `https://` URL; user information in it serves as credentials.
    ///   - credentials: Who to authenticate as, in place of the URL's user information.
    ///   - allowsInsecureCredentials: Whether credentials may go over clear `http://` to another machine
    ///     (``Configuration/allowsInsecureCredentials``).
    /// - Throws: ``/FolderSync/FolderSyncError/Code/invalidConfiguration`` when the URL is not a valid `http` or
    ///   `https` URL, or would send credentials in clear to another machine without `allowsInsecureCredentials`.
    public convenience init(
        baseURL: URL, credentials: WebDAVCredentials? = nil, allowsInsecureCredentials: Bool = false
    ) throws {
        var configuration = Configuration(baseURL: baseURL, credentials: credentials)
        configuration.allowsInsecureCredentials = allowsInsecureCredentials
        try self.init(configuration: configuration)
    }

    /// Whether `host` is this machine's loopback interface: `localhost`, an address in 127.0.0.0/8, or `::1`.
    static func isLoopback(_ host: String?) -> Bool {
        guard var host = host?.lowercased() else { return false }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host == "localhost" || host == "::1" || host == "0:0:0:0:0:0:0:1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    // MARK: Listing

    public func contentsOfDirectory(at path: RemotePath) async throws -> [RemoteItem] {
        let listing = try await propfind(path, depth: "1")
        guard let listing else { throw FolderSyncError(.remoteItemNotFound, "no such folder", path: path.description) }
        var items: [RemoteItem] = []
        for (components, entry) in listing.entries {
            if components == path.components {
                guard entry.isCollection else {
                    throw FolderSyncError(.remoteItemNotFound, "not a folder", path: path.description)
                }
                continue
            }
            guard components.count == path.components.count + 1, components.starts(with: path.components),
                let name = components.last, Self.isUsableName(name)
            else { continue }
            items.append(Self.item(named: name, entry, serverDate: listing.serverDate))
        }
        return items
    }

    public func item(at path: RemotePath) async throws -> RemoteItem? {
        guard let listing = try await propfind(path, depth: "0") else { return nil }
        let entries = listing.entries
        guard let entry = entries.first(where: { $0.0 == path.components })?.1 ?? entries.first?.1 else { return nil }
        return Self.item(named: path.name, entry, serverDate: listing.serverDate)
    }

    /// The entries of a PROPFIND with their paths and the server's clock when it answered (its `Date` header),
    /// or `nil` when the server says the item does not exist.
    ///
    /// An answer that cannot be parsed (cut off by a dropped connection, or garbled) is asked for again, as
    /// transient failures are, before it is an error.
    private func propfind(_ path: RemotePath, depth: String) async throws -> (
        entries: [([String], MultistatusEntry)], serverDate: Date?
    )? {
        let body = Data(
            """
            <?xml version="1.0" encoding="utf-8"?>
            <D:propfind xmlns:D="DAV:"><D:prop><D:resourcetype/><D:getcontentlength/><D:getetag/><D:getlastmodified/></D:prop></D:propfind>
            """.utf8)
        let request = HTTPRequest(
            method: "PROPFIND", url: address.url(for: path, directory: depth == "1"),
            headers: ["Depth": depth, "Content-Type": "application/xml; charset=utf-8"], body: .data(body))
        var attempt = 1
        while true {
            let response = try await transport.send(request, path: path)
            if response.status == 404 || response.status == 410 { return nil }
            if [400, 409].contains(response.status), try await liesUnderFileOrNothing(path) { return nil }
            guard response.status == 207 else { throw WebDAVStatus.error(response.status, "PROPFIND", path: path) }
            do {
                let entries = try MultistatusParser.parse(response.body, path: path).compactMap { entry in
                    address.path(forHref: entry.href).map { ($0, entry) }
                }
                return (entries, response.header("Date").flatMap(HTTPDate.parse))
            } catch  where attempt < transport.maximumAttempts {
                try await transport.wait(afterAttempt: attempt, retryAfter: nil)
                attempt += 1
            }
        }
    }

    /// Whether `path` cannot exist because an ancestor is a file or is missing.
    /// Apache answers 400 rather than 404 for a path under a file.
    private func liesUnderFileOrNothing(_ path: RemotePath) async throws -> Bool {
        guard !path.isRoot else { return false }
        guard let parent = try await item(at: path.parent) else { return true }
        return parent.kind == .file
    }

    private static func item(named name: String, _ entry: MultistatusEntry, serverDate: Date?) -> RemoteItem {
        RemoteItem(
            name: name, kind: entry.isCollection ? .directory : .file,
            size: entry.isCollection ? nil : entry.contentLength,
            modificationDate: entry.lastModified, etag: entry.etag ?? derivedVersionTag(entry, serverDate: serverDate))
    }

    /// How much older than the server's clock a file's last modification must be for its date and size to
    /// serve as a version tag (``derivedVersionTag(_:serverDate:)``).
    static let settledAge: TimeInterval = 2

    /// A version tag for a server that lists no ETag (nginx), from `getlastmodified` and `getcontentlength`,
    /// or `nil` when those could miss a change.
    ///
    /// Both are coarse: dates have whole seconds, so a file replaced within the second it was written, by one
    /// of the same size, would keep its date and size. The tag is therefore given only to a file whose last
    /// modification is at least ``settledAge`` older than the server's own clock when it answered (its `Date`
    /// header): any later replacement is stamped with a later second, so its tag differs. (The margin covers
    /// the coarse clock file systems stamp with.) A fresher file, or an answer without a `Date`, gets no tag,
    /// and sync reads that file again. This assumes the server's clock does not go back, and that the
    /// server's storage is stamped by the server's clock (not a remote file system with a clock of its own).
    static func derivedVersionTag(_ entry: MultistatusEntry, serverDate: Date?) -> String? {
        guard !entry.isCollection, let modified = entry.lastModified, let size = entry.contentLength, let serverDate,
            serverDate.timeIntervalSince(modified) >= settledAge
        else { return nil }
        return "modified-\(Int64(modified.timeIntervalSince1970.rounded(.down)))-size-\(size)"
    }

    /// Names a ``RemotePath`` can hold; anything else a server lists is ignored rather than trusted.
    private static func isUsableName(_ name: String) -> Bool {
        // Byte by byte: a String's contains(_:) of Foundation goes through NSString on Linux.
        !name.isEmpty && name != "." && name != ".." && !name.utf8.contains(UInt8(ascii: "/")) && !name.utf8.contains(0)
    }

    // MARK: Reading

    public func read(_ path: RemotePath) async throws -> Data {
        let response = try await get(path)
        guard WebDAVStatus.isSuccess(response.status) else {
            throw WebDAVStatus.error(response.status, "GET", path: path)
        }
        return response.body
    }

    /// One GET, refused by its `Content-Length` (or, without one, as soon as more than `maximumSize` bytes have come):
    /// the rest of a larger file is not downloaded, and no request is spent on a size check first.
    public func read(_ path: RemotePath, maximumSize: Int) async throws -> Data {
        let response = try await get(path, maximumSize: maximumSize)
        guard WebDAVStatus.isSuccess(response.status) else {
            throw WebDAVStatus.error(response.status, "GET", path: path)
        }
        try FolderSyncError.checkSize(Int64(response.body.count), maximumSize: maximumSize, path: path.description)
        return response.body
    }

    /// A GET, asked again at once when it finds nothing.
    ///
    /// wsgidav and rclone carry out `MOVE` with `Overwrite: T` as a delete
    /// followed by a rename, so a reader arriving in between gets a 404 for a
    /// file that is only being replaced. A second look, right away, finds the
    /// new file; a file that is really absent costs one request more.
    func get(_ path: RemotePath, downloadingTo file: URL? = nil, maximumSize: Int? = nil) async throws -> HTTPResponse {
        var response = HTTPResponse(status: 0, headers: [:], body: Data())
        for _ in 0..<WebDAVFileSystem.lookupsForMissingFile {
            response = try await transport.send(
                HTTPRequest(method: "GET", url: address.url(for: path)), path: path,
                downloadingTo: file, maximumBodySize: maximumSize)
            guard response.status == 404 else { return response }
        }
        return response
    }

    static let lookupsForMissingFile = 2

    // MARK: Changing

    public func write(_ data: Data, to path: RemotePath) async throws {
        try await putThenMove(.data(data), to: path)
    }

    /// `PUT` under a temporary name next to `path`, then `MOVE` over it: readers never see a partial file.
    ///
    /// A `PUT` lost in transit is sent again under a new temporary name, never the same one: the server may still
    /// be writing the lost one (wsgidav keeps the bytes of a body cut short), and a late torn write must not land
    /// on the name about to be moved into place (seen through a proxy that tears uploads).
    func putThenMove(_ body: HTTPRequest.Body, to path: RemotePath) async throws {
        guard !path.isRoot else { throw FolderSyncError(.remoteItemExists, "the root is a folder", path: "/") }
        var attempt = 1
        var temporary: RemotePath
        var response: HTTPResponse
        while true {
            temporary = path.parent.appending(TemporaryName.make(for: path.name))
            let put = HTTPRequest(
                method: "PUT", url: address.url(for: temporary),
                headers: ["Content-Type": "application/octet-stream"], body: body)
            do {
                response = try await transport.send(put, path: path, retriesLostAttempts: false)
                break
            } catch let lost as HTTPTransport.LostAttempt {
                guard attempt < transport.maximumAttempts else { throw lost.error }
                try await transport.wait(afterAttempt: attempt, retryAfter: nil)
                attempt += 1
            }
        }
        guard WebDAVStatus.isSuccess(response.status) else {
            if response.status >= 500 { await removeLeftovers(of: temporary) }
            // RFC 4918 says 409; nginx answers 500 and rclone 404 to a PUT into a missing folder: say what it means.
            if response.status == 404 || response.status >= 500, !path.parent.isRoot,
                try await item(at: path.parent) == nil
            {
                throw FolderSyncError(
                    .remoteItemNotFound, "PUT answered HTTP \(response.status): the parent folder does not exist",
                    path: path.parent.description)
            }
            throw WebDAVStatus.error(response.status, "PUT", path: response.status == 409 ? path.parent : path)
        }
        do {
            try await move(from: temporary, to: path, replacing: true)
        } catch {
            try? await remove(temporary)
            throw error
        }
    }

    /// Removes what a PUT the server failed (5xx) may have left under its temporary name: the server's partial file
    /// (wsgidav keeps the bytes of a body it could not store) and files it named after it (nginx writes
    /// `<name>.<number>` and leaves them when its disk is full). A share that is full would otherwise fill up with
    /// every retry, and stop every device. Best effort: what stays is a temporary that vacuum removes in time.
    private func removeLeftovers(of temporary: RemotePath) async {
        guard let items = try? await contentsOfDirectory(at: temporary.parent) else { return }
        for item in items where item.name.hasPrefix(temporary.name) {
            try? await remove(temporary.parent.appending(item.name))
        }
    }

    public func move(from source: RemotePath, to destination: RemotePath, replacing: Bool) async throws {
        var response = try await sendMove(from: source, to: destination, replacing: replacing, folders: false)
        if WebDAVStatus.isSuccess(response.status) { return }
        if [400, 409].contains(response.status), try await item(at: source)?.kind == .directory {
            // nginx moves a folder only when both URLs end with a slash (409 otherwise).
            response = try await sendMove(from: source, to: destination, replacing: replacing, folders: true)
            if WebDAVStatus.isSuccess(response.status) { return }
        }
        if response.followedLostAttempt, [404, 412].contains(response.status),
            try await lostMoveSucceeded(from: source, to: destination)
        {
            return
        }
        if response.status != 412, try await item(at: source) == nil {
            // Servers differ here (rclone answers 403 for a missing source): absence is what matters.
            throw WebDAVStatus.error(404, "MOVE", path: source)
        }
        switch response.status {
        case 409: throw WebDAVStatus.error(409, "MOVE", path: destination.parent)
        case 412 where replacing:
            throw FolderSyncError(
                .remoteIOFailed, "MOVE answered HTTP 412 although overwriting was allowed",
                path: destination.description)
        default: throw WebDAVStatus.error(response.status, "MOVE", path: destination)
        }
    }

    private func sendMove(from source: RemotePath, to destination: RemotePath, replacing: Bool, folders: Bool)
        async throws -> HTTPResponse
    {
        let request = HTTPRequest(
            method: "MOVE", url: address.url(for: source, directory: folders),
            headers: [
                "Destination": address.url(for: destination, directory: folders).absoluteString,
                "Overwrite": replacing ? "T" : "F",
            ])
        return try await transport.send(request, path: destination)
    }

    /// After an attempt lost in transit, a 412 or 404 may mean the lost attempt did the move: the source is gone
    /// and the destination exists. (Our sources are unique temporaries, so nobody else moved them.)
    private func lostMoveSucceeded(from source: RemotePath, to destination: RemotePath) async throws -> Bool {
        let sourceGone = try await item(at: source) == nil
        let destinationThere = try await item(at: destination) != nil
        return sourceGone && destinationThere
    }

    /// `DELETE`, first without a trailing slash (the caller does not say whether `path` is a folder); when the server
    /// refuses that (nginx answers 409 for a folder named without its slash, Apache 400 below a file), a PROPFIND
    /// says what is there: nothing (done), or a folder, deleted again by its folder URL.
    public func remove(_ path: RemotePath) async throws {
        guard !path.isRoot else {
            throw FolderSyncError(.permissionDenied, "the root of the share cannot be removed", path: "/")
        }
        var response = try await transport.send(HTTPRequest(method: "DELETE", url: address.url(for: path)), path: path)
        if response.status == 404 || response.status == 410 { return }
        if [400, 409].contains(response.status) {
            guard let existing = try await item(at: path) else { return }
            if existing.kind == .directory {
                response = try await transport.send(
                    HTTPRequest(method: "DELETE", url: address.url(for: path, directory: true)), path: path)
                if response.status == 404 || response.status == 410 { return }
            }
        }
        // 207 means some members could not be deleted.
        guard WebDAVStatus.isSuccess(response.status), response.status != 207 else {
            throw WebDAVStatus.error(response.status, "DELETE", path: path)
        }
    }

    public func createDirectory(at path: RemotePath) async throws {
        guard !path.isRoot else { return }
        let response = try await transport.send(
            HTTPRequest(method: "MKCOL", url: address.url(for: path, directory: true)), path: path)
        switch response.status {
        case 200..<300: return
        case 403, 405: try await requireFolder(at: path, afterMKCOL: response.status)
        case 409:
            // A parent is missing: create the parents first, then this folder. A folder of the root answered 409 is the
            // shared folder itself missing on the server (a volume emptied under the share's path): it is not made.
            guard path.components.count > 1 else {
                throw FolderSyncError(
                    .remoteUnavailable, "the shared folder is not there on the server (MKCOL answered HTTP 409)",
                    path: address.baseURL.path)
            }
            try await createDirectory(at: path.parent)
            let again = try await transport.send(
                HTTPRequest(method: "MKCOL", url: address.url(for: path, directory: true)), path: path)
            if WebDAVStatus.isSuccess(again.status) { return }
            guard [403, 405].contains(again.status) else { throw WebDAVStatus.error(again.status, "MKCOL", path: path) }
            try await requireFolder(at: path, afterMKCOL: again.status)
        default:
            throw WebDAVStatus.error(response.status, "MKCOL", path: path)
        }
    }

    /// After a MKCOL refused with `status`: fine if a folder is there. 405 says something exists (a file is in the
    /// way). Apache answers 403, not 405, when another client made the folder between its check and its `mkdir`
    /// (`EEXIST`: devices registering at the same moment); a 403 with no folder there is a refusal.
    private func requireFolder(at path: RemotePath, afterMKCOL status: Int) async throws {
        let existing = try await item(at: path)
        if existing?.kind == .file {
            throw FolderSyncError(.remoteItemExists, "a file is in the way", path: path.description)
        }
        if status == 403 && existing == nil { throw WebDAVStatus.error(status, "MKCOL", path: path) }
    }
}
