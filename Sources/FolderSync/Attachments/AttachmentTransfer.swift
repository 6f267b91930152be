import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Moves attachments between the local store and the document's `Attachments/` folder, streaming through
/// temporary files: never whole in memory, and through the document's ``RemoteFileSystem`` so that a backend
/// decorator (encryption) sees them like every other file.
struct AttachmentTransfer: Sendable {
    let fileSystem: any RemoteFileSystem
    let layout: RemoteLayout
    let documentIdentifier: String
    let local: LocalAttachmentStore
    let emit: @Sendable (SyncEvent) -> Void

    func remotePath(_ reference: AttachmentReference) -> RemotePath {
        layout.attachmentFile(documentIdentifier, sha256: reference.sha256)
    }

    /// What ``publish(_:)`` found.
    enum Publication { case uploaded(bytes: Int64), alreadyThere, missingEverywhere }

    /// Makes sure the remote has the attachment, uploading the local copy if it does not.
    ///
    /// Publishes under a temporary name and moves it into place without replacing, so a reader never sees a
    /// partial file and two clients uploading the same contents cannot disturb each other.
    func publish(_ reference: AttachmentReference) async throws -> Publication {
        let path = remotePath(reference)
        if try await fileSystem.exists(path) { return .alreadyThere }
        guard local.contains(reference) else { return .missingEverywhere }
        emit(.uploadingAttachment(reference))
        let encoded = try local.temporaryURL(for: reference.sha256 + ".upload")
        defer { unlink(encoded.path) }
        try AttachmentFile.encode(local.url(for: reference.sha256), as: reference, to: encoded)
        let bytes = (try? FileManager.default.attributesOfItem(atPath: encoded.path)[.size] as? Int64) ?? 0
        try await fileSystem.createDirectory(at: path.parent)
        let temporary = path.parent.appending(TemporaryName.make(for: path.name))
        try await fileSystem.upload(fromLocalFile: encoded, to: temporary)
        do {
            try await fileSystem.move(from: temporary, to: path, replacing: false)
        } catch FolderSyncError.Code.remoteItemExists {
            try? await fileSystem.remove(temporary)
            return .alreadyThere
        }
        return .uploaded(bytes: bytes)
    }

    /// Whether the remote has the attachment.
    func isOnRemote(_ reference: AttachmentReference) async throws -> Bool {
        try await fileSystem.exists(remotePath(reference))
    }

    /// Downloads, verifies and installs the attachment as the local copy; returns the bytes downloaded.
    ///
    /// - Throws: ``FolderSyncError/Code/attachmentGone`` when the remote does not have it,
    ///   ``FolderSyncError/Code/corruptFile`` when the remote copy is damaged.
    func download(_ reference: AttachmentReference) async throws -> Int64 {
        let path = remotePath(reference)
        emit(.downloadingAttachment(reference))
        let downloaded = try local.temporaryURL(for: reference.sha256 + ".download")
        let decoded = try local.temporaryURL(for: reference.sha256)
        defer {
            unlink(downloaded.path)
            unlink(decoded.path)
        }
        do {
            try await fileSystem.download(path, toLocalFile: downloaded)
        } catch FolderSyncError.Code.remoteItemNotFound {
            throw FolderSyncError(.attachmentGone, "the attachment is not on the remote", path: path.description)
        }
        try AttachmentFile.decode(downloaded, as: reference, to: decoded, path: path.description)
        try local.install(decoded, as: reference)
        return (try? FileManager.default.attributesOfItem(atPath: downloaded.path)[.size] as? Int64) ?? 0
    }
}
