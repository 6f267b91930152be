public import FolderSync
public import FolderSyncWebDAV
public import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A ``RemoteFileSystem`` on an S3 bucket, so that every default operation step works on S3.
///
/// S3 has objects, not files and folders: a file at `a/b/c` is the object with key `prefix/a/b/c`; a folder
/// is every key that starts with `a/b/`, plus an empty "folder marker" object `a/b/` that
/// ``createDirectory(at:)`` writes so that an empty folder exists. Listings are `ListObjectsV2` with
/// delimiter `/`. A PUT replaces an object atomically (readers get the old or the new bytes), so
/// ``write(_:to:)`` is one PUT, with no temporary and no rename. S3 has no rename: ``move(from:to:replacing:)``
/// copies then deletes, and "publish if absent" (`replacing: false`) is a PUT with `If-None-Match: *`.
///
/// The operation subclasses (``S3SynchronizationOperation`` and the others) skip what this type must do
/// to look like a file system (folder markers, copies): see the example's README.
public final class S3FileSystem: RemoteFileSystem {
    let bucket: S3Bucket

    public init(configuration: S3Configuration) throws {
        bucket = try S3Bucket(configuration)
    }

    /// HTTP requests sent so far (every attempt counts), and retries.
    public var statistics: WebDAVStatistics { bucket.transport.counters.withLock { $0 } }

    // MARK: Reading

    public func contentsOfDirectory(at path: RemotePath) async throws -> [RemoteItem] {
        let prefix = bucket.folderPrefix(for: path)
        let listing = try await bucket.list(prefix: prefix, path: path)
        var items: [RemoteItem] = []
        var exists = path.isRoot
        for object in listing.objects {
            let name = String(object.key.dropFirst(prefix.count))
            if name.isEmpty {
                exists = true
                continue
            }  // the folder's own marker
            items.append(
                RemoteItem(
                    name: name, kind: .file, size: object.size, modificationDate: object.lastModified, etag: object.etag
                ))
        }
        for folder in listing.prefixes {
            let name = String(folder.dropFirst(prefix.count).dropLast())
            guard !name.isEmpty else { continue }
            items.append(RemoteItem(name: name, kind: .directory))
        }
        guard exists || !items.isEmpty else {
            throw FolderSyncError(.remoteItemNotFound, "no such folder", path: path.description)
        }
        return items
    }

    public func item(at path: RemotePath) async throws -> RemoteItem? {
        if path.isRoot { return RemoteItem(name: "", kind: .directory) }
        if let info = try await bucket.head(bucket.key(for: path), path: path) {
            return RemoteItem(
                name: path.name, kind: .file, size: info.size, modificationDate: info.lastModified, etag: info.etag)
        }
        return try await containsAnything(below: path) ? RemoteItem(name: path.name, kind: .directory) : nil
    }

    public func read(_ path: RemotePath) async throws -> Data {
        guard let response = try await bucket.get(bucket.key(for: path), path: path) else {
            throw FolderSyncError(.remoteItemNotFound, "no such file", path: path.description)
        }
        return response.body
    }

    /// One GET, refused by its `Content-Length` when larger than `maximumSize`: no HEAD first, and the rest of a
    /// larger object is not downloaded.
    public func read(_ path: RemotePath, maximumSize: Int) async throws -> Data {
        guard let response = try await bucket.get(bucket.key(for: path), path: path, maximumSize: maximumSize) else {
            throw FolderSyncError(.remoteItemNotFound, "no such file", path: path.description)
        }
        try FolderSyncError.checkSize(Int64(response.body.count), maximumSize: maximumSize, path: path.description)
        return response.body
    }

