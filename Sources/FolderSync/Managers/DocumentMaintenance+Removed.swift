public import Foundation

/// The document's removed area, for operators: what it keeps, and putting it back (`foldersync removed`).
extension DocumentMaintenance {
    /// The removals the document's removed area keeps, then the deletions of the document the application's removed
    /// area keeps (its whole folder, each with the files it held), oldest first, each with its record and files.
    public func removals() async throws -> [RemovalListing] {
        do {
            return try await areaRemovals() + (try await deletions().map(\.listing))
        } catch {
            throw FolderSyncError.wrapping(error, "listing the removed files of document \(documentIdentifier) failed")
        }
    }

    /// Puts back what the removed area keeps: every file of every removal, or only those of `client` (its change sets,
    /// recent sync and whole store), of removals made at or after `since` by the folder's clock. A file goes back only
    /// where nothing is again (a whole store only into an empty `WholeStore/<client>/`, its manifest last, so that it
    /// appears whole); interrupted writes (temporaries) stay. What was put back may be removed again by a later vacuum
    /// when nobody needs it.
    ///
    /// A deleted document comes back first, when no `client` is named: its folder, as the newest deletion made at or
    /// after `since` moved it into the application's removed area, goes back in one move, then its deletion marker is
    /// removed, so that devices sync it again (``DocumentSyncManager/rejoin()`` resumes a device that stopped on
    /// ``FolderSyncError/Code/documentDeleted``). A document created again since its deletion keeps its folder.
    public func restoreRemoved(client: String? = nil, since: Date? = nil) async throws -> RemovalRestoreReport {
        if let client { try Identifier.validate(client, role: "client identifier") }
        do {
            var report = RemovalRestoreReport()
            if client == nil { try await restoreDeletedDocument(since: since, into: &report) }
            for removal in try await areaRemovals()
            where since.map({ since in removal.date.map { $0 >= since } ?? false }) ?? true {
                let files = removal.files.filter { file in
                    !TemporaryName.isTemporary(file.originalPath.name)
                        && client.map { belongs(file.originalPath, to: $0) } ?? true
                }
                // A manifest after its store: a store without its manifest is not published, the reverse would be.
                let ordered = files.sorted {
                    ($0.originalPath.name == RemoteLayout.appliedSyncChangeSetsFileName ? 1 : 0, $0.path)
                        < ($1.originalPath.name == RemoteLayout.appliedSyncChangeSetsFileName ? 1 : 0, $1.path)
                }
                var refusedStores = Set<RemotePath>()
                for file in ordered {
                    let destination = file.originalPath
                    let isWholeStore = destination.parent.parent == layout.wholeStoreDirectory(documentIdentifier)
                    if isWholeStore, refusedStores.contains(destination.parent) { continue }
                    if isWholeStore, destination.name == RemoteLayout.wholeStoreFileName,
                        !(try await fileSystem.contentsOfDirectoryIfPresent(at: destination.parent).isEmpty)
                    {
                        refusedStores.insert(destination.parent)
                        report.skipped.append(
                            .init(path: file.path, reason: "the client has a whole store again; this one stays"))
                        continue
                    }
                    try await fileSystem.createDirectory(at: destination.parent)
                    do {
                        try await fileSystem.move(from: file.path, to: destination, replacing: false)
                        report.restored.append(destination)
                    } catch FolderSyncError.Code.remoteItemExists {
                        report.skipped.append(
                            .init(path: file.path, reason: "something is at \(destination) again; this stays"))
                    }
                }
            }
            return report
        } catch {
            throw FolderSyncError.wrapping(
                error, "restoring the removed files of document \(documentIdentifier) failed")
        }
    }

    /// The removals the document's own removed area keeps, oldest first.
    private func areaRemovals() async throws -> [RemovalListing] {
        let area = RemovedArea(fileSystem: fileSystem, layout: layout, document: documentIdentifier)
        var listings: [RemovalListing] = []
        for removal in try await area.removals() {
            listings.append(
                RemovalListing(
                    folder: removal.folder, record: await area.record(of: removal), date: removal.date,
                    files: try await area.files(of: removal)))
        }
        return listings
    }

    /// A deletion of the document the application's removed area keeps: the removal, and where in it the folder is.
    private struct Deletion {
        let listing: RemovalListing
        let folder: RemotePath
    }

    /// The deletions of the document the application's removed area keeps, oldest first: removals of a document
    /// deletion that hold the document's folder, each listed with the files of that folder alone.
    private func deletions() async throws -> [Deletion] {
        let area = RemovedArea(fileSystem: fileSystem, layout: layout)
        let document = layout.documentDirectory(documentIdentifier)
        var deletions: [Deletion] = []
        for removal in try await area.removals() {
            guard let record = await area.record(of: removal), record.operation == .documentDeletion else { continue }
            let folder = RemovedArea.Removal(folder: removal.folder, base: area.base).destination(of: document)
            guard try await fileSystem.item(at: folder)?.kind == .directory else { continue }
            let files = try await area.files(of: removal).filter { $0.originalPath.hasPrefix(document) }
            deletions.append(
                Deletion(
                    listing: RemovalListing(folder: removal.folder, record: record, date: removal.date, files: files),
                    folder: folder))
        }
        return deletions
    }

    /// Brings the deleted document back: its folder from the newest deletion made at or after `since`, in one move,
    /// then its deletion marker goes. In this order a device never finds the document missing without a marker (which
    /// it would take for a wipe), and one that registers meanwhile finds it deleted, as before. A document that is
    /// there (created again since, or put back by a restore that stopped before the marker went) keeps its folder;
    /// a marker beside it goes.
    private func restoreDeletedDocument(since: Date?, into report: inout RemovalRestoreReport) async throws {
        let folder = layout.documentDirectory(documentIdentifier)
        let marker = layout.deletedDocumentFile(documentIdentifier)
        let newest = try await deletions().last { deletion in
            since.map { since in deletion.listing.date.map { $0 >= since } ?? false } ?? true
        }
        if try await fileSystem.exists(layout.documentInfoFile(documentIdentifier)) {
            if let newest {
                report.skipped.append(
                    .init(path: newest.folder, reason: "document \(documentIdentifier) is there again; this stays"))
            }
        } else if let newest {
            do {
                try await fileSystem.move(from: newest.folder, to: folder, replacing: false)
            } catch FolderSyncError.Code.remoteItemExists {
                report.skipped.append(.init(path: newest.folder, reason: "something is at \(folder) again; this stays"))
                return
            }
            report.restored += newest.listing.files.map(\.originalPath)
        } else {
            return
        }
        if try await fileSystem.exists(marker) { try await fileSystem.remove(marker) }
    }

    /// Whether a path of the document is one of `client`'s own files.
    private func belongs(_ path: RemotePath, to client: String) -> Bool {
        let document = documentIdentifier
        return path == layout.recentSyncFile(document, client: client)
            || [
                layout.syncChangesDirectory(document, client: client),
                layout.wholeStoreDirectory(document, client: client),
                layout.temporaryWholeStoreDirectory(document, client: client),
            ].contains { path.hasPrefix($0) }
    }
}
