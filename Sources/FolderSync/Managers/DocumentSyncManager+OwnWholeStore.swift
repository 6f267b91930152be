import Foundation
import Logging

/// This client reading its own whole store through once a day: the only way to notice a store damaged in place,
/// since such damage keeps the file's size and often its version tag (an inode, time and size), which is all the
/// sync's own look compares (``SynchronizationOperation/checkOwnWholeStore(_:tag:_:)``).
extension DocumentSyncManager {
    /// How long this client trusts its own whole store between two reads of it: a day.
    static let ownWholeStoreReadInterval: TimeInterval = 86_400

    /// After a sync, reads this client's whole store through when it was last read (or uploaded) more than
    /// ``ownWholeStoreReadInterval`` ago by this device's clock: one that no longer matches its manifest is owed
    /// again, uploaded by this sync, with a ``SyncWarning/Kind/wholeStoreUnusable`` warning. A read that fails for
    /// another reason (the folder away) is tried again at the next sync.
    func readOwnWholeStoreIfDue(_ report: inout SyncReport, store: any SnapshottingModelAdapter) async throws {
        let remote = try store.loadSyncState().remote
        guard let tag = remote.ownWholeStoreTag, !remote.owesWholeStore else { return }
        let now = applicationSyncManager.environment.now()
        var record = OwnWholeStoreRead(url: localLayout.ownWholeStoreReadFile)
        if let last = record.date(tag: tag), last <= now, now.timeIntervalSince(last) < Self.ownWholeStoreReadInterval {
            return
        }
        let fileSystem = applicationSyncManager.remote
        let manifestPath = layout.appliedSyncChangeSetsFile(documentIdentifier, client: clientIdentifier)
        let storePath = layout.wholeStoreFile(documentIdentifier, client: clientIdentifier)
        do {
            guard
                let data = try await fileSystem.readIfPresent(
                    manifestPath, maximumSize: PropertyListFile.maximumByteCount)
            else {
                return  // gone: the sync's own look finds that by the version tag
            }
            report.remoteRequests += 2
            let manifest = try PropertyListFile.decode(
                WholeStoreManifest.self, from: data, path: manifestPath.description)
            let file = try await WholeStoreReader.verify(path: storePath.description) { body in
                try await fileSystem.readPieces(of: storePath, size: 1 << 20, body)
            }
            report.bytesReceived += Int64(data.count) + file.byteCount
            try manifest.check(file, path: storePath.description)
            record.remember(tag: tag, at: now)
        } catch let error as FolderSyncError where error.isDamagedFile || error.code == .unsupportedFormatVersion {
            report.warnings.append(
                SyncWarning(
                    kind: .wholeStoreUnusable,
                    message:
                        "this client's whole store no longer matches what it uploaded (\(error.message)): a new one is uploaded",
                    path: storePath.description))
            try await oweWholeStore()
        } catch let error as FolderSyncError where error.code != .cancelled {
            applicationSyncManager.environment.logger.debug(
                "Reading this client's whole store failed, tried again later: \(error)")
        }
    }

    /// Remembers that this client's whole store, as it is now on the remote, was just written: its next read is due
    /// a day later.
    func rememberOwnWholeStoreWritten(store: any SnapshottingModelAdapter) throws {
        guard let tag = try store.loadSyncState().remote.ownWholeStoreTag else { return }
        var record = OwnWholeStoreRead(url: localLayout.ownWholeStoreReadFile)
        record.remember(tag: tag, at: applicationSyncManager.environment.now())
    }
}

/// When this client last read its own whole store through, by the store's version tag: a small file in the helper
/// folder, a cache (losing it costs one read of the store).
struct OwnWholeStoreRead {
    private struct Saved: Codable {
        var tag: String
        var date: Date
    }

    private let url: URL
    private var saved: Saved?

    init(url: URL) {
        self.url = url
        saved = (try? LocalFiles.read(url)).flatMap { try? JSONDecoder().decode(Saved.self, from: $0) }
    }

    /// When the store with version tag `tag` was last read or written; `nil` for another store.
    func date(tag: String) -> Date? { saved?.tag == tag ? saved?.date : nil }

    /// Best effort: a record that cannot be written costs a read at the next sync.
    mutating func remember(tag: String, at date: Date) {
        saved = Saved(tag: tag, date: date)
        guard let data = try? JSONEncoder().encode(saved) else { return }
        try? LocalFiles.createDirectory(url.deletingLastPathComponent())
        try? LocalFiles.writeDurably(data, to: url)
    }
}
