@_spi(ModelAdapter) public import FolderSync
public import Foundation

/// A ``/FolderSync/RemoteFileSystem`` held in memory, for tests of apps and backends.
///
/// Every primitive keeps the protocol's contract exactly (atomic replace,
/// publish-if-absent, idempotent create and remove), so code that passes on
/// it is checked against the contract and nothing else. ``isReadOnly``
/// simulates a remote that refuses writes.
public actor InMemoryFileSystem: RemoteFileSystem {
    private enum Node {
        case file(Data, modified: Date, version: Int)
        case directory
    }

    private var nodes: [RemotePath: Node] = [.root: .directory]
    private var nextVersion = 1
    /// When `true`, every change fails with ``/FolderSync/FolderSyncError/Code/permissionDenied``.
    public var isReadOnly = false
    /// How many operations of each kind ran, for tests that count remote work.
    public private(set) var operationCounts: [String: Int] = [:]

    /// The folder's own clock: what it dates the files written to it by.
    private let now: @Sendable () -> Date

    /// An empty, writable tree holding only the root folder, dating files by `now` (the machine's clock by default;
    /// a test's clock, for tests of what ages and silences the folder shows).
    public init(now: @escaping @Sendable () -> Date = { Date() }) {
        self.now = now
    }

    /// Sets the modification date of the file at `path`, as a folder restored from a copy, or a file untouched for
    /// a while, shows it; does nothing for a folder or a missing file.
    public func setModificationDate(_ date: Date, of path: RemotePath) {
        guard case .file(let data, _, let version) = nodes[path] else { return }
        nodes[path] = .file(data, modified: date, version: version)
    }

    /// Sets ``isReadOnly`` from outside the actor, to simulate a remote that starts or stops refusing writes.
    public func setReadOnly(_ readOnly: Bool) { isReadOnly = readOnly }

    /// Every path in the tree, folders included, sorted.
    public func allPaths() -> [RemotePath] { nodes.keys.filter { !$0.isRoot }.sorted() }

    private func count(_ operation: String) { operationCounts[operation, default: 0] += 1 }

    private func notFound(_ path: RemotePath) -> FolderSyncError {
        FolderSyncError(.remoteItemNotFound, "no such item", path: path.description)
    }

    private func checkWritable(_ path: RemotePath) throws {
        if isReadOnly { throw FolderSyncError(.permissionDenied, "the remote is read-only", path: path.description) }
    }

    private func requireParentDirectory(_ path: RemotePath) throws {
        guard case .directory = nodes[path.parent] else { throw notFound(path.parent) }
    }

    public func contentsOfDirectory(at path: RemotePath) throws -> [RemoteItem] {
        count("list")
        guard case .directory = nodes[path] else { throw notFound(path) }
        return nodes.compactMap { key, _ in
            key.parent == path && !key.isRoot ? itemInfo(key) : nil
        }
    }

    public func item(at path: RemotePath) -> RemoteItem? {
        count("stat")
        return itemInfo(path)
    }

    private func itemInfo(_ path: RemotePath) -> RemoteItem? {
        switch nodes[path] {
        case .file(let data, let modified, let version):
            RemoteItem(
                name: path.name, kind: .file, size: Int64(data.count), modificationDate: modified, etag: String(version)
            )
        case .directory: RemoteItem(name: path.name, kind: .directory)
        case nil: nil
        }
    }

    public func read(_ path: RemotePath) throws -> Data {
        count("read")
        guard case .file(let data, _, _) = nodes[path] else { throw notFound(path) }
        return data
    }

    public func write(_ data: Data, to path: RemotePath) throws {
        count("write")
        try checkWritable(path)
        try requireParentDirectory(path)
        if case .directory = nodes[path] {
            throw FolderSyncError(.remoteItemExists, "a folder is in the way", path: path.description)
        }
        nodes[path] = .file(data, modified: now(), version: nextVersion)
        nextVersion += 1
    }

    public func move(from source: RemotePath, to destination: RemotePath, replacing: Bool) throws {
        count("move")
        try checkWritable(destination)
        guard nodes[source] != nil else { throw notFound(source) }
        try requireParentDirectory(destination)
        if nodes[destination] != nil {
            guard replacing else {
                throw FolderSyncError(.remoteItemExists, "already exists", path: destination.description)
            }
            removeSubtree(destination)
        }
        for key in nodes.keys where key.hasPrefix(source) {
            let moved = key.components.dropFirst(source.components.count).reduce(destination) { $0.appending($1) }
            nodes[moved] = nodes.removeValue(forKey: key)
        }
    }

    public func remove(_ path: RemotePath) throws {
        count("remove")
        try checkWritable(path)
        removeSubtree(path)
    }

    private func removeSubtree(_ path: RemotePath) {
        for key in nodes.keys where key.hasPrefix(path) && !key.isRoot { nodes[key] = nil }
    }

    public func createDirectory(at path: RemotePath) throws {
        count("mkdir")
        var current = RemotePath.root
        for component in path.components {
            current = current.appending(component)
            switch nodes[current] {
            case .directory: continue
            case .file: throw FolderSyncError(.remoteItemExists, "a file is in the way", path: current.description)
            case nil:
                try checkWritable(current)
                nodes[current] = .directory
            }
        }
    }
}
