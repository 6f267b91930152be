import Foundation

/// The checks of single files: does each decode and verify, and does it say what its path says.
extension RemoteTreeDoctor {
    func checkFiles(_ examination: inout Examination) async throws {
        for walked in examination.items {
            let path = walked.path
            // Paths below the application folder: components[1] is the area, [2] the client or document.
            let document = path.components.count > 3 && path.components[1] == "Documents" ? path.components[2] : nil
            if let document {
                examination.documentFacts[document, default: DocumentFacts()].record(walked, layout: layout)
            }
            guard walked.entry.kind == .file else { continue }
            switch walked.entry.format {
            case "change-set":
                if let document { try await checkChangeSet(walked, document: document, &examination) }
            case "recent-sync":
                guard let document,
                    let recent = try await decode(RecentSync.self, walked, repair: .quarantine, &examination)
                else { continue }
                expectIdentity(
                    recent.clientIdentifier, RemoteLayout.parseRecentSyncFileName(path.name) ?? path.name, "client",
                    path, &examination)
                examination.documentFacts[document]?.recentSyncs[recent.clientIdentifier] = recent
            case "applied-change-sets":
                guard let document,
                    let manifest = try await decode(WholeStoreManifest.self, walked, repair: .quarantine, &examination)
                else { continue }
                expectIdentity(manifest.clientIdentifier, path.parent.name, "client", path, &examination)
                // Only published stores cover anything (a staged manifest may never be published), and only once
                // their file is read whole and matches the manifest, as vacuum requires.
                guard !path.components.contains("TemporaryFiles") else { continue }
                let uploaderDeleted =
                    examination.documentFacts[document]?.deletedClients.contains(manifest.clientIdentifier) ?? false
                if try await checkWholeStore(
                    of: manifest, path: path.parent.appending(RemoteLayout.wholeStoreFileName),
                    uploaderDeleted: uploaderDeleted, &examination)
                {
                    examination.documentFacts[document]?.manifests.append(manifest)
                }
            case "plist":
                try await checkPropertyList(walked, document: document, &examination)
            case "attachment":
                try await checkAttachment(walked, &examination)
            case "integrity-key":
                if let document { examination.documentFacts[document]?.integrityKeys.append(path.name) }
            default:
                break  // ReadMe.txt, whole-store snapshots: their readers check them when they use them.
            }
        }
    }

    private func checkPropertyList(_ walked: Examination.Walked, document: String?, _ examination: inout Examination)
        async throws
    {
        let path = walked.path
        let stem = String(path.name.dropLast(".plist".count))
        switch (walked.entry.pattern.split(separator: "/").last ?? "", document) {
        case ("deviceInfo.plist", _):
            // Every registration rewrites it, so a corrupt one is safe to move aside.
            if let info = try await decode(DeviceInfo.self, walked, repair: .quarantine, &examination) {
                expectIdentity(info.clientIdentifier, path.parent.name, "client", path, &examination)
                examination.registeredClients.insert(path.parent.name)
            }
        case ("documentInfo.plist", let document?):
            // Not quarantined: without it the next registration would create a new document (a new epoch).
            if let info = try await decode(DocumentInfo.self, walked, repair: nil, &examination) {
                expectIdentity(info.documentIdentifier, document, "document", path, &examination)
                examination.documentFacts[document]?.documentInfo = info
            }
        case ("<clientID>.plist", _):
            // Markers mean something by existing: never moved.
            if let info = try await decode(DeletedClientInfo.self, walked, repair: nil, &examination) {
                expectIdentity(info.clientIdentifier, stem, "client", path, &examination)
            }
        case ("<documentID>.plist", _):
            examination.deletedDocuments.insert(stem)  // a marker deletes by existing, as sync reads it
            if let info = try await decode(DeletedDocumentInfo.self, walked, repair: nil, &examination) {
                expectIdentity(info.documentIdentifier, stem, "document", path, &examination)
            }
        default:
            break  // FormatVersion.plist was checked first.
        }
    }

    /// Reads and decodes a property list; a corrupt or newer file becomes a finding and `nil`.
    private func decode<Payload: PropertyListPayload>(
        _ type: Payload.Type, _ walked: Examination.Walked,
        repair: DoctorFinding.Repair?, _ examination: inout Examination
    ) async throws -> Payload? {
        do {
            // A file larger than any property list is refused by its size, unread, as a corrupt one.
            guard
                let data = try await fileSystem.readIfPresent(
                    walked.path, maximumSize: PropertyListFile.maximumByteCount)
            else {
                return nil  // removed since the listing
            }
            return try PropertyListFile.decode(type, from: data, path: walked.path.description)
        } catch let error as FolderSyncError where error.code == .unsupportedFormatVersion {
            examination.add(.warning, .unsupportedVersion, walked.path, error.message + "; a newer client reads it")
        } catch let error as FolderSyncError where error.isDamagedFile {
            examination.add(
                .error, .corruptPropertyList, walked.path,
                error.message
                    + (repair == nil ? "; restore it by hand (moving it aside would change its meaning)" : ""),
                repair: repair)
        }
        return nil
    }