    /// Streams the object into a temporary file next to `url`, then renames it over `url`.
    public func download(_ path: RemotePath, toLocalFile url: URL) async throws {
        let temporary = url.deletingLastPathComponent().appendingPathComponent(
            TemporaryName.make(for: url.lastPathComponent))
        defer { try? FileManager.default.removeItem(at: temporary) }
        guard let response = try await bucket.get(bucket.key(for: path), path: path, downloadingTo: temporary) else {
            throw FolderSyncError(.remoteItemNotFound, "no such file", path: path.description)
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: temporary.path)[.size] as? NSNumber)?.int64Value
        if let expected = response.header("Content-Length").flatMap(Int64.init), size != expected {
            throw FolderSyncError(
                .remoteIOFailed, "the download stopped early (\(size ?? 0) of \(expected) bytes)",
                path: path.description)
        }
        let fd = open(temporary.path, O_RDONLY)
        if fd >= 0 {
            _ = fsync(fd)
            close(fd)
        }
        guard rename(temporary.path, url.path) == 0 else {
            throw FolderSyncError(.localStoreFailed, "cannot move the download into place", path: url.path)
        }
    }

    // MARK: Changing

    public func write(_ data: Data, to path: RemotePath) async throws {
        guard !path.isRoot else { throw FolderSyncError(.remoteItemExists, "the root is a folder", path: "/") }
        try await bucket.put(bucket.key(for: path), body: .data(data), path: path)
    }

    /// Streams the local file in one PUT (`UNSIGNED-PAYLOAD`: the body is not hashed before sending).
    public func upload(fromLocalFile url: URL, to path: RemotePath) async throws {
        guard FileManager.default.isReadableFile(atPath: url.path) else {
            throw FolderSyncError(.localStoreFailed, "cannot read the file to upload", path: url.path)
        }
        try await bucket.put(bucket.key(for: path), body: .file(url), path: path)
    }

    /// Files: a server-side copy then a delete, or, without replacing, a GET and a PUT with `If-None-Match: *`
    /// (one atomic check-and-store on S3; see the README for servers that do not honour it). Folders: every
    /// object under it, copied then deleted; not atomic.
    public func move(from source: RemotePath, to destination: RemotePath, replacing: Bool) async throws {
        let sourceKey = bucket.key(for: source)
        let destinationKey = bucket.key(for: destination)
        if try await bucket.head(sourceKey, path: source) != nil {
            if replacing {
                try await bucket.copy(from: sourceKey, to: destinationKey, path: destination)
            } else {
                if try await containsAnything(below: destination) {
                    throw FolderSyncError(
                        .remoteItemExists, "a folder is at the destination", path: destination.description)
                }
                guard let data = try await bucket.get(sourceKey, path: source)?.body else {
                    throw FolderSyncError(.remoteItemNotFound, "the file to move vanished", path: source.description)
                }
                guard try await bucket.put(destinationKey, body: .data(data), ifAbsent: true, path: destination) else {
                    throw FolderSyncError(.remoteItemExists, "the destination exists", path: destination.description)
                }
            }
            try await bucket.delete(sourceKey, path: source)
            return
        }
        let sourcePrefix = bucket.folderPrefix(for: source)
        let destinationPrefix = bucket.folderPrefix(for: destination)
        let objects = try await bucket.list(prefix: sourcePrefix, delimiter: nil, path: source).objects
        guard !objects.isEmpty else {
            throw FolderSyncError(.remoteItemNotFound, "nothing to move", path: source.description)
        }
        if !replacing, try await item(at: destination) != nil {
            throw FolderSyncError(.remoteItemExists, "the destination exists", path: destination.description)
        }
        for object in objects {
            try await bucket.copy(
                from: object.key, to: destinationPrefix + object.key.dropFirst(sourcePrefix.count), path: destination)
        }
        try await bucket.delete(keys: objects.map(\.key), path: source)
    }

    /// Into the removed area (a fresh name nobody else writes): server-side copies then deletes, never the read and
    /// conditional write of a refusing ``move(from:to:replacing:)``.
    public func moveAside(_ source: RemotePath, to destination: RemotePath) async throws {
        try await move(from: source, to: destination, replacing: true)
    }

    /// The object, and every object under it as a folder (DeleteObjects, 1,000 keys a request).
    public func remove(_ path: RemotePath) async throws {
        guard !path.isRoot else {
            throw FolderSyncError(.permissionDenied, "the root of the shared folder cannot be removed", path: "/")
        }
        try await bucket.delete(bucket.key(for: path), path: path)
        let inside = try await bucket.list(prefix: bucket.folderPrefix(for: path), delimiter: nil, path: path).objects
        if !inside.isEmpty { try await bucket.delete(keys: inside.map(\.key), path: path) }
    }

    /// Writes the folder markers of `path` and of its parents (S3 has no folders to create, only keys).
    public func createDirectory(at path: RemotePath) async throws {
        var folder = RemotePath.root
        for component in path.components {
            folder = folder.appending(component)
            if try await bucket.head(bucket.key(for: folder), path: folder) != nil {
                throw FolderSyncError(.remoteItemExists, "a file is in the way", path: folder.description)
            }
            try await bucket.put(bucket.folderPrefix(for: folder), body: .data(Data()), path: folder)
        }
    }
}

