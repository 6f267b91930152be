import Foundation
import Logging

/// A document whose creation stopped half way, and the one rule by which clients and the doctor complete it.
///
/// A creator makes the document's folders, publishes `documentInfo.plist`, then writes `IntegrityKey/<key>`, so one
/// that dies in between leaves a document whose key folder is there and empty. Such a document is consistent: its
/// info names its key, and the key file holds nothing but that name. A wipe or a replacement takes the info or the
/// key folder with it, and a deletion writes its marker first, so an empty `IntegrityKey/` beside an info that reads
/// and no deletion marker is a creation that stopped, never a remote that was reset: whoever finds it writes the key
/// file its creator would have written (the same name and bytes, so two clients completing it at once agree).
extension DocumentInfo {
    /// The key that completes document `document`'s creation: the key `info` names, when `info` read and names the
    /// document with a key that is a safe file name, `IntegrityKey/` is there and holds no key (`keysPresent` is
    /// empty; `nil`: no such folder), no deletion marker exists, and the key is `expected` (the one a client's store
    /// belongs to) when there is one. `nil`: there is nothing to complete.
    static func keyCompletingCreation(
        of document: String, info: DocumentInfo?, keysPresent: [String]?, deleted: Bool,
        expected: String? = nil
    ) -> String? {
        guard let info, info.documentIdentifier == document, keysPresent?.isEmpty == true, !deleted,
            expected.map({ $0 == info.integrityKey }) ?? true,
            (try? Identifier.validate(info.integrityKey, role: "integrity key")) != nil
        else { return nil }
        return info.integrityKey
    }

    /// Completes `document`'s creation with `key`, by `write` (an operation's backend step). A folder that refuses
    /// the write (read-only, full) leaves it for the next client that can write; the document is whole all the same.
    static func completeCreation(
        of document: String, key: String, logger: Logger,
        write: (String) async throws -> Void
    ) async throws {
        logger.notice(
            "Document \(document) lacks its integrity key file (its creation stopped half way): writing \(key)")
        do {
            try await write(key)
        } catch let error as FolderSyncError where error.code == .permissionDenied || error.code == .remoteFull {
            logger.warning("Could not complete document \(document): \(error)")
        }
    }
}

extension SynchronizationOperation {
    /// Whether the document, found with no key file, is one whose creation stopped half way with this client's key: its
    /// key file is then written and the sync goes on. Asked only once `IntegrityKey/` showed no key, the file itself
    /// was not there and no deletion marker was found. A sync that writes nothing, or a folder that refuses the write
    /// (read-only, full), goes on without it: the document is whole all the same, and the next writer completes it.
    func completesHalfCreatedDocument(_ run: inout Run) async throws -> Bool {
        run.report.remoteRequests += 2
        let path = layout.documentInfoFile(documentIdentifier).description
        async let folderExists = integrityKeyDirectoryExists()
        let info = try await fetchDocumentInfoFile()
            .flatMap { try? PropertyListFile.decode(DocumentInfo.self, from: $0, path: path) }
        let keys: [String]? = try await folderExists ? [] : nil
        guard
            let key = DocumentInfo.keyCompletingCreation(
                of: documentIdentifier, info: info, keysPresent: keys,
                deleted: false, expected: integrityKey)
        else { return false }
        guard !isReadOnly else { return true }
        run.report.remoteRequests += 1
        try await DocumentInfo.completeCreation(
            of: documentIdentifier, key: key, logger: environment.logger,
            write: writeIntegrityKeyFile)
        return true
    }
}

extension RemoteFileSystem {
    /// Writes `IntegrityKey/<key>` of `document`: the key and a newline, the same bytes whoever writes it.
    func writeIntegrityKey(_ key: String, of document: String, layout: RemoteLayout) async throws {
        try await write(Data((key + "\n").utf8), to: layout.integrityKeyFile(document, key: key))
    }

    /// The key files in `document`'s `IntegrityKey/` (temporaries left out), or `nil` when there is no such folder.
    func integrityKeys(of document: String, layout: RemoteLayout) async throws -> [String]? {
        do {
            return try await contentsOfDirectory(at: layout.integrityKeyDirectory(document))
                .filter { $0.kind == .file && !$0.name.hasPrefix(".") }.map(\.name)
        } catch let error as FolderSyncError where error.code == .remoteItemNotFound {
            return nil
        }
    }
}
