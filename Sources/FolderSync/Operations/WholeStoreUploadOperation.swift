public import Foundation
import Logging

/// Uploads a whole store: a consistent snapshot of the document plus the manifest of the change sets it contains.
///
/// The snapshot is written only when every local change is published, so it carries nothing of this client's
/// unpublished changes. Both files are staged in `TemporaryFiles/WholeStore/<client>/`, then moved into
/// `WholeStore/<client>/`: the store file first, the manifest last. The manifest names the store file's
/// identifier, size and checksum, so a reader that catches a replacement half done sees the mismatch and
/// never installs it.
///
/// `@unchecked Sendable`: an `open` class cannot be checked `Sendable`; its context and store are `let`s.
open class WholeStoreUploadOperation: DocumentOperation, @unchecked Sendable {
    /// Where and as whom the operation works, the manager's policy, and where events go.
    public let context: DocumentOperationContext
    /// The local data snapshotted into the whole store.
    public let store: any SnapshottingModelAdapter

    /// How the whole-store file holds the snapshot (``SyncPolicy/wholeStoreCompression``).
    public var compression: WholeStoreCompression { context.policy.wholeStoreCompression }

    /// An operation ready to ``run()``; see the properties for each argument.
    public init(context: DocumentOperationContext, store: any SnapshottingModelAdapter) {
        self.context = context
        self.store = store
    }

    /// The operation `standard` is, for a backend subclass to run with its own steps: the same context and store.
    public init(copying standard: WholeStoreUploadOperation) {
        context = standard.context
        store = standard.store
    }

    /// Uploads a whole store; returns its manifest, or `nil` when local changes are not all published yet, or when
    /// this client's whole store on the remote covers more of some client's change sets than this store does.
    ///
    /// A store restored from an older copy (before its first sync notices) would otherwise replace the one store
    /// that may hold sets a vacuum has removed since: the older store is kept, and a sync that misses those sets
    /// installs it.
    public func run() async throws -> WholeStoreManifest? {
        let work = localLayout.helperDirectory.appendingPathComponent("WholeStoreUpload", isDirectory: true)
        try? FileManager.default.removeItem(at: work)
        try LocalFiles.createDirectory(work)
        defer { try? FileManager.default.removeItem(at: work) }
        let lock = try await FileLock.acquire(localLayout.syncLockFile)
        defer { lock.release() }

        // Asked before the snapshot, a copy of the whole document, is written: an owed store is tried at every sync.
        let expected = WholeStoreManifest.covers(
            ledger: try store.appliedChangeSets().contiguous,
            publishedSequence: try store.loadSyncState().progress.publishedSequence, localClient: clientIdentifier)
        if let published = try await publishedCovers(),
            let lacking = published.first(where: { expected[$0.key] ?? 0 < $0.value })
        {
            environment.logger.warning(
                "No whole store uploaded: this client's store on the remote covers change sets of \(lacking.key) up to \(lacking.value), this store only up to \(expected[lacking.key] ?? 0)"
            )
            return nil
        }
        let snapshot = work.appendingPathComponent("snapshot.sqlite")
        guard let covers = try store.writeSnapshot(to: snapshot, localClient: clientIdentifier) else { return nil }
        let attachmentReferenceCount = try await publishAttachments(of: snapshot)
        let snapshotSize =
            (try FileManager.default.attributesOfItem(atPath: snapshot.path)[.size] as? NSNumber)?.uint64Value ?? 0
        let identifier = environment.makeIdentifier()
        let storeFile = work.appendingPathComponent(RemoteLayout.wholeStoreFileName)
        let (size, checksum, contentChecksum) = try WholeStoreFile.write(
            snapshot: snapshot, to: storeFile,
            header: .init(
                wholeStoreIdentifier: identifier, clientIdentifier: clientIdentifier,
                schemaVersion: store.schemaVersion,
                snapshotByteCount: snapshotSize, compression: compression,
                snapshotSchemaVersion: store.snapshotSchemaVersion, covers: covers))
        let manifest = WholeStoreManifest(
            clientIdentifier: clientIdentifier, wholeStoreIdentifier: identifier,
            creationDate: environment.now().wholeSeconds, schemaVersion: store.schemaVersion,
            covers: covers, wholeStoreByteCount: size, wholeStoreChecksum: checksum,
            contentChecksum: contentChecksum, attachmentReferenceCount: attachmentReferenceCount)
        let manifestFile = work.appendingPathComponent(RemoteLayout.appliedSyncChangeSetsFileName)
        try LocalFiles.writeDurably(try PropertyListFile.encode(manifest), to: manifestFile)

        for attempt in 1...2 {
            do {
                try await prepareStagingDirectory()
                emit(.wholeStoreTransfer(direction: .upload, bytes: 0, total: Int64(size)))
                try await uploadStagedFile(from: storeFile, name: RemoteLayout.wholeStoreFileName)
                emit(.wholeStoreTransfer(direction: .upload, bytes: Int64(size), total: Int64(size)))
                try await uploadStagedFile(from: manifestFile, name: RemoteLayout.appliedSyncChangeSetsFileName)
                try await publishStagedFile(name: RemoteLayout.wholeStoreFileName)
                try await publishStagedFile(name: RemoteLayout.appliedSyncChangeSetsFileName)
                break
            } catch let error as FolderSyncError where error.code == .remoteItemNotFound && attempt == 1 {
                // Another client's vacuum, judging this client's previous store dominated, removed its folder while
                // this upload replaced it: upload again, once.
                environment.logger.debug("Uploading whole store \(identifier) again: \(error)")
            }
        }
        // Remembered, so that a sync finds the store changed under it (damaged, or put back from an older copy).
        let tag = try await fetchOwnWholeStoreVersionTag()
        try store.updateRemoteKnowledge { $0.ownWholeStoreTag = tag }
        environment.logger.info(
            "Uploaded whole store \(identifier) (\(size) bytes) covering \(manifest.coveredCount) change sets")
        return manifest
    }

