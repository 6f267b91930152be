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
    enum Publication {
        case uploaded(bytes: Int64)
        case alreadyThere, missingEverywhere
    }

    /// Makes sure the remote has the attachment, uploading the local copy if it does not.
    ///
    /// Publishes under a temporary name and moves it into place without replacing, so a reader never sees a
    /// partial file and two clients uploading the same contents cannot disturb each other.
    func publish(_ reference: AttachmentReference) async throws -> Publication {
        let path = remotePath(reference)
        if try await fileSystem.exists(path) { return .alreadyThere }
        guard local.contains(reference) else { return .missingEverywhere }
        emit(.uploadingAttachment(reference))
        try await fileSystem.createDirectory(at: path.parent)
        let temporary = path.parent.appending(TemporaryName.make(for: path.name))
        var bytes: Int64 = 0
        // Encoded as it is uploaded: no local copy of the encoded form (which cost a 200 MB value's size in writes).
        try await fileSystem.upload(to: temporary) { write in
            try AttachmentFile.encode(local.url(for: reference.sha256), as: reference) { piece in
                bytes += Int64(piece.count)
                try write(piece)
            }
        }
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
        let decoded = try local.temporaryURL(for: reference.sha256)
        defer { unlink(decoded.path) }
        let bytes = try await download(reference, to: decoded, durably: true)
        try local.install(decoded, as: reference)
        return bytes
    }

    /// Downloads and verifies the attachment into `destination` (replaced), made durable or not; returns the bytes
    /// downloaded.
    ///
    /// The remote file is decoded as it is read: its encoded form is never written locally (a 200 MB value was
    /// written twice and read back once more before).
    func download(_ reference: AttachmentReference, to destination: URL, durably: Bool) async throws -> Int64 {
        let path = remotePath(reference)
        emit(.downloadingAttachment(reference))
        let decoder = AttachmentFile.Decoder(
            sha256: reference.sha256, size: reference.size, to: destination,
            durably: durably, path: path.description)
        do {
            try await fileSystem.readPieces(of: path, size: 1 << 20) { try decoder.take($0) }
        } catch FolderSyncError.Code.remoteItemNotFound {
            throw FolderSyncError(.attachmentGone, "the attachment is not on the remote", path: path.description)
        }
        try decoder.finish()
        return decoder.encodedByteCount
    }
}
