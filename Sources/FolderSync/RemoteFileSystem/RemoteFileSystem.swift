public import Foundation

/// What a listing or a stat reports about one remote item.
public struct RemoteItem: Hashable, Sendable {
    /// Whether an item is a file or a folder.
    public enum Kind: Hashable, Sendable {
        /// A file.
        case file
        /// A folder.
        case directory
    }

    /// The item's name inside its folder.
    public var name: String
    /// Whether the item is a file or a folder.
    public var kind: Kind
    /// The size in bytes, for files, when the backend knows it.
    public var size: Int64?
    /// The modification date, when the backend knows it. Never used to order changes.
    public var modificationDate: Date?
    /// An opaque version tag (an HTTP ETag, an inode/mtime pair), when the backend has one.
    public var etag: String?

    /// What tells a whole store's versions apart: its ETag, else its size (a backend without version tags).
    var wholeStoreTag: String? { etag ?? size.map { "size \($0)" } }

    /// An item as a backend reports it; leave out what the backend does not know.
    public init(name: String, kind: Kind, size: Int64? = nil, modificationDate: Date? = nil, etag: String? = nil) {
        self.name = name
        self.kind = kind
        self.size = size
        self.modificationDate = modificationDate
        self.etag = etag
    }
}

/// The small storage contract every FolderSync operation's default steps are written against.
///
/// A backend author who implements these primitives gets registration,
/// synchronization, whole stores, vacuum and deletion for free. Each
/// primitive's contract:
///
/// - ``contentsOfDirectory(at:)`` lists one level. A missing folder throws
///   ``FolderSyncError/Code/remoteItemNotFound``. Order is unspecified.
/// - ``item(at:)`` returns `nil` for a missing item; it never throws for absence.
/// - ``read(_:)`` returns the whole file; a missing file throws `remoteItemNotFound`.
/// - ``read(_:maximumSize:)`` does the same for a file of a kind with a known bound (property lists,
///   markers, manifests, integrity keys): a larger file is refused by its size **before** it is read, so a
///   hostile or damaged file cannot make a client allocate gigabytes. The default asks ``item(at:)`` first;
///   a backend that can learn the size while it reads (an open file's `fstat`, an HTTP `Content-Length`)
///   overrides it to save that request.
/// - ``write(_:to:)`` replaces the file **atomically**: a reader sees the old
///   bytes or the new ones, never a mix or a truncated file. The parent folder exists.
/// - ``move(from:to:replacing:)`` renames a file or folder atomically. With
///   `replacing: false` it throws ``FolderSyncError/Code/remoteItemExists`` if
///   the destination exists, and that check and the rename are one atomic
///   step ("publish if absent", the only coordination FolderSync needs).
/// - ``remove(_:)`` removes a file or a folder with its contents; removing
///   something absent succeeds.
/// - ``createDirectory(at:)`` creates a folder and its missing parents;
///   creating one that exists succeeds.
///
/// Failures are thrown as ``FolderSyncError`` with the code that names the
/// cause (`permissionDenied`, `remoteFull`, `remoteIOFailed`,
/// `connectionFailed`…) and the path concerned.
public protocol RemoteFileSystem: Sendable {
    /// The items directly inside the folder at `path`, in any order; throws `remoteItemNotFound` if it is missing.
    func contentsOfDirectory(at path: RemotePath) async throws -> [RemoteItem]
    /// The names and kinds of a folder's items, as ``contentsOfDirectory(at:)`` lists them, where sizes, dates and
    /// version tags may be left out: what a listing of change sets needs (their names say everything). A backend whose
    /// listing costs more with them implements it (a local folder: a `stat` per file); the default lists in full.
    func namesOfDirectory(at path: RemotePath) async throws -> [RemoteItem]
    /// What is at `path`, or `nil` when nothing is; absence is not an error.
    func item(at path: RemotePath) async throws -> RemoteItem?
    /// The whole contents of the file at `path`; throws `remoteItemNotFound` if it is missing.
    func read(_ path: RemotePath) async throws -> Data
    /// The whole contents of the file at `path`, which must hold at most `maximumSize` bytes: a larger one throws
    /// ``FolderSyncError/Code/corruptFile`` naming it, without being read. Throws `remoteItemNotFound` if it is
    /// missing.
    func read(_ path: RemotePath, maximumSize: Int) async throws -> Data
    /// Creates or atomically replaces the file at `path`, whose parent folder exists.
    func write(_ data: Data, to path: RemotePath) async throws
    /// Renames a file or folder atomically; without `replacing`, fails with `remoteItemExists` if the destination
    /// exists.
    func move(from source: RemotePath, to destination: RemotePath, replacing: Bool) async throws
    /// Removes a file, or a folder with its contents; succeeds when nothing is there.
    func remove(_ path: RemotePath) async throws
    /// Creates a folder and its missing parents; succeeds when it exists.
    func createDirectory(at path: RemotePath) async throws