    /// Moves large values out of the snapshot and makes sure the remote has every attachment it references,
    /// before the whole store that references them is published. Returns how many references the snapshot holds,
    /// found as a downloader finds them, or `nil` when the store keeps no attachments.
    private func publishAttachments(of snapshot: URL) async throws -> Int? {
        guard let store = store as? any LargeValueRestoring else { return nil }
        let local = localLayout.attachmentStore
        let transfer = AttachmentTransfer(
            fileSystem: fileSystem, layout: layout, documentIdentifier: documentIdentifier,
            local: local, emit: emit)
        for reference in try store.storeLargeValues(inSnapshot: snapshot, threshold: attachmentThreshold, into: local) {
            if case .missingEverywhere = try await transfer.publish(reference) {
                environment.logger.warning(
                    "Whole store references \(reference), which neither this client nor the remote has")
            }
        }
        return try AttachmentScan.references(inSnapshot: snapshot, path: snapshot.path).count
    }

    /// What this client's whole store on the remote covers, or `nil` when it has none (or one that does not read:
    /// replacing it only heals).
    private func publishedCovers() async throws -> [String: Int64]? {
        guard let data = try await fetchOwnManifest() else { return nil }
        let path = layout.appliedSyncChangeSetsFile(documentIdentifier, client: clientIdentifier).description
        return (try? PropertyListFile.decode(WholeStoreManifest.self, from: data, path: path))?.covers
    }

    // MARK: Backend steps

    /// Reads this client's published whole-store manifest (`WholeStore/<client>/AppliedSyncChangeSets.ticdsync`), or
    /// `nil`.
    open func fetchOwnManifest() async throws -> Data? {
        try await fileSystem.readIfPresent(
            layout.appliedSyncChangeSetsFile(documentIdentifier, client: clientIdentifier),
            maximumSize: PropertyListFile.maximumByteCount)
    }

    /// Empties `TemporaryFiles/WholeStore/<client>/`, creating it if needed.
    open func prepareStagingDirectory() async throws {
        let staging = layout.temporaryWholeStoreDirectory(documentIdentifier, client: clientIdentifier)
        try await fileSystem.remove(staging)
        try await fileSystem.createDirectory(at: staging)
    }

    /// Uploads one file into the staging folder.
    open func uploadStagedFile(from url: URL, name: String) async throws {
        try await fileSystem.upload(
            fromLocalFile: url,
            to: layout.temporaryWholeStoreDirectory(documentIdentifier, client: clientIdentifier).appending(name))
    }

    /// The version tag of this client's published whole store (`LocalSyncState.ownWholeStoreTag`).
    open func fetchOwnWholeStoreVersionTag() async throws -> String? {
        try await fileSystem.item(at: layout.wholeStoreFile(documentIdentifier, client: clientIdentifier))?
            .wholeStoreTag
    }

    /// Moves one staged file into `WholeStore/<client>/`, replacing the previous one atomically.
    open func publishStagedFile(name: String) async throws {
        let destination = layout.wholeStoreDirectory(documentIdentifier, client: clientIdentifier)
        try await fileSystem.createDirectory(at: destination)
        try await fileSystem.move(
            from: layout.temporaryWholeStoreDirectory(documentIdentifier, client: clientIdentifier).appending(name),
            to: destination.appending(name), replacing: true)
    }
}
