import Foundation

/// The only changes the doctor makes: what cannot lose data.
extension RemoteTreeDoctor {
    /// Who the doctor's removals name in their records.
    static let actorIdentifier = "foldersync doctor"

    /// Applies the safe repairs of `report`'s findings and returns what was done.
    ///
    /// Moves temporaries older than the grace period and corrupt files into the removed area of their document (or
    /// of the application, for application files), under their path, so nothing is deleted that a person might want
    /// back; puts change sets a removed area keeps back where a gap lacks them; completes a document whose creation
    /// stopped half way. Does nothing in a tree whose layout is newer than this build's.
    public func repair(_ report: DoctorReport) async throws -> [DoctorRepairAction] {
        guard report.isRepairable, report.applicationIdentifier == layout.applicationIdentifier else { return [] }
        var removals: [RemotePath: RemovedArea.Removal] = [:]
        var done: [DoctorRepairAction] = []
        for finding in report.findings {
            guard let repair = finding.repair else { continue }
            let path = try RemotePath(finding.path)
            guard path.hasPrefix(layout.applicationDirectory), path != layout.applicationDirectory else { continue }
            switch repair {
            case .remove, .quarantine:
                if repair == .remove, !TemporaryName.isTemporary(path.name) { continue }  // only temporaries go unasked
                guard try await fileSystem.item(at: path) != nil else { continue }
                let area = removedArea(for: path)
                let removal: RemovedArea.Removal
                if let begun = removals[area.root] {
                    removal = begun
                } else {
                    removal = try await area.begin(.repair, by: Self.actorIdentifier, at: now())
                    removals[area.root] = removal
                }
                try await area.makeFolders(for: [path], in: removal)
                let destination = removal.destination(of: path)
                try await fileSystem.moveAside(path, to: destination)
                done.append(
                    DoctorRepairAction(action: repair, path: path.description, destination: destination.description))
            case .restore:
                let original = layout.publishedPath(of: path)
                guard original != path, try await fileSystem.item(at: path) != nil,
                    try await fileSystem.item(at: original) == nil
                else { continue }
                try await fileSystem.createDirectory(at: original.parent)
                do {
                    try await fileSystem.move(from: path, to: original, replacing: false)
                } catch FolderSyncError.Code.remoteItemExists {
                    continue  // published again meanwhile
                }
                done.append(
                    DoctorRepairAction(action: .restore, path: path.description, destination: original.description))
            case .writeIntegrityKey:
                guard let key = try await keyCompletingCreation(document: path.parent.name) else { continue }
                let document = path.parent.name
                try await fileSystem.writeIntegrityKey(key, of: document, layout: layout)
                done.append(
                    DoctorRepairAction(
                        action: .writeIntegrityKey, path: layout.integrityKeyFile(document, key: key).description))
            }
        }
        return done
    }

    /// The removed area a file goes to: its document's, or the application's for a file outside any document.
    private func removedArea(for path: RemotePath) -> RemovedArea {
        let components = path.components
        if components.count > 3, components[1] == layout.documentsDirectory.name {
            return RemovedArea(fileSystem: fileSystem, layout: layout, document: components[2])
        }
        return RemovedArea(fileSystem: fileSystem, layout: layout)
    }

    /// The key that completes `document`, read again now (``DocumentInfo``'s `keyCompletingCreation`): a client may
    /// have written it since the examination, or the document been deleted.
    private func keyCompletingCreation(document: String) async throws -> String? {
        let infoPath = layout.documentInfoFile(document)
        let info = try await unlessDamaged {
            try await fileSystem.readIfPresent(infoPath, maximumSize: PropertyListFile.maximumByteCount)
        }.flatMap { try? PropertyListFile.decode(DocumentInfo.self, from: $0, path: infoPath.description) }
        let keys = try await fileSystem.integrityKeys(of: document, layout: layout)
        let deleted = try await fileSystem.exists(layout.deletedDocumentFile(document))
        return DocumentInfo.keyCompletingCreation(of: document, info: info, keysPresent: keys, deleted: deleted)
    }
}
