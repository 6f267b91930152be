import Foundation
import Logging

/// Downloading change sets, each at most once per sync, into the helper folder.
///
/// A downloaded set is read from disk three times, and at most five, each pass for an invariant:
/// 1. `ChangeSetReader.verify`, as it arrives: the checksum and the header, before anything trusts a byte of it;
/// 2. the prescan (``ChangeSetPrescan``), started when the download ends and run while other sets download: the
///    attachments it references and whether it deletes, so that a set without deletes needs no fail-safe pass;
/// 3. only a set with deletes, when a deletion fail-safe is set: its deletes alone (the other records skipped
///    undecoded), counting the rows all new sets would delete before any is applied;
/// 4. only when local changes wait to be published and the app has a resolver: the conflicts, whose answers
///    must be in before the transaction that applies the set begins;
/// 5. the apply, in one transaction with the ledger entry.
extension SynchronizationOperation {
    /// The set's header and local copy, downloaded at most once per sync; `nil` when the remote does not have it:
    /// its marker announced it but reads lag behind writes, or a listing showed it and a vacuum removed it since.
    /// Its client's folder is then listed again (see ``run()``): a gap there fetches a whole store, as any vacuumed
    /// set does; otherwise the client waits for the next sync.
    func downloadOnce(_ candidate: Available, _ run: inout Run) async throws -> Downloaded? {
        if let done = run.downloaded[candidate.path.description] { return done }
        guard !run.notYetVisible.contains(candidate.client), !run.unreadable.contains(candidate.client) else {
            return nil
        }
        do {
            let done = try await download(candidate, &run)
            run.downloaded[candidate.path.description] = done
            return done
        } catch let error as FolderSyncError where error.code == .remoteItemNotFound {
            run.notYetVisible.insert(candidate.client)
            return nil
        } catch let error as FolderSyncError where error.isDamagedFile {
            // This client's sets wait from this one on; the others go on.
            run.unreadable.insert(candidate.client)
            warnUnreadable(error, "change set \(candidate.sequence) of client \(candidate.client)", &run)
            return nil
        } catch let error as FolderSyncError where error.code == .unsupportedFormatVersion {
            // A newer app's file: parked with its client's later sets, like a set of a newer schema.
            run.unreadable.insert(candidate.client)
            run.report.parkedChangeSets.append(candidate.path.description)
            run.report.warnings.append(
                SyncWarning(kind: .changeSetParked, message: error.message, path: candidate.path.description))
            return nil
        }
    }

    /// A change set downloaded and verified in this sync: its header, local copy and its prescan.
    struct Downloaded {
        var header: ChangeSetHeader
        var url: URL
        /// Started when the set was downloaded; runs while the sync downloads or applies others.
        var prescan: BackgroundPrescan
    }

    /// What the set's prescan found, once it is done; `nil` when the set is damaged (its client then waits). A set
    /// the prescan finds damaged (a read that caught a replacement half done) is downloaded once more, as a damaged
    /// download is.
    func prescan(_ candidate: Available, _ run: inout Run) async throws -> ChangeSetPrescan? {
        let path = candidate.path.description
        guard let set = run.downloaded[path] else {
            throw FolderSyncError(.corruptFile, "the change set was not downloaded", path: path)
        }
        do {
            do {
                return try await set.prescan.result()
            } catch let error as FolderSyncError where error.isDamagedFile {
                environment.logger.debug("Downloading \(candidate.path) again: \(error)")
                let again = try await download(candidate, &run)
                run.downloaded[path] = again
                return try await again.prescan.result()
            }
        } catch let error as FolderSyncError where error.isDamagedFile {
            run.unreadable.insert(candidate.client)
            warnUnreadable(
                FolderSyncError(.corruptFile, "the change set is damaged", path: path),
                "change set \(candidate.sequence) of client \(candidate.client)", &run)
            return nil
        }
    }

    func download(_ candidate: Available, _ run: inout Run) async throws -> Downloaded {
        let url = localLayout.downloadsDirectory.appendingPathComponent(candidate.name)
        var header: ChangeSetHeader?
        // A change set is written once, but re-published after a crash: a read can catch that replacement half
        // done on servers whose replace is not atomic, so a damaged download is fetched once more. Bytes a marker
        // carried (and a marker is checksummed) are taken first, without a request.
        for attempt in 1...2 where header == nil {
            do {
                if attempt == 1, let contents = candidate.contents {
                    // A scratch copy, like every download: `Data.write` would fsync it (a new file's fsync: 1.5–9 ms
                    // here, the largest part of a sync that applies one small set).
                    try LocalFiles.writeReplacing(url, durably: false) { write in try write(contents) }
                } else {
                    if candidate.path.parent
                        != layout.syncChangesDirectory(documentIdentifier, client: candidate.client)
                    {
                        try await downloadRemovedChangeSet(candidate.path, to: url)  // healing from the removed area
                    } else {
                        try await downloadChangeSet(client: candidate.client, name: candidate.name, to: url)
                    }
                    run.report.remoteRequests += 1
                    run.report.bytesReceived += LocalFiles.size(of: url) ?? 0
                    emit(.transferred(sent: run.report.bytesSent, received: run.report.bytesReceived))
                }
                header = try ChangeSetReader.verify(at: url, path: candidate.path.description)
            } catch let error as FolderSyncError where error.isDamagedFile && attempt == 1 {
                environment.logger.debug("Downloading \(candidate.path) again: \(error)")
            }
        }
        guard let header else {
            throw FolderSyncError(.corruptFile, "the change set is damaged", path: candidate.path.description)
        }
        let expected = RemoteLayout.parseChangeSetFileName(candidate.name)
        guard header.clientIdentifier == candidate.client, header.sequence == candidate.sequence,
            header.changeSetIdentifier == expected?.changeSetIdentifier
        else {
            try? FileManager.default.removeItem(at: url)
            throw FolderSyncError(
                .corruptFile, "the change set's header does not match its name and folder",
                path: candidate.path.description)
        }
        let size = LocalFiles.size(of: url).map { Int(clamping: $0) }
        return Downloaded(
            header: header, url: url,
            prescan: BackgroundPrescan(changeSet: url, path: candidate.path.description, byteCount: size))
    }

    /// A change set's changes, as ``ChangeSetReader/forEachChange(at:path:_:)`` delivers them, read (file, zlib,
    /// decoding) on a thread of their own a few hundred changes ahead of `body`: applying a large set costs what
    /// SQLite costs, not SQLite plus decoding.
    /// A set of at most ``readAheadByteLimit`` bytes is read on the caller's thread: a thread started for a few changes
    /// cost more than reading them.
    static func forEachChangeReadingAhead(at url: URL, path: String, _ body: (SyncChange) throws -> Void) throws {
        if let size = LocalFiles.size(of: url), size <= readAheadByteLimit {
            return try ChangeSetReader.forEachChange(at: url, path: path, body)
        }
        try BatchHandoff<SyncChange>.run(
            produce: { handoff in
                var batch: [SyncChange] = []
                batch.reserveCapacity(readAheadBatchSize)
                try ChangeSetReader.forEachChange(at: url, path: path) { change in
                    batch.append(change)
                    guard batch.count == readAheadBatchSize else { return }
                    try handoff.send(batch)
                    batch.removeAll(keepingCapacity: true)
                }
                if !batch.isEmpty { try handoff.send(batch) }
            },
            consume: { batch in
                for change in batch { try body(change) }
            })
    }

    static let readAheadBatchSize = 256
    /// The largest change set read without a thread of its own (compressed bytes).
    static let readAheadByteLimit: Int64 = 16 * 1024
}