/// What the operation subclasses do on S3 that a file system cannot say.
extension S3FileSystem {
    /// One PUT with `If-None-Match: *`: `false` when the key was taken.
    func putIfAbsent(_ data: Data, at path: RemotePath) async throws -> Bool {
        try await bucket.put(bucket.key(for: path), body: .data(data), ifAbsent: true, path: path)
    }

    /// One streamed PUT with `If-None-Match: *`: `false` when the key was taken.
    func putIfAbsent(fileAt url: URL, at path: RemotePath) async throws -> Bool {
        try await bucket.put(bucket.key(for: path), body: .file(url), ifAbsent: true, path: path)
    }

    /// The folder marker of `folder` alone (one PUT), without checking or creating its parents.
    func createMarker(of folder: RemotePath) async throws {
        try await bucket.put(bucket.folderPrefix(for: folder), body: .data(Data()), path: folder)
    }

    /// One HEAD.
    func fileExists(at path: RemotePath) async throws -> Bool {
        try await bucket.head(bucket.key(for: path), path: path) != nil
    }

    /// Every file below `folder`, at any depth, from one `ListObjectsV2` without delimiter (paginated).
    func filesBelow(_ folder: RemotePath) async throws -> [(path: RemotePath, item: RemoteItem)] {
        let prefix = bucket.folderPrefix(for: folder)
        var files: [(RemotePath, RemoteItem)] = []
        for object in try await bucket.list(prefix: prefix, delimiter: nil, path: folder).objects {
            let components = object.key.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
                .map(String.init)
            // folder markers
            guard let name = components.last, !name.isEmpty, !components.contains(where: \.isEmpty) else { continue }
            let path = components.reduce(folder) { $0.appending($1) }
            files.append(
                (
                    path,
                    RemoteItem(
                        name: name, kind: .file, size: object.size, modificationDate: object.lastModified,
                        etag: object.etag)
                ))
        }
        return files
    }

    /// The folders below `folder` (implied by keys, or by markers), with their files and sub-folders, as
    /// ``VacuumOperation/fetchDocumentTree()`` returns them, from one recursive listing.
    ///
    /// - Throws: ``FolderSyncError/Code/remoteItemNotFound`` when nothing is below `folder`.
    func tree(below folder: RemotePath) async throws -> [RemotePath: [RemoteItem]] {
        let prefix = bucket.folderPrefix(for: folder)
        let objects = try await bucket.list(prefix: prefix, delimiter: nil, path: folder).objects
        guard !objects.isEmpty else {
            throw FolderSyncError(.remoteItemNotFound, "no such folder", path: folder.description)
        }
        var tree: [RemotePath: [RemoteItem]] = [folder: []]
        var known: Set<RemotePath> = [folder]
        for object in objects {
            let components = object.key.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
                .map(String.init)
            var parent = folder
            for (index, component) in components.enumerated() where !component.isEmpty {
                let path = parent.appending(component)
                if index == components.count - 1 {
                    tree[parent, default: []].append(
                        RemoteItem(
                            name: component, kind: .file, size: object.size,
                            modificationDate: object.lastModified, etag: object.etag))
                } else if known.insert(path).inserted {
                    tree[parent, default: []].append(RemoteItem(name: component, kind: .directory))
                    tree[path, default: []] = tree[path] ?? []
                }
                parent = path
            }
        }
        return tree
    }
}

extension S3FileSystem {
    /// Whether any key (a file, or a folder marker) is below `folder`: one listing of at most one key.
    func containsAnything(below folder: RemotePath) async throws -> Bool {
        try await !bucket.list(prefix: bucket.folderPrefix(for: folder), delimiter: nil, limit: 1, path: folder).objects
            .isEmpty
    }
}
