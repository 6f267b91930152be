import Foundation

/// The only changes the doctor makes: what cannot lose data.
extension RemoteTreeDoctor {
    /// Applies the safe repairs of `report`'s findings and returns what was done.
    ///
    /// Removes temporaries older than the grace period, moves corrupt files into
    /// `<appID>/Quarantine/<timestamp>/` under their path relative to the application folder,
    /// so nothing is deleted that a person might want back, and completes a document whose creation stopped half
    /// way. Does nothing in a tree whose layout is newer than this build's.
    public func repair(_ report: DoctorReport) async throws -> [DoctorRepairAction] {
        guard report.isRepairable, report.applicationIdentifier == layout.applicationIdentifier else { return [] }
        let batch = layout.quarantineDirectory.appending(Self.quarantineName(for: now()))
        var done: [DoctorRepairAction] = []
        for finding in report.findings {
            guard let repair = finding.repair else { continue }
            let path = try RemotePath(finding.path)
            guard path.hasPrefix(layout.applicationDirectory), path != layout.applicationDirectory else { continue }
            switch repair {
            case .remove:
                guard TemporaryName.isTemporary(path.name) else { continue } // the only thing ever removed
                try await fileSystem.remove(path)
                done.append(DoctorRepairAction(action: .remove, path: path.description))
            case .quarantine:
                guard try await fileSystem.item(at: path) != nil else { continue }
                let destination = path.components.dropFirst().reduce(batch) { $0.appending($1) }
                try await fileSystem.createDirectory(at: destination.parent)
                try await fileSystem.move(from: path, to: destination, replacing: false)
                done.append(DoctorRepairAction(action: .quarantine, path: path.description, destination: destination.description))
            case .writeIntegrityKey:
                guard let key = try await keyCompletingCreation(document: path.parent.name) else { continue }
                let document = path.parent.name
                try await fileSystem.writeIntegrityKey(key, of: document, layout: layout)
                done.append(DoctorRepairAction(action: .writeIntegrityKey, path: layout.integrityKeyFile(document, key: key).description))
            }
        }
        return done
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

    /// `20260102T030405Z`: sorts by time and is a valid file name everywhere.
    static func quarantineName(for date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        return formatter.string(from: date)
    }
}
