import Foundation
import Logging

/// Staging local changes into change sets, publishing them, and writing this client's recent-sync marker.
extension SynchronizationOperation {
    func stageLocalChanges(_ state: inout LocalSyncState, dependencies: [String: Int64], _ run: inout Run) throws {
        let directory = localLayout.stagedSyncChangesDirectory
        // A file numbered at or past the next sequence was written by a staging that never committed.
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            if let sequence = RemoteLayout.changeSetSequence(ofFileName: name), sequence >= state.progress.nextSequence
            {
                try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
            } else if TemporaryName.isTemporary(name) {
                try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
            }
        }
        let splitter = ChangeSetSplitter(
            clientIdentifier: clientIdentifier, schemaVersion: store.schemaVersion,
            firstSequence: state.progress.nextSequence,
            createdAt: environment.now(), dependencies: dependencies, partByteLimit: partByteLimit
        ) { sequence in
            // A set numbered past what a file name holds could never be published: said, not left staged in silence.
            guard sequence <= RemoteLayout.maximumSequence else {
                let folder = self.layout.syncChangesDirectory(self.documentIdentifier, client: self.clientIdentifier)
                throw FolderSyncError(
                    .corruptFile,
                    "this client's change sets reached sequence \(RemoteLayout.maximumSequence), the "
                        + "highest a file name holds (a file in its folder claims that number); its changes stay pending",
                    path: folder.description)
            }
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
        defer { writer.abandon() }  // after a failure, or when there was nothing to stage
        let count = try store.stageChanges(
            sequence: state.progress.nextSequence, emit: writer.add,
            seal: {
                try writer.finish()
                // Every part's name exists by now: the folder goes to disk while the parts' bytes do (two fsyncs at
                // once, not one after the other; either took up to 4 ms on a busy disk).
                let folderSynced = LocalFiles.syncDirectoryInBackground(directory.path)
                defer { folderSynced.wait() }
                parts = try splitter.finish()
                folderSynced.wait()
                return parts.last?.header.sequence ?? state.progress.nextSequence
            })
        if count > 0, let last = parts.last {
            if !referencesAttachments { run.stagedWithoutAttachments.formUnion(parts.map(\.url.lastPathComponent)) }
            state.progress = try store.loadSyncState().progress
            environment.logger.debug(
                "Staged \(count) changes in \(parts.count) change set(s) up to \(last.header.sequence)")
        }
    }

    /// How many change sets a sync uploads at once.
    static let concurrentPublications = 4

