import CFileSystem
public import Foundation
import Logging

extension FolderSyncError {
    /// Whether the error says a whole store cannot be used, so that another one (or the change sets) is used instead:
    /// damaged, of a newer format, or claiming more than this disk can take (a damaged size field, or a zlib bomb).
    var isUnusableWholeStore: Bool {
        isDamagedFile || code == .unsupportedFormatVersion
            || (code == .localStoreFailed && path?.hasSuffix(RemoteLayout.wholeStoreFileName) == true)
    }
}

/// Downloads the whole store that covers the most change sets and installs it in place of the local data.
///
/// Stores are chosen by what their manifests say they contain, never by file dates. A store is installed
/// only if its file matches its manifest (size, checksum, identifier) and passes its own checksum; one that
/// fails (being replaced, or damaged) is skipped for the next best. Local changes not yet published survive:
/// the store re-applies them as new changes. The change sets the store does not contain are applied by the
/// next sync.
///
/// `@unchecked Sendable`: an `open` class cannot be checked `Sendable`; its context, store and options are
/// `let`s, and what a run fetched is a value it returns.
open class WholeStoreDownloadOperation: DocumentOperation, @unchecked Sendable {
    /// What a download is asked to do beside where: whom to tell before and after the local data is replaced, and
    /// how the manager installs the store. Set before the operation is made; a backend subclass built with
    /// ``WholeStoreDownloadOperation/init(copying:)`` receives the same value.
    public struct Options: Sendable {
        /// Tells the manager's delegate that the local data is about to be replaced by a whole store.
        public var willReplace: @Sendable (WholeStoreManifest) async -> Void
        /// Tells the manager's delegate that the whole store replaced the local data.
        public var didReplace: @Sendable (WholeStoreManifest) async -> Void
        /// Runs once a store was found, before it replaces anything: a bootstrap checks there that the remote is
        /// still this client's epoch and the client is not deleted (only when there is a store, so it costs nothing
        /// otherwise).
        var checkBeforeInstalling: (@Sendable () async throws -> Void)?
        /// Where the snapshot is written: a scratch folder of its own, on the file system of whatever it is installed
        /// in (`nil`: one in the helper folder).
        var workDirectory: URL?
        /// Whether the snapshot becomes the store's file, to be fsynced: then the disk writes it while it arrives.
        var snapshotBecomesStore = false
        /// Whether a candidate is checked against the store's declared schema before it is chosen; an export, whose
        /// store is made from the snapshot's own schema afterwards, checks it at install only.
        var checksSchemaOfCandidates = true

        /// Options; `willReplace` is called with the chosen store's manifest just before it replaces the local
        /// data, `didReplace` once it has.
        public init(
            willReplace: @escaping @Sendable (WholeStoreManifest) async -> Void = { _ in },
            didReplace: @escaping @Sendable (WholeStoreManifest) async -> Void = { _ in }
        ) {
            self.willReplace = willReplace
            self.didReplace = didReplace
        }
    }

    /// Where and as whom the operation works, the manager's policy, and where events go.
    public let context: DocumentOperationContext
    /// The local data a downloaded whole store replaces.
    public let store: any SnapshottingModelAdapter
    /// The callbacks and how the store is installed.
    public let options: Options
    /// Tells the manager's delegate that the local data is about to be replaced by a whole store.
    public var willReplace: @Sendable (WholeStoreManifest) async -> Void { options.willReplace }
    /// Tells the manager's delegate that the whole store replaced the local data.
    public var didReplace: @Sendable (WholeStoreManifest) async -> Void { options.didReplace }

    /// What one download fetched of the attachments its store references, and what the remote lacked.
    struct AttachmentsFetched {
        var count = 0
        var bytes: Int64 = 0
        var gone: [GoneAttachment] = []

        mutating func add(_ other: AttachmentsFetched) {
            count += other.count
            bytes += other.bytes
            gone += other.gone
        }
    }

    /// An operation ready to ``run(covering:)``: it replaces `store`'s data as `options` say, from where `context`
    /// says.
    public init(context: DocumentOperationContext, store: any SnapshottingModelAdapter, options: Options = Options()) {
        self.context = context
        self.store = store
        self.options = options
    }

    /// The operation `standard` is, for a backend subclass to run with its own steps: the same context, store and
    /// options, so that nothing the manager set is lost.
    public init(copying standard: WholeStoreDownloadOperation) {
        context = standard.context
        store = standard.store
        options = standard.options
    }

