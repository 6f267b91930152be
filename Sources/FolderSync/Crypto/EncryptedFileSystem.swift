import Crypto
public import Foundation

/// A ``RemoteFileSystem`` that encrypts the files of one encrypted application on top of another file system.
///
/// Every file's contents are sealed with AES-256-GCM in chunks (so uploads and downloads stream) under a key
/// bound to the path the file is published under; reading a file that was altered, cut, moved or swapped throws
/// ``FolderSyncError/Code/tamperedFile`` naming it. Only what must be readable before the key is known stays
/// clear: the catalog entries with `encryptedWhenEnabled` false (`FormatVersion.plist`, `ReadMe.txt`,
/// `Encryption/`, the integrity key that is also its own name). Names, folders and sizes are not hidden.
///
/// Because contents are bound to their path, a file moved to another path no longer opens, except the moves
/// FolderSync makes: a temporary to its final name, a staged whole store into `WholeStore/`, a corrupt file into
/// `Quarantine/` (see ``RemoteLayout``'s binding rules in `RemoteLayouts/v1/formats/encryption.md`).
///
/// ``ApplicationSyncManager`` puts one in front of its remote when it registers with an encrypted application,
/// so every operation and backend gets encryption without knowing it. Tools open one with
/// ``unlocking(_:layout:password:)``.
public struct EncryptedFileSystem: RemoteFileSystem, RemoteChangeNotifying {
    /// The file system that stores the sealed files.
    public let base: any RemoteFileSystem
    /// The layout of the encrypted application, which says which files stay clear.
    public let layout: RemoteLayout
    let dataKey: SymmetricKey

    /// Opens an encrypted application's files with its password, for tools that do not register.
    ///
    /// - Throws: ``FolderSyncError/Code/wrongPassword`` for a wrong password, ``FolderSyncError/Code/tamperedFile`` or
    ///   ``FolderSyncError/Code/corruptFile`` for a damaged `Encryption/EncryptionKey.plist`,
    ///   ``FolderSyncError/Code/remoteItemNotFound`` when the application is not encrypted.
    public static func unlocking(_ base: any RemoteFileSystem, layout: RemoteLayout, password: String) async throws
        -> EncryptedFileSystem
    {
        let path = layout.encryptionKeyFile
        let info = try PropertyListFile.decode(
            EncryptionKeyInfo.self, from: try await base.read(path, maximumSize: PropertyListFile.maximumByteCount),
            path: path.description)
        let dataKey = try info.dataKey(with: try info.passwordKey(for: password, path: path), path: path)
        return EncryptedFileSystem(base: base, layout: layout, dataKey: dataKey)
    }

    /// The path a file's contents are bound to, when it is sealed; `nil` for a file kept clear.
    private func binding(_ path: RemotePath) -> RemotePath? {
        layout.isEncryptedWhenEnabled(path) ? layout.publishedPath(of: path) : nil
    }

    public func read(_ path: RemotePath) async throws -> Data {
        let data = try await base.read(path)
        guard let bound = binding(path) else { return data }
        return try naming(path) { try SealedFile.open(data, dataKey: dataKey, path: bound) }
    }

    /// Bounds the sealed file by the most a sealed file of `maximumSize` plaintext bytes can take.
    public func read(_ path: RemotePath, maximumSize: Int) async throws -> Data {
        guard let bound = binding(path) else { return try await base.read(path, maximumSize: maximumSize) }
        let data = try await base.read(path, maximumSize: SealedFileHeader.maximumSealedSize(ofPlaintext: maximumSize))
        let opened = try naming(path) { try SealedFile.open(data, dataKey: dataKey, path: bound) }
        try FolderSyncError.checkSize(Int64(opened.count), maximumSize: maximumSize, path: path.description)
        return opened
    }

    public func write(_ data: Data, to path: RemotePath) async throws {
        guard let bound = binding(path) else { return try await base.write(data, to: path) }
        try await base.write(try SealedFile.seal(data, dataKey: dataKey, path: bound), to: path)
    }

    /// Downloads the sealed file beside `url`, then opens it into `url`, streaming.
    public func download(_ path: RemotePath, toLocalFile url: URL) async throws {
        guard let bound = binding(path) else { return try await base.download(path, toLocalFile: url) }
        let sealed = url.deletingLastPathComponent().appendingPathComponent(
            TemporaryName.make(for: url.lastPathComponent))
        defer { try? FileManager.default.removeItem(at: sealed) }
        try await base.download(path, toLocalFile: sealed)
        try naming(path) { try SealedFile.open(fileAt: sealed, to: url, dataKey: dataKey, path: bound) }
    }

    /// Names the file as it was read (a temporary or staged name), not the path its key is bound to.
    private func naming<Result>(_ path: RemotePath, _ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch let error as FolderSyncError where error.code == .tamperedFile {
            throw FolderSyncError(.tamperedFile, error.message, path: path.description)
        }
    }

    /// Seals `url` into a local temporary file, streaming, then uploads that. The temporary is in a folder of this
    /// user's alone (`LocalFiles.privateScratchDirectory(in:)`), never loose in the shared temporary folder.
    public func upload(fromLocalFile url: URL, to path: RemotePath) async throws {
        guard let bound = binding(path) else { return try await base.upload(fromLocalFile: url, to: path) }
        let scratch = try LocalFiles.privateScratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let sealed = scratch.appendingPathComponent(TemporaryName.make(for: path.name))
        try SealedFile.seal(fileAt: url, to: sealed, dataKey: dataKey, path: bound)
        try await base.upload(fromLocalFile: sealed, to: path)
    }

    public func contentsOfDirectory(at path: RemotePath) async throws -> [RemoteItem] {
        try await base.contentsOfDirectory(at: path)
    }

    public func item(at path: RemotePath) async throws -> RemoteItem? { try await base.item(at: path) }

    public func move(from source: RemotePath, to destination: RemotePath, replacing: Bool) async throws {
        try await base.move(from: source, to: destination, replacing: replacing)
    }

    public func remove(_ path: RemotePath) async throws { try await base.remove(path) }

    /// The base's: a sealed file stays bound to the path it was published at (`RemoteLayout.publishedPath(of:)`),
    /// wherever it is moved aside.
    public func moveAside(_ source: RemotePath, to destination: RemotePath) async throws {
        try await base.moveAside(source, to: destination)
    }

    /// The base's clock.
    public func recordedTime(in folder: RemotePath) async throws -> Date? { try await base.recordedTime(in: folder) }

    public func createDirectory(at path: RemotePath) async throws { try await base.createDirectory(at: path) }

    /// The base's notifications; throws when the base has none, so watchers fall back to polling.
    public func changedNames(in directory: RemotePath) throws -> AsyncStream<String> {
        guard let notifying = base as? any RemoteChangeNotifying else {
            throw FolderSyncError(
                .invalidConfiguration, "the remote does not notify changes", path: directory.description)
        }
        return try notifying.changedNames(in: directory)
    }
}
