public import Foundation

/// The document's removed area, for operators: what it keeps, and putting it back (`foldersync removed`).
extension DocumentMaintenance {
    /// The removals the document's removed area keeps, oldest first, each with its record and files.
    public func removals() async throws -> [RemovalListing] {
        do {
            let area = RemovedArea(fileSystem: remote, layout: layout, document: documentIdentifier)
            var listings: [RemovalListing] = []
            for removal in try await area.removals() {
                listings.append(RemovalListing(folder: removal.folder, record: await area.record(of: removal), date: removal.date,
                                               files: try await area.files(of: removal)))
            }
            return listings
        } catch {
            throw FolderSyncError.wrapping(error, "listing the removed files of document \(documentIdentifier) failed")
        }
    }

    /// Puts back what the removed area keeps: every file of every removal, or only those of `client` (its change sets,
    /// recent sync and whole store), of removals made at or after `since` by the folder's clock. A file goes back only
    /// where nothing is again (a whole store only into an empty `WholeStore/<client>/`, its manifest last, so that it
    /// appears whole); interrupted writes (temporaries) stay. What was put back may be removed again by a later vacuum
    /// when nobody needs it.
    public func restoreRemoved(client: String? = nil, since: Date? = nil) async throws -> RemovalRestoreReport {
        if let client { try Identifier.validate(client, role: "client identifier") }
        do {
            var report = RemovalRestoreReport()
            for removal in try await removals() where since.map({ since in removal.date.map { $0 >= since } ?? false }) ?? true {
                let files = removal.files.filter { file in
                    !TemporaryName.isTemporary(file.originalPath.name) && client.map { belongs(file.originalPath, to: $0) } ?? true
                }
                // A manifest after its store: a store without its manifest is not published, the reverse would be.
                let ordered = files.sorted { ($0.originalPath.name == RemoteLayout.appliedSyncChangeSetsFileName ? 1 : 0, $0.path)
                    < ($1.originalPath.name == RemoteLayout.appliedSyncChangeSetsFileName ? 1 : 0, $1.path) }
                var refusedStores = Set<RemotePath>()
                for file in ordered {
                    let destination = file.originalPath
                    let isWholeStore = destination.parent.parent == layout.wholeStoreDirectory(documentIdentifier)
                    if isWholeStore, refusedStores.contains(destination.parent) { continue }
                    if isWholeStore, destination.name == RemoteLayout.wholeStoreFileName,
                       !(try await remote.contentsOfDirectoryIfPresent(at: destination.parent).isEmpty) {
                        refusedStores.insert(destination.parent)
                        report.skipped.append(.init(path: file.path, reason: "the client has a whole store again; this one stays"))
                        continue
                    }
                    try await remote.createDirectory(at: destination.parent)
                    do {
                        try await remote.move(from: file.path, to: destination, replacing: false)
                        report.restored.append(destination)
                    } catch FolderSyncError.Code.remoteItemExists {
                        report.skipped.append(.init(path: file.path, reason: "something is at \(destination) again; this stays"))
                    }
                }
            }
            return report
        } catch {
            throw FolderSyncError.wrapping(error, "restoring the removed files of document \(documentIdentifier) failed")
        }
    }

    /// Whether a path of the document is one of `client`'s own files.
    private func belongs(_ path: RemotePath, to client: String) -> Bool {
        let document = documentIdentifier
        return path == layout.recentSyncFile(document, client: client)
            || [layout.syncChangesDirectory(document, client: client), layout.wholeStoreDirectory(document, client: client),
                layout.temporaryWholeStoreDirectory(document, client: client)].contains { path.hasPrefix($0) }
    }
}
