import Foundation
import Logging

/// Staging local changes into change sets, publishing them, and writing this client's recent-sync marker.
extension SynchronizationOperation {
    func stageLocalChanges(_ state: inout LocalSyncState, dependencies: [String: Int64]) throws {
        let directory = localLayout.stagedSyncChangesDirectory
        // A file numbered at or past the next sequence was written by a staging that never committed.
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            if let parsed = RemoteLayout.parseChangeSetFileName(name), parsed.sequence >= state.progress.nextSequence {
                try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
            } else if TemporaryName.isTemporary(name) {
                try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
            }
        }
        let splitter = ChangeSetSplitter(
            clientIdentifier: clientIdentifier, schemaVersion: store.schemaVersion, firstSequence: state.progress.nextSequence,
            createdAt: environment.now(), dependencies: dependencies, partByteLimit: partByteLimit) { sequence in
                let identifier = self.environment.makeIdentifier()
                let name = RemoteLayout.changeSetFileName(sequence: sequence, changeSetIdentifier: identifier)
                return .init(url: directory.appendingPathComponent(name), changeSetIdentifier: identifier)
            }
        var parts: [ChangeSetSplitter.Part] = []
        var referencesAttachments = false
        // Encoding, compressing and writing run on a thread of their own while the store reads the next changes.
        let writer = BackgroundBatchConsumer<SyncChange> { changes in
            for change in changes {
                let stored = try self.storingLargeValues(of: change)
                if !referencesAttachments, stored.referencesAttachment { referencesAttachments = true }
                try splitter.append(stored)
            }
        }
        defer { writer.abandon() }   // after a failure, or when there was nothing to stage
        let count = try store.stageChanges(sequence: state.progress.nextSequence, emit: writer.add, seal: {
            try writer.finish()
            parts = try splitter.finish()
            LocalFiles.syncDirectory(directory.path)
            return parts.last?.header.sequence ?? state.progress.nextSequence
        })
        if count > 0, let last = parts.last {
            if !referencesAttachments { stagedWithoutAttachments.formUnion(parts.map(\.url.lastPathComponent)) }
            state.progress = try store.loadSyncState().progress
            environment.logger.debug("Staged \(count) changes in \(parts.count) change set(s) up to \(last.header.sequence)")
        }
    }

    /// How many change sets a sync uploads at once.
    static let concurrentPublications = 4

    func publishStagedChangeSets(_ state: inout LocalSyncState) async throws {
        let directory = localLayout.stagedSyncChangesDirectory
        var staged: [(String, Int64)] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            guard let sequence = RemoteLayout.parseChangeSetFileName(name)?.sequence, sequence < state.progress.nextSequence else { continue }
            if sequence <= state.progress.publishedSequence {
                // Published before a crash that came before this file's removal.
                try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
            } else {
                staged.append((name, sequence))
            }
        }
        staged.sort { $0.1 < $1.1 }
        guard let last = staged.last else { return }
        // Attachments first: the remote has what a set references before the set appears.
        for (name, _) in staged where !stagedWithoutAttachments.contains(name) {
            // Reading a set again only to find its attachments cost a third of publishing millions of changes.
            try await publishAttachments(referencedBy: directory.appendingPathComponent(name))
        }
        // A few uploads at a time: over HTTP each set waits for its PUT and MOVE round trips, not for bandwidth.
        // Readers apply a client's sets in sequence order whatever order they appear in, and learn of them from
        // the marker written once all are published.
        try await withThrowingTaskGroup(of: (ChangeSetHeader, Int64).self) { group in
            var next = staged.makeIterator()
            func publishNext() throws {
                guard let (name, _) = next.next() else { return }
                let url = directory.appendingPathComponent(name)
                let header = try ChangeSetReader.readHeader(at: url, path: url.path)
                let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int64) ?? 0
                group.addTask {
                    try Task.checkCancellation()
                    try await self.publishChangeSet(from: url, name: name)
                    return (header, size)
                }
            }
            for _ in 0..<Self.concurrentPublications { try publishNext() }
            while let (header, size) = try await group.next() {
                report.remoteRequests += 1
                report.changeSetsSent += 1
                report.changesSent += header.changeCount
                report.bytesSent += size
                emit(.transferred(sent: report.bytesSent, received: report.bytesReceived))
                try publishNext()
            }
        }
        try store.markPublished(throughSequence: last.1)
        state.progress = try store.loadSyncState().progress
        state.remote.recentlyPublished = Array((state.remote.recentlyPublished + staged.map(\.0)).suffix(RecentSync.announcedChangeSetLimit))
        for (name, _) in staged { try? FileManager.default.removeItem(at: directory.appendingPathComponent(name)) }
    }

    /// Writes this client's marker; returns the date it holds.
    func writeOwnRecentSync(_ state: LocalSyncState, acknowledgement: [String: Int64]) async throws -> Date {
        let recent = RecentSync(clientIdentifier: clientIdentifier, lastSyncDate: environment.now().wholeSeconds,
                                publishedSequence: state.progress.publishedSequence, acknowledgement: acknowledgement,
                                schemaVersion: store.schemaVersion, recentChangeSets: state.remote.recentlyPublished)
        let data = try PropertyListFile.encode(recent)
        try await writeRecentSync(data)
        report.remoteRequests += 1
        report.bytesSent += Int64(data.count)
        return recent.lastSyncDate
    }

}