    /// The staged change sets not published yet, in sequence order. A file of a set published before a crash that
    /// came before its removal is removed.
    func stagedChangeSets(_ state: LocalSyncState) throws -> [(name: String, sequence: Int64)] {
        let directory = localLayout.stagedSyncChangesDirectory
        var staged: [(name: String, sequence: Int64)] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            guard let sequence = RemoteLayout.changeSetSequence(ofFileName: name),
                sequence < state.progress.nextSequence
            else { continue }
            if sequence <= state.progress.publishedSequence {
                try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
            } else {
                staged.append((name, sequence))
            }
        }
        return staged.sorted { $0.sequence < $1.sequence }
    }

    /// Publishes the staged sets (attachments they reference first), then writes this client's marker with
    /// `acknowledgement` (`nil`: the marker is not written).
    ///
    /// When the sets are small (``RecentSync/inlineChangeSetLimit``), the marker carries their bytes and is written
    /// while they upload: over a wide-area link, two round trips (PUT, then MOVE) instead of four. A reader may then
    /// see the marker before the files, and takes the sets from the marker; a reader that comes later finds the
    /// files, since this client writes its next marker only after publishing again whatever is still staged. A
    /// marker written when a set's upload failed names a set the folder lacks and says more than the store marked
    /// published: the next sync knows it by the staged file of that name (``checkOwnHistory(_:prefetched:_:_:)``).
    func publish(
        _ staged: [(name: String, sequence: Int64)], _ state: inout LocalSyncState,
        announcing acknowledgement: [String: Int64]?, _ run: inout Run
    ) async throws {
        let directory = localLayout.stagedSyncChangesDirectory
        // Attachments first: the remote has what a set references before the set (or a marker carrying it) appears.
        for (name, _) in staged where !run.stagedWithoutAttachments.contains(name) {
            // Reading a set again only to find its attachments cost a third of publishing millions of changes.
            try await publishAttachments(referencedBy: directory.appendingPathComponent(name), &run)
        }
        let names = staged.map(\.name)
        let announced = Array((state.remote.recentlyPublished + names).suffix(RecentSync.announcedChangeSetLimit))
        var marker: (recent: RecentSync, data: Data)?
        if let acknowledgement {
            let contents = try inlineContents(of: names)
            let recent = RecentSync(
                clientIdentifier: clientIdentifier, lastSyncDate: environment.now().wholeSeconds,
                publishedSequence: staged.last?.sequence ?? state.progress.publishedSequence,
                acknowledgement: acknowledgement, schemaVersion: store.schemaVersion,
                recentChangeSets: announced, changeSetContents: contents, installation: installation,
                waitingFor: run.report.missingChangeSets.isEmpty ? nil : run.report.missingChangeSets,
                formerIdentity: state.remote.formerIdentity,
                awaiting: state.remote.awaitedClients.isEmpty ? nil : state.remote.awaitedClients)
            marker = (recent, try PropertyListFile.encode(recent))
        }
        // Written with the sets when it carries them all, after them otherwise.
        let together = marker?.recent.changeSetContents != nil
        if together { emit(.phase(.writingRecentSync)) }
        // A marker that failed beside sets that went out: they are marked published all the same, then it throws.
        let failedMarker = try await upload(staged, marker: together ? marker?.data : nil, &run)
        if let last = staged.last {
            state.remote.recentlyPublished = announced
            if together, failedMarker == nil, let marker {
                // All this sync tells the remote is out: saved with the sets marked published, one commit for both.
                var settled = state.remote
                settled.announce(marker.recent)
                settled.ownRecentSyncEtag = nil
                countPublished(&settled, &run)
                try store.markPublished(throughSequence: last.sequence, savingRemoteKnowledge: settled)
            } else {
                try store.markPublished(throughSequence: last.sequence)
            }
            state.progress = try store.loadSyncState().progress
            for name in names { try? FileManager.default.removeItem(at: directory.appendingPathComponent(name)) }
        }
        if let failedMarker { throw failedMarker }
        guard let marker else { return }
        if !together {
            emit(.phase(.writingRecentSync))
            if let failed = try await upload([], marker: marker.data, &run) { throw failed }
        }
        state.remote.announce(marker.recent)
        if installation != nil { run.announcedInstallation = true }
        // Its version tag, so that the next sync does not read it back: asked after a sync that published nothing.
        // One that published does not wait for it (a round trip over a wide-area link): the next sync reads the
        // marker back with its first requests (``checkOwnHistory(_:prefetched:_:_:)``).
        if staged.isEmpty {
            state.remote.ownRecentSyncEtag = try await fetchOwnRecentSyncVersionTag()
            run.report.remoteRequests += 1
        } else {
            state.remote.ownRecentSyncEtag = nil
        }
    }

    /// The bytes of the staged sets `names` for a marker to carry, or `nil` when there are none or they are too large.
    private func inlineContents(of names: [String]) throws -> [String: Data]? {
        guard !names.isEmpty, context.policy.carriesChangeSetsInMarkers else { return nil }
        let directory = localLayout.stagedSyncChangesDirectory
        var contents: [String: Data] = [:]
        var total = 0
        for name in names {
            let url = directory.appendingPathComponent(name)
            let size = LocalFiles.size(of: url).map { Int(clamping: $0) } ?? Int.max
            total += size
            guard total <= RecentSync.inlineChangeSetLimit else { return nil }
            contents[name] = try Data(contentsOf: url)
        }
        return contents
    }

    /// Uploads `staged` (a few at a time: over HTTP each set waits for its PUT and MOVE round trips, not for
    /// bandwidth) and the marker `data` beside them. Readers apply a client's sets in sequence order whatever order
    /// they appear in. Throws when a set fails; returns the marker's error, once every set went out.
    private func upload(_ staged: [(name: String, sequence: Int64)], marker data: Data?, _ run: inout Run) async throws
        -> (any Error)?
    {
        enum Upload {
            case changeSet(ChangeSetHeader, Int64)
            case marker(Result<Int, any Error>)
        }
        let directory = localLayout.stagedSyncChangesDirectory
        return try await withThrowingTaskGroup(of: Upload.self) { group in
            if let data {
                group.addTask {
                    do {
                        try Task.checkCancellation()
                        try await self.writeRecentSync(data)
                        return .marker(.success(data.count))
                    } catch {
                        return .marker(.failure(error))
                    }
                }
            }
            var next = staged.makeIterator()
            func publishNext() throws {
                guard let (name, _) = next.next() else { return }
                let url = directory.appendingPathComponent(name)
                let header = try ChangeSetReader.readHeader(at: url, path: url.path)
                // stat: Foundation's attributes cast an NSNumber (0.6 M instructions)
                let size = LocalFiles.size(of: url) ?? 0
                group.addTask {
                    try Task.checkCancellation()
                    try await self.publishChangeSet(from: url, name: name)
                    return .changeSet(header, size)
                }
            }
            for _ in 0..<Self.concurrentPublications { try publishNext() }
            var markerError: (any Error)?
            while let upload = try await group.next() {
                switch upload {
                case .changeSet(let header, let size):
                    run.report.remoteRequests += 1
                    run.report.changeSetsSent += 1
                    run.report.changesSent += header.changeCount
                    run.report.bytesSent += size
                    emit(.transferred(sent: run.report.bytesSent, received: run.report.bytesReceived))
                    try publishNext()
                case .marker(.success(let size)):
                    run.report.remoteRequests += 1
                    run.report.bytesSent += Int64(size)
                case .marker(.failure(let error)):
                    markerError = error
                }
            }
            return markerError
        }
    }
}