    /// Installs the best whole store; returns its manifest, or `nil` when the remote has no usable one.
    ///
    /// - Parameter missing: per client, a sequence the store must contain (a vacuumed change set); a store that
    ///   covers none of them is not worth installing, since a listing that lags behind looks the same.
    public func run(covering missing: [String: Int64] = [:]) async throws -> WholeStoreManifest? {
        try await perform(covering: missing).manifest
    }

    /// Installs the best whole store, as ``run(covering:)`` does; returns its manifest (`nil`: none was usable) and
    /// what it fetched of the attachments the store references.
    ///
    /// `install` installs the verified snapshot and returns the store that now holds it; `nil`: the store's
    /// ``SnapshottingModelAdapter/restoreSnapshot(from:covers:localClient:)``. A new device's first open puts the
    /// snapshot in place of a store it has not opened yet instead (``DocumentSyncManager/openStore(at:_:)``).
    func perform(
        covering missing: [String: Int64] = [:],
        install: ((_ snapshot: URL, _ manifest: WholeStoreManifest) throws -> any SnapshottingModelAdapter)? = nil
    )
        async throws -> (manifest: WholeStoreManifest?, attachmentsFetched: AttachmentsFetched)
    {
        var fetched = AttachmentsFetched()
        let work =
            options.workDirectory
            ?? localLayout.helperDirectory.appendingPathComponent("WholeStoreDownload", isDirectory: true)
        try? FileManager.default.removeItem(at: work)
        try LocalFiles.createDirectory(work)
        defer { try? FileManager.default.removeItem(at: work) }
        let lock = try await FileLock.acquire(localLayout.syncLockFile)
        defer { lock.release() }
        let snapshot = work.appendingPathComponent("snapshot.sqlite")
        guard let manifest = try await bestWholeStore(into: snapshot, covering: missing) else { return (nil, fetched) }
        try await options.checkBeforeInstalling?()
        // A store whose uploader counted no reference is not searched for them.
        let holdsLargeValues =
            manifest.attachmentReferenceCount == 0 ? false : try await fetchAttachments(of: snapshot, &fetched)
        await willReplace(manifest)
        let installed: any SnapshottingModelAdapter
        if let install {
            installed = try install(snapshot, manifest)
        } else {
            // Forgotten before the install, as the state's rule asks: a crash after it must not leave the listing
            // of clients that left no marker counted as done for a store that may cover less of them.
            try store.updateRemoteKnowledge { $0.forgetClientListing() }
            try store.restoreSnapshot(from: snapshot, covers: manifest.covers, localClient: clientIdentifier)
            installed = store
        }
        // Only a store that references large values has any to put back (another pass over every row otherwise).
        if holdsLargeValues, let store = installed as? any LargeValueRestoring {
            try store.restoreLargeValues(from: localLayout.attachmentStore)
        }
        await didReplace(manifest)
        environment.logger.info(
            "Installed whole store \(manifest.wholeStoreIdentifier) of client \(manifest.clientIdentifier)")
        return (manifest, fetched)
    }

    /// Finds the whole store that covers the most, downloads and verifies it, and decompresses it into `snapshot`.
    ///
    /// Returns `nil` when there is none; throws the last error when every candidate failed verification.
    func bestWholeStore(into snapshot: URL, covering missing: [String: Int64] = [:]) async throws -> WholeStoreManifest?
    {
        var candidates: [WholeStoreManifest] = []
        for client in try await fetchWholeStoreClients() {
            let path = layout.appliedSyncChangeSetsFile(documentIdentifier, client: client)
            guard let data = try await fetchManifest(client: client),
                let manifest = try? PropertyListFile.decode(
                    WholeStoreManifest.self, from: data, path: path.description),
                manifest.clientIdentifier == client, manifest.schemaVersion <= store.schemaVersion,
                missing.isEmpty || missing.contains(where: { (manifest.covers[$0.key] ?? 0) >= $0.value })
            else { continue }
            candidates.append(manifest)
        }
        candidates.sort { ($0.coveredCount, $0.clientIdentifier) > ($1.coveredCount, $1.clientIdentifier) }
        var lastError: (any Error)?
        for manifest in candidates {
            let path = layout.wholeStoreFile(documentIdentifier, client: manifest.clientIdentifier).description
            do {
                // One pass: the file is checked (its trailer, its manifest's size and checksum) and its snapshot
                // written while it is read; nothing is installed from a file that fails at the end.
                let file = try await readWholeStore(
                    client: manifest.clientIdentifier, into: snapshot, path: path,
                    total: Int64(manifest.wholeStoreByteCount))
                try manifest.check(file, path: path)
                try store.checkSnapshotSchemaVersion(file.header.snapshotSchemaVersion, path: path)
                // Refused here rather than at install, so that the next store is tried: tables, views or columns the
                // store does not declare.
                if options.checksSchemaOfCandidates { try store.checkSnapshot(at: snapshot) }
                return manifest
            } catch let error as FolderSyncError where error.isUnusableWholeStore || error.code == .remoteItemNotFound {
                environment.logger.warning("Skipping whole store of \(manifest.clientIdentifier): \(error)")
                lastError = error
            }
        }
        if let lastError { throw lastError }
        return nil
    }

