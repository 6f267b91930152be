import Crypto
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// This client's attachments, one file per SHA-256 in the helper folder's `Attachments/`, exactly as the app
/// gave them (the remote form is compressed and may be encrypted; the local one is ready to open).
struct LocalAttachmentStore: Sendable {
    let directory: URL

    /// Where the attachment named `sha256` is, or would be.
    func url(for sha256: String) -> URL { directory.appendingPathComponent(sha256) }

    func contains(_ reference: AttachmentReference) -> Bool {
        FileManager.default.fileExists(atPath: url(for: reference.sha256).path)
    }

    /// Adds a file: a copy, or for an immutable one a hard link (no copy) where the file system allows it.
    func add(fileAt source: URL, mode: AttachmentMode, metadata: [String: String]) throws -> AttachmentReference {
        try LocalFiles.createDirectory(directory)
        if mode == .immutable {
            let (sha256, size) = try Self.digest(of: source)
            let target = url(for: sha256)
            if !FileManager.default.fileExists(atPath: target.path) && link(source.path, target.path) != 0
                && errno != EEXIST
            {
                return try copy(source, metadata: metadata)
            }
            LocalFiles.syncDirectory(directory.path)
            return AttachmentReference(sha256: sha256, size: size, metadata: metadata)
        }
        return try copy(source, metadata: metadata)
    }

    /// Adds a column value stored as an attachment.
    func add(value: Data) throws -> AttachmentReference {
        let sha256 = AttachmentReference.hex(SHA256.hash(data: value))
        if !FileManager.default.fileExists(atPath: url(for: sha256).path) {
            try LocalFiles.createDirectory(directory)
            try LocalFiles.writeDurably(value, to: url(for: sha256))
        }
        return AttachmentReference(sha256: sha256, size: Int64(value.count), isInlineValue: true)
    }

    /// Whether the local copy exists and still has the attached contents.
    func isIntact(_ reference: AttachmentReference) -> Bool {
        guard let (sha256, size) = try? Self.digest(of: url(for: reference.sha256)) else { return false }
        return sha256 == reference.sha256 && size == reference.size
    }

    /// A file decoded and verified elsewhere becomes the local copy, atomically.
    func install(_ file: URL, as reference: AttachmentReference) throws {
        try LocalFiles.createDirectory(directory)
        guard rename(file.path, url(for: reference.sha256).path) == 0 else {
            throw LocalFiles.error("rename", path: url(for: reference.sha256).path)
        }
        LocalFiles.syncDirectory(directory.path)
    }

    /// A fresh name for a file being written into the store.
    func temporaryURL(for sha256: String) throws -> URL {
        try LocalFiles.createDirectory(directory)
        return directory.appendingPathComponent(TemporaryName.make(for: sha256))
    }

    /// Removes what interrupted imports and transfers left (up to an attachment's size each); only old ones,
    /// since ``DocumentSyncManager/requestDownload(for:)`` may be writing one while a sync runs.
    func removeStaleTemporaries(now: Date, olderThan age: TimeInterval = 3600) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in names where TemporaryName.isTemporary(name) {
            let url = directory.appendingPathComponent(name)
            guard
                let modified = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.modificationDate]
                    as? Date,
                now.timeIntervalSince(modified) > age
            else { continue }
            unlink(url.path)
        }
    }

    private func copy(_ source: URL, metadata: [String: String]) throws -> AttachmentReference {
        let temporary = try temporaryURL(for: "import")
        defer { unlink(temporary.path) }
        let input = try LocalStream(reading: source)
        let output = try LocalStream(writing: temporary)
        var hasher = SHA256()
        var size: Int64 = 0
        while case let chunk = try input.read(AttachmentFile.chunkSize), !chunk.isEmpty {
            hasher.update(data: chunk)
            size += Int64(chunk.count)
            try output.write(chunk)
        }
        try output.close()
        let reference = AttachmentReference(
            sha256: AttachmentReference.hex(hasher.finalize()), size: size, metadata: metadata)
        try install(temporary, as: reference)
        return reference
    }

    /// The SHA-256 and size of a local file, read in chunks.
    static func digest(of url: URL) throws -> (String, Int64) {
        let input = try LocalStream(reading: url)
        var hasher = SHA256()
        var size: Int64 = 0
        while case let chunk = try input.read(AttachmentFile.chunkSize), !chunk.isEmpty {
            hasher.update(data: chunk)
            size += Int64(chunk.count)
        }
        return (AttachmentReference.hex(hasher.finalize()), size)
    }
}

extension LocalLayout {
    var attachmentStore: LocalAttachmentStore { LocalAttachmentStore(directory: attachmentsDirectory) }
}

/// How ``DocumentSyncManager/attachFile(at:mode:metadata:)`` takes a file.
public enum AttachmentMode: Sendable, Hashable {
    /// FolderSync copies the file; the app may change or delete its own file at once.
    case copy
    /// The app promises not to change the file until it is synced: FolderSync links it instead of copying
    /// (a copy where links are impossible). A file changed anyway fails its upload with
    /// ``FolderSyncError/Code/attachmentChanged``.
    case immutable
}
