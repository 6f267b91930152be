public import Foundation

extension DocumentSyncManager {
    /// Adds a file to the document's attachments and returns the reference to store in a row.
    ///
    /// Store ``AttachmentReference/databaseValue`` in a column of a synced table; the next sync uploads the file
    /// (once, whatever the number of rows that reference it) before the change set that references it.
    /// - Parameters:
    ///   - url: the file to attach.
    ///   - mode: ``AttachmentMode/copy`` (the default) or ``AttachmentMode/immutable`` (no copy; the app does
    ///     not change the file until it is synced).
    ///   - metadata: the app's own description (a file name, a type), at most
    ///     ``AttachmentReference/metadataByteLimit`` bytes; it travels with the reference.
    /// - Throws: ``FolderSyncError/Code/invalidConfiguration`` for metadata that is too large,
    ///   ``FolderSyncError/Code/localStoreFailed`` naming the file that cannot be read.
    public func attachFile(at url: URL, mode: AttachmentMode = .copy, metadata: [String: String] = [:]) throws
        -> AttachmentReference
    {
        let metadataBytes = metadata.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
        guard metadataBytes <= AttachmentReference.metadataByteLimit else {
            throw FolderSyncError(
                .invalidConfiguration,
                "attachment metadata takes \(metadataBytes) bytes; at most \(AttachmentReference.metadataByteLimit) are allowed"
            )
        }
        return try localLayout.attachmentStore.add(fileAt: url, mode: mode, metadata: metadata)
    }

    /// The local copy of an attachment, or `nil` when this client does not have it (yet). Not verified: open it
    /// read-only, and call ``requestDownload(for:)`` when its contents look wrong.
    public func localFile(for reference: AttachmentReference) -> URL? {
        localLayout.attachmentStore.contains(reference) ? localLayout.attachmentStore.url(for: reference.sha256) : nil
    }

    /// Returns a verified local copy of an attachment: checks the local copy's SHA-256, and downloads the
    /// attachment again when it is missing or damaged (lazy downloads, a deleted or corrupted file, a retry of
    /// one a sync reported gone).
    ///
    /// - Throws: ``FolderSyncError/Code/attachmentGone`` when the remote does not have it either,
    ///   ``FolderSyncError/Code/corruptFile`` when the remote copy is damaged.
    @discardableResult
    public func requestDownload(for reference: AttachmentReference) async throws -> URL {
        guard state == .ableToSync else {
            throw notRegistered(before: "downloading attachments")
        }
        let local = localLayout.attachmentStore
        if !local.isIntact(reference) {
            let transfer = AttachmentTransfer(
                fileSystem: applicationSyncManager.remote, layout: layout, documentIdentifier: documentIdentifier,
                local: local, emit: { [weak self] event in self?.publish(event) })
            _ = try await transfer.download(reference)
        }
        if reference.isInlineValue, let store = store as? any LargeValueRestoring {
            try store.restoreLargeValues(from: local)
        }
        return local.url(for: reference.sha256)
    }
}