    /// Downloads a file to a local file (replacing it), without holding it whole in memory when the backend can stream.
    func download(_ path: RemotePath, toLocalFile url: URL) async throws
    /// Uploads a local file atomically, without holding it whole in memory when the backend can stream.
    func upload(fromLocalFile url: URL, to path: RemotePath) async throws
    /// Uploads atomically, as the file at `path` (its parent folder exists), the bytes `produce` hands to its `write`
    /// function piece by piece: what is encoded as it is read (an attachment) is written once, where it lands, when the
    /// backend can stream (a local folder); the default puts the pieces into a local scratch file first and uploads it
    /// with ``upload(fromLocalFile:to:)``. An error `produce` throws is thrown, and nothing is published.
    func upload(to path: RemotePath, producing produce: (_ write: (Data) throws -> Void) throws -> Void) async throws
    /// Reads a file from start to end, handing `body` one piece at a time (about `size` bytes each), so that
    /// the reader can check and use the bytes while they arrive instead of reading a downloaded copy again.
    func readPieces(of path: RemotePath, size: Int, _ body: (Data) throws -> Void) async throws
    /// The remote's own clock: the modification date it records for a file written now, as its listings show dates;
    /// `nil` when it records none. Ages of what is in the folder (how long a client has been silent, how old a
    /// temporary is) are judged against it, never against a device's clock. The default writes a small temporary in
    /// `folder` (an existing folder), asks for it and removes it; a backend that can tell its time without writing
    /// (an HTTP server's `Date`, when it is the clock that dates the files) implements it.
    func recordedTime(in folder: RemotePath) async throws -> Date?
    /// Moves a file or folder to a fresh name that nobody else writes and nobody reads as published (the removed
    /// area, where vacuum and deletions put what they remove for a grace period). Unlike ``move(from:to:replacing:)``
    /// it need not refuse an existing destination nor move a folder in one atomic step, so that a backend without a
    /// cheap rename can do it with what it has. The parent of `destination` exists. The default is
    /// ``move(from:to:replacing:)`` without replacing: one rename on a local folder, one `MOVE` over WebDAV; a
    /// backend whose refusing move costs more (S3: a read and a conditional write) implements it with a server-side
    /// copy and a delete.
    func moveAside(_ source: RemotePath, to destination: RemotePath) async throws
}

extension RemoteFileSystem {
    /// Default: refuses a file whose listed size is above `maximumSize`, then reads it and checks what came.
    /// One request more than ``read(_:)``: backends that can see the size while reading override it.
    public func read(_ path: RemotePath, maximumSize: Int) async throws -> Data {
        guard let item = try await item(at: path) else {
            throw FolderSyncError(.remoteItemNotFound, "no such file", path: path.description)
        }
        if let size = item.size {
            try FolderSyncError.checkSize(size, maximumSize: maximumSize, path: path.description)
        }
        let data = try await read(path)
        try FolderSyncError.checkSize(Int64(data.count), maximumSize: maximumSize, path: path.description)
        return data
    }

    /// Default: reads the whole file and writes it locally. Streaming backends override this.
    public func download(_ path: RemotePath, toLocalFile url: URL) async throws {
        let data = try await read(path)
        try LocalFiles.writeDurably(data, to: url)
    }

    /// Default: loads the local file and writes it. Streaming backends override this.
    public func upload(fromLocalFile url: URL, to path: RemotePath) async throws {
        let data = try LocalFiles.read(url)
        try await write(data, to: path)
    }

