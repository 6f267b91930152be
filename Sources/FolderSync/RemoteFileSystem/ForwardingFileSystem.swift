public import Foundation

/// A remote that passes every request to another one: the base of a wrapper around any backend (counting,
/// caching, throttling, logging) and of the test decorators in `FolderSyncTesting`.
///
/// Subclass it and override only the requests to change; the rest reach `base` unchanged, the streaming ones
/// (``download(_:toLocalFile:)``, ``upload(fromLocalFile:to:)``, ``readPieces(of:size:_:)``) included, which a
/// wrapper written from scratch easily leaves to the protocol's defaults and so loses streaming.
/// ``willForward(_:path:)`` runs before every request, for wrappers that act on all of them alike. A subclass that
/// changes what ``download(_:toLocalFile:)`` does overrides ``readPieces(of:size:_:)`` the same way (whole
/// stores are read through it), or sets `transfersThroughReadAndWrite` so that all of them go through its own
/// ``read(_:)`` and ``write(_:to:)``. Change notifications are not forwarded: a wrapper that should pass them
/// on adopts ``RemoteChangeNotifying`` and forwards `base`'s (or watching falls back to polling).
///
/// `@unchecked Sendable`: an `open` class cannot be checked `Sendable`; its own stored properties are `let`s of
/// `Sendable` types, and a subclass keeps its state the same way (or in a `Locked`).
open class ForwardingFileSystem: RemoteFileSystem, @unchecked Sendable {
    /// The kind of a request, for ``willForward(_:path:)``.
    public enum Request: String, Sendable, Hashable, CaseIterable {
        /// ``contentsOfDirectory(at:)``.
        case list
        /// ``item(at:)``.
        case stat
        /// ``read(_:)`` and ``read(_:maximumSize:)``.
        case read
        /// ``write(_:to:)``.
        case write
        /// ``move(from:to:replacing:)``.
        case move
        /// ``remove(_:)``.
        case remove
        /// ``createDirectory(at:)``.
        case createDirectory
        /// ``download(_:toLocalFile:)`` and ``readPieces(of:size:_:)``.
        case download
        /// ``upload(fromLocalFile:to:)``.
        case upload
    }

    /// The remote every request is passed to.
    public let base: any RemoteFileSystem
    private let transfersThroughReadAndWrite: Bool
    private let hook: (@Sendable (Request, RemotePath) async throws -> Void)?

    /// Forwards to `base`; `transfersThroughReadAndWrite` sends downloads and uploads through ``read(_:)`` and
    /// ``write(_:to:)``.
    public init(_ base: any RemoteFileSystem, transfersThroughReadAndWrite: Bool = false) {
        self.base = base
        self.transfersThroughReadAndWrite = transfersThroughReadAndWrite
        hook = nil
    }

    /// Forwards to `base`, running `willForward` before every request (see ``willForward(_:path:)``): a wrapper that
    /// needs nothing else needs no subclass.
    public init(
        _ base: any RemoteFileSystem, willForward: @escaping @Sendable (Request, RemotePath) async throws -> Void
    ) {
        self.base = base
        transfersThroughReadAndWrite = false
        hook = willForward
    }

    /// Called before every request reaches `base`; throwing fails the request. The default runs the `willForward`
    /// closure given at initialization, if any.
    open func willForward(_ request: Request, path: RemotePath) async throws {
        try await hook?(request, path)
    }

    open func contentsOfDirectory(at path: RemotePath) async throws -> [RemoteItem] {
        try await willForward(.list, path: path)
        return try await base.contentsOfDirectory(at: path)
    }

    /// Through ``contentsOfDirectory(at:)``, so that a subclass that changes listings changes this one too; a subclass
    /// that changes neither can forward it to `base` instead, for its cheaper listing.
    open func namesOfDirectory(at path: RemotePath) async throws -> [RemoteItem] {
        try await contentsOfDirectory(at: path)
    }

    open func item(at path: RemotePath) async throws -> RemoteItem? {
        try await willForward(.stat, path: path)
        return try await base.item(at: path)
    }

    open func read(_ path: RemotePath) async throws -> Data {
        try await willForward(.read, path: path)
        return try await base.read(path)
    }

    open func read(_ path: RemotePath, maximumSize: Int) async throws -> Data {
        guard !transfersThroughReadAndWrite else {
            let data = try await read(path)
            try FolderSyncError.checkSize(Int64(data.count), maximumSize: maximumSize, path: path.description)
            return data
        }
        try await willForward(.read, path: path)
        return try await base.read(path, maximumSize: maximumSize)
    }

    open func write(_ data: Data, to path: RemotePath) async throws {
        try await willForward(.write, path: path)
        try await base.write(data, to: path)
    }

    open func move(from source: RemotePath, to destination: RemotePath, replacing: Bool) async throws {
        try await willForward(.move, path: destination)
        try await base.move(from: source, to: destination, replacing: replacing)
    }

    open func moveAside(_ source: RemotePath, to destination: RemotePath) async throws {
        try await willForward(.move, path: destination)
        try await base.moveAside(source, to: destination)
    }

    open func remove(_ path: RemotePath) async throws {
        try await willForward(.remove, path: path)
        try await base.remove(path)
    }

    open func createDirectory(at path: RemotePath) async throws {
        try await willForward(.createDirectory, path: path)
        try await base.createDirectory(at: path)
    }

    open func download(_ path: RemotePath, toLocalFile url: URL) async throws {
        guard !transfersThroughReadAndWrite else { return try await read(path).write(to: url, options: .atomic) }
        try await willForward(.download, path: path)
        try await base.download(path, toLocalFile: url)
    }

    /// `base`'s streaming read, announced to ``willForward(_:path:)`` as a download (what the protocol's default does).
    open func readPieces(of path: RemotePath, size: Int, _ body: (Data) throws -> Void) async throws {
        guard !transfersThroughReadAndWrite else {
            let data = try await read(path)
            var offset = data.startIndex
            while offset < data.endIndex {
                let end = data.index(offset, offsetBy: size, limitedBy: data.endIndex) ?? data.endIndex
                try body(data[offset..<end])
                offset = end
            }
            return
        }
        try await willForward(.download, path: path)
        try await base.readPieces(of: path, size: size, body)
    }

    open func upload(fromLocalFile url: URL, to path: RemotePath) async throws {
        guard !transfersThroughReadAndWrite else { return try await write(try Data(contentsOf: url), to: path) }
        try await willForward(.upload, path: path)
        try await base.upload(fromLocalFile: url, to: path)
    }
}