    /// Downloads the attachments a snapshot references, before it is installed: large values always, files by
    /// policy. One the remote lacks is reported as gone; its column keeps the reference. Returns whether the
    /// snapshot references any large value. What it fetched is added to `attachmentsFetched`.
    private func fetchAttachments(of snapshot: URL, _ attachmentsFetched: inout AttachmentsFetched) async throws -> Bool
    {
        guard store is any LargeValueRestoring else { return false }
        let transfer = AttachmentTransfer(
            fileSystem: fileSystem, layout: layout, documentIdentifier: documentIdentifier,
            local: localLayout.attachmentStore, emit: emit)
        var unavailable = Set<String>()
        let references = try AttachmentScan.references(inSnapshot: snapshot, path: snapshot.path)
        for (key, reference) in references
        where !transfer.local.contains(reference) && (reference.isInlineValue || attachmentDownloads == .eager) {
            let gone = GoneAttachment(key: key, reference: reference, path: transfer.remotePath(reference).description)
            guard !unavailable.contains(reference.sha256) else {
                attachmentsFetched.gone.append(gone)
                continue
            }
            do {
                attachmentsFetched.bytes += try await transfer.download(reference)
                attachmentsFetched.count += 1
            } catch let error as FolderSyncError where error.code == .attachmentGone || error.code == .corruptFile {
                unavailable.insert(reference.sha256)
                attachmentsFetched.gone.append(gone)
            }
        }
        return references.contains { $0.1.isInlineValue }
    }

    // MARK: Backend steps

    /// The clients that have a folder in `WholeStore/`.
    open func fetchWholeStoreClients() async throws -> [String] {
        try await fileSystem.contentsOfDirectoryIfPresent(at: layout.wholeStoreDirectory(documentIdentifier))
            .filter { $0.kind == .directory && !$0.name.hasPrefix(".") }.map(\.name)
    }

    /// Reads a client's `AppliedSyncChangeSets.ticdsync`, or `nil`.
    open func fetchManifest(client: String) async throws -> Data? {
        try await fileSystem.readIfPresent(
            layout.appliedSyncChangeSetsFile(documentIdentifier, client: client),
            maximumSize: PropertyListFile.maximumByteCount)
    }

    /// Reads a client's whole store into `snapshot` in pieces (``readWholeStore(client:_:)``), checked as it is read,
    /// telling the event streams how many of its `total` bytes arrived after each piece.
    private func readWholeStore(client: String, into snapshot: URL, path: String, total: Int64) async throws
        -> WholeStoreReader.Result
    {
        let reader = try WholeStoreReader(
            snapshot: snapshot, path: path,
            startWriteback: options.snapshotBecomesStore
                ? { fd, offset, length in
                    // A hint: the fsync before the rename is what counts.
                    _ = foldersync_start_writeback(fd, offset, length)
                } : nil)
        var received: Int64 = 0
        emit(.wholeStoreTransfer(direction: .download, bytes: 0, total: total))
        try await readWholeStore(client: client) { piece in
            try reader.consume(piece)
            received += Int64(piece.count)
            emit(.wholeStoreTransfer(direction: .download, bytes: received, total: max(total, received)))
        }
        return try reader.finish()
    }

    /// Reads a client's `WholeStore.ticdsync` from start to end, handing `body` each piece as it arrives
    /// (``RemoteFileSystem/readPieces(of:size:_:)``): the caller checks and unpacks it on the way.
    open func readWholeStore(client: String, _ body: (Data) throws -> Void) async throws {
        try await fileSystem.readPieces(
            of: layout.wholeStoreFile(documentIdentifier, client: client), size: 1 << 20, body)
    }
}