    /// Default: writes the pieces into a scratch file (`0600` in a `0700` folder of this user's alone, not made
    /// durable: it is read once and removed), then uploads it with ``upload(fromLocalFile:to:)``.
    public func upload(to path: RemotePath, producing produce: (_ write: (Data) throws -> Void) throws -> Void)
        async throws
    {
        let folder = try LocalFiles.privateScratchDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let scratch = folder.appendingPathComponent("upload")
        try LocalFiles.writeReplacing(scratch, durably: false, produce)
        try await upload(fromLocalFile: scratch, to: path)
    }

    /// Default: downloads the file into a temporary local file, then reads that in pieces. Backends that can
    /// stream (a local or mounted folder, HTTP) override this to hand over the pieces as they are read.
    ///
    /// The temporary (a decrypted whole store, on an encrypted remote) is `0600` in a `0700` folder of this user's
    /// alone (`LocalFiles.privateScratchDirectory(in:)`), removed once read.
    public func readPieces(of path: RemotePath, size: Int, _ body: (Data) throws -> Void) async throws {
        let folder = try LocalFiles.privateScratchDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let scratch = folder.appendingPathComponent("read")
        try await download(path, toLocalFile: scratch)
        try LocalFiles.readPieces(of: scratch, size: size) { piece, _ in try body(piece) }
    }

    /// Default: ``move(from:to:replacing:)``, refusing to replace (nothing is ever there).
    public func moveAside(_ source: RemotePath, to destination: RemotePath) async throws {
        try await move(from: source, to: destination, replacing: false)
    }

    /// Default: writes an empty temporary in `folder`, reads its modification date, and removes it.
    public func recordedTime(in folder: RemotePath) async throws -> Date? {
        let probe = folder.appending(TemporaryName.make(for: "clock"))
        try await write(Data(), to: probe)
        let date: Date?
        do {
            date = try await item(at: probe)?.modificationDate
        } catch {
            try? await remove(probe)
            throw error
        }
        try await remove(probe)
        return date
    }

    /// Whether anything exists at `path`.
    public func exists(_ path: RemotePath) async throws -> Bool {
        try await item(at: path) != nil
    }

    /// Reads a file, or returns `nil` when it does not exist.
    public func readIfPresent(_ path: RemotePath) async throws -> Data? {
        do {
            return try await read(path)
        } catch FolderSyncError.Code.remoteItemNotFound {
            return nil
        }
    }

    /// Reads a file of at most `maximumSize` bytes (``read(_:maximumSize:)``), or returns `nil` when it does not exist.
    public func readIfPresent(_ path: RemotePath, maximumSize: Int) async throws -> Data? {
        do {
            return try await read(path, maximumSize: maximumSize)
        } catch FolderSyncError.Code.remoteItemNotFound {
            return nil
        }
    }

    /// Lists a folder, or returns an empty list when it does not exist.
    public func contentsOfDirectoryIfPresent(at path: RemotePath) async throws -> [RemoteItem] {
        do {
            return try await contentsOfDirectory(at: path)
        } catch FolderSyncError.Code.remoteItemNotFound {
            return []
        }
    }

    /// Default: the full listing (``contentsOfDirectory(at:)``).
    public func namesOfDirectory(at path: RemotePath) async throws -> [RemoteItem] {
        try await contentsOfDirectory(at: path)
    }

    /// ``namesOfDirectory(at:)``, or no item when the folder does not exist.
    public func namesOfDirectoryIfPresent(at path: RemotePath) async throws -> [RemoteItem] {
        do {
            return try await namesOfDirectory(at: path)
        } catch FolderSyncError.Code.remoteItemNotFound {
            return []
        }
    }

    /// Creates `path` with `data` only if nothing is there yet, atomically.
    ///
    /// Writes under a temporary name in the same folder, then moves it into
    /// place without replacing. Returns `false` (and cleans up) when another
    /// writer got there first.
    public func publishIfAbsent(_ data: Data, to path: RemotePath) async throws -> Bool {
        let temporary = path.parent.appending(TemporaryName.make(for: path.name))
        try await write(data, to: temporary)
        do {
            try await move(from: temporary, to: path, replacing: false)
            return true
        } catch FolderSyncError.Code.remoteItemExists {
            try? await remove(temporary)
            return false
        }
    }
}
