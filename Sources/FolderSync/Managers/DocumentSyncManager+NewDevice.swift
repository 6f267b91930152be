public import Foundation
import Logging

/// A new device's first start: its store is made from the remote's best whole store before the app opens it,
/// so that the downloaded file is put in place by a rename, instead of copied page by page into a store the app
/// holds open (what the first ``synchronize()`` of a new, empty store does: an atomic install through the app's
/// connection writes every page once more).
extension DocumentSyncManager {
    /// Opens this document's store at `url` with `open`; on a new device (no file at `url`), first makes the
    /// file from the remote's best whole store, verified, then put in place with a rename.
    ///
    /// Call it once, on a registered manager created without a store: the store it returns becomes the
    /// manager's ``store``. `open` opens the app's store at the URL it is given (tables, migration): it runs
    /// first on a new scratch file, whose schema, rows of tables that do not sync and header fields complete the
    /// downloaded store, exactly as a page install into an open store keeps them; then on `url`. When the remote
    /// has no usable whole store, `url` is opened new and the first sync starts from the change sets; when the
    /// app's migration writes rows of synced tables, or declares them otherwise than the store, the whole store
    /// is merged into the opened store as the first sync would.
    ///
    /// ```swift
    /// let document = try await DocumentSyncManager(applicationSyncManager: app, registering: configuration)
    /// let store = try await document.openStore(at: url) { url in
    ///     try GRDBStore(path: url.path, tables: [SyncedTable("notes")]) { db in
    ///         try db.execute(sql: "CREATE TABLE IF NOT EXISTS notes(id TEXT PRIMARY KEY NOT NULL, title TEXT)")
    ///     }
    /// }
    /// try await document.synchronize()
    /// ```
    ///
    /// A kill leaves either no file at `url` (the next call starts again) or the whole installed store.
    /// - Throws: ``FolderSyncError/Code/invalidConfiguration`` when the manager has a store already,
    ///   ``FolderSyncError/Code/notRegistered`` before registration, what `open` throws, and the errors of a
    ///   whole-store download (a remote that was reset, or this client deleted, stops it with that error).
    @discardableResult
    public func openStore(at url: URL, _ open: @escaping (URL) throws -> GRDBStore) async throws -> GRDBStore {
        guard store == nil else {
            throw FolderSyncError(.invalidConfiguration, "document \(documentIdentifier) has a local store already")
        }
        guard state == .ableToSync, let integrityKey else {
            throw notRegistered(before: "opening its store")
        }
        let url = url.standardizedFileURL
        guard !FileManager.default.fileExists(atPath: url.path) else { return try adopt(open(url)) }
        // Beside the store, so that the download is renamed into place on the same file system.
        let work = url.deletingLastPathComponent().appendingPathComponent(
            ".\(url.lastPathComponent).foldersync-join", isDirectory: true)
        try? FileManager.default.removeItem(at: work)  // what a killed join left
        try LocalFiles.createDirectory(work)
        defer { try? FileManager.default.removeItem(at: work) }
        let blank = try open(work.appendingPathComponent("new.sqlite"))
        defer { try? blank.close() }
        let opened = Locked<GRDBStore?>(nil)
        var options = wholeStoreDownloadOptions()
        options.workDirectory = work.appendingPathComponent("download", isDirectory: true)
        options.snapshotBecomesStore = true
        let install = {
            [clientIdentifier] (snapshot: URL, manifest: WholeStoreManifest) throws -> any SnapshottingModelAdapter in
            let renamable = try blank.completeForRename(
                snapshot, covers: manifest.covers, localClient: clientIdentifier)
            if renamable { try LocalFiles.placeDurably(snapshot, at: url) }
            let store = try open(url)
            if !renamable {
                try store.restoreSnapshot(from: snapshot, covers: manifest.covers, localClient: clientIdentifier)
            }
            opened.withLock { $0 = store }
            return store
        }
        let download = bootstrapDownloadOperation(integrityKey: integrityKey, store: blank, options: options)
        do {
            _ = try await download.perform(install: install)
        } catch let error as FolderSyncError where error.isUnusableWholeStore {
            // Starting from a whole store saves time; the first sync looks again, or starts from the change sets.
            applicationSyncManager.environment.logger.warning("Opening the store without a whole store: \(error)")
        } catch let error as FolderSyncError {
            throw stopForReset(error)
        }
        return try adopt(opened.current ?? open(url))
    }

    private func adopt(_ store: GRDBStore) -> GRDBStore {
        mutable.withLock { $0.store = store }
        return store
    }
}