    private func checkChangeSet(_ walked: Examination.Walked, document: String, _ examination: inout Examination)
        async throws
    {
        let path = walked.path
        guard let parsed = RemoteLayout.parseChangeSetFileName(path.name) else { return }
        let client = path.parent.name
        var header: ChangeSetHeader?
        do {
            header = try await withLocalCopy(of: path) { url in
                try ChangeSetReader.verify(at: url, path: path.description)
            }
        } catch let error as FolderSyncError where error.code == .unsupportedFormatVersion {
            examination.add(.warning, .unsupportedVersion, path, error.message + "; a newer client reads it")
        } catch let error as FolderSyncError where error.isDamagedFile {
            examination.add(.error, .corruptChangeSet, path, error.message, repair: .quarantine)
        } catch FolderSyncError.Code.remoteItemNotFound {
            return  // vacuumed since the listing
        }
        examination.documentFacts[document]?.changeSets[client, default: []]
            .append(.init(path: path, sequence: parsed.sequence, header: header))
        guard let header else { return }
        var disagreements: [String] = []
        if header.clientIdentifier != client {
            disagreements.append("client \(header.clientIdentifier), folder \(client)")
        }
        if header.sequence != parsed.sequence {
            disagreements.append("sequence \(header.sequence), name \(parsed.sequence)")
        }
        if header.changeSetIdentifier != parsed.changeSetIdentifier {
            disagreements.append("identifier \(header.changeSetIdentifier), name \(parsed.changeSetIdentifier)")
        }
        if !disagreements.isEmpty {
            examination.add(
                .error, .unappliableChangeSet, path,
                "the header disagrees with the file's place (" + disagreements.joined(separator: "; ")
                    + "): no client applies it")
        }
    }

    /// Reads a published whole store whole and checks it against its manifest; a damaged or missing one is an error
    /// (it covers nothing: change sets only it contained are lost to new devices). Returns whether it is sound.
    ///
    /// A damaged store is not moved aside: its uploader, which replaces it, finds it by reading it through (once a day)
    /// or by its version tag (a file replaced); a store gone from its place is replaced only when no other is left.
    private func checkWholeStore(
        of manifest: WholeStoreManifest, path: RemotePath, uploaderDeleted: Bool,
        _ examination: inout Examination
    ) async throws -> Bool {
        do {
            let file = try await WholeStoreReader.verify(path: path.description) { body in
                try await fileSystem.readPieces(of: path, size: 1 << 20, body)
            }
            try manifest.check(file, path: path.description)
            return true
        } catch let error as FolderSyncError where error.code == .unsupportedFormatVersion {
            examination.add(.warning, .unsupportedVersion, path, error.message + "; a newer client reads it")
        } catch let error as FolderSyncError where error.isDamagedFile {
            let uploader = "its uploader, client \(manifest.clientIdentifier),"
            examination.add(
                .error, .corruptWholeStore, path,
                error.message + "; it covers nothing. "
                    + (uploaderDeleted
                        ? uploader + " is deleted and will not replace it"
                        : uploader
                            + " uploads a new one at its first sync once it has read the store through (it does once a day) "
                            + "or seen the file replaced"))
        } catch FolderSyncError.Code.remoteItemNotFound {
            examination.add(
                .error, .corruptWholeStore, path,
                "the manifest describes a whole store that is not there; it covers nothing")
        }
        return false
    }

    /// Verifies an attachment's contents against the SHA-256 that names it.
    private func checkAttachment(_ walked: Examination.Walked, _ examination: inout Examination) async throws {
        let path = walked.path
        guard AttachmentReference.isValidName(path.name) else {
            examination.add(
                .error, .corruptAttachment, path,
                "an attachment's name must be the 64 lowercase hex digits of its SHA-256",
                repair: .quarantine)
            return
        }
        do {
            try await withLocalCopy(of: path) { url in
                try AttachmentFile.verify(url, sha256: path.name, path: path.description)
            }
        } catch let error as FolderSyncError where error.code == .unsupportedFormatVersion {
            examination.add(.warning, .unsupportedVersion, path, error.message + "; a newer client reads it")
        } catch let error as FolderSyncError where error.code == .corruptFile {
            examination.add(
                .error, .corruptAttachment, path, error.message + "; rows that reference it get it as gone",
                repair: .quarantine)
        } catch FolderSyncError.Code.remoteItemNotFound {
            return  // vacuumed since the listing
        }
    }

    private func expectIdentity(
        _ found: String, _ expected: String, _ role: String, _ path: RemotePath, _ examination: inout Examination
    ) {
        guard found != expected else { return }
        examination.add(.error, .identityMismatch, path, "names \(role) \(found), but its path says \(expected)")
    }

    /// Runs `body` on a local file holding `path`: the file itself for a local tree, a downloaded copy otherwise.
    func withLocalCopy<T>(of path: RemotePath, _ body: (URL) throws -> T) async throws -> T {
        if let local = fileSystem as? FileManagerFileSystem { return try body(local.url(for: path)) }
        let folder = try LocalFiles.privateScratchDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent(path.name)
        try await fileSystem.download(path, toLocalFile: url)
        return try body(url)
    }
}

extension DocumentFacts {
    /// Notes the clients a walked item belongs to, and the document-level files that exist.
    mutating func record(_ walked: Examination.Walked, layout: RemoteLayout) {
        let pattern = walked.entry.pattern
        let name = walked.path.name
        if pattern.hasSuffix("/<clientID>/") {
            clients.insert(name)
        } else if pattern.hasSuffix("<clientID>.recentsync"), let client = RemoteLayout.parseRecentSyncFileName(name) {
            clients.insert(client)
        } else if pattern.hasSuffix("DeletedClients/<clientID>.plist") {
            deletedClients.insert(String(name.dropLast(".plist".count)))
        } else if pattern.hasSuffix("/documentInfo.plist") {
            hasDocumentInfo = true
        }
    }
}
