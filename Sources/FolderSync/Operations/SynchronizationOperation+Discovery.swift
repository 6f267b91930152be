import Foundation
import Logging

/// Finding what is new: the recent-sync markers whose version tag changed, the change-set folders of clients
/// with news their marker does not name, and this client's own history on the remote (a restored folder, a
/// whole store changed or gone since upload). Costs two requests when nothing is new.
extension SynchronizationOperation {
    func appliedChangeSets(_ run: inout Run) throws -> AppliedChangeSets {
        if let ledger = run.ledger { return ledger }
        let read = try store.appliedChangeSets()
        run.ledger = read
        return read
    }

    /// Per client, the highest sequence up to which every change set is in the ledger.
    func acknowledgement(_ run: inout Run) throws -> [String: Int64] {
        try appliedChangeSets(&run).contiguous
    }

    struct Available {
        var client: String
        var sequence: Int64
        var name: String
        var path: RemotePath
        /// Named by its client's marker rather than seen in a listing: the remote may not show it yet.
        var announced = false
        /// The set's bytes, when a marker read in this sync carried them (``RecentSync/changeSetContents``).
        var contents: Data?

        /// The set's identifier, from its name: what tells two sets under one number apart.
        var changeSetIdentifier: String { RemoteLayout.parseChangeSetFileName(name)?.changeSetIdentifier ?? "" }

        /// The order every device applies a client's sets in: by number, then, for two sets under one number, by
        /// identifier.
        static func appliedBefore(_ lhs: Available, _ rhs: Available) -> Bool {
            (lhs.client, lhs.sequence, lhs.changeSetIdentifier) < (rhs.client, rhs.sequence, rhs.changeSetIdentifier)
        }
    }

    /// Finds the change sets this client has not applied: from the markers in `RecentSyncs/`, reading only those
    /// whose version tag changed, and listing only the folders of clients with news their marker does not name.
    ///
    /// Clients without a marker (deleted, expired) are found too, from what this client knew of them, from the
    /// acknowledgements in other markers, and once after each fresh start from a listing of `SyncChanges/`:
    /// their folders are listed until everything they published is applied.
    /// - Parameters:
    ///   - listing: clients whose folder is listed even when their marker names every set they have new.
    ///   - markers: the listing of `RecentSyncs/` when the caller already asked for it, `nil` to ask for it here.
    ///   - ownSets: the listing of this client's own change sets, asked before a sync that numbers new sets
    ///     (``listsOwnChangeSets(_:)``), checked for sets its store does not know (``checkOwnNumbers(in:_:_:)``).
    ///   - ownMarker: this client's own marker, when the caller read it with the listings.
    func findNewChangeSets(
        _ state: inout LocalSyncState, listing: Set<String> = [],
        markers listed: [RemoteItem]? = nil, ownSets: [RemoteItem]? = nil,
        ownMarker: RecentSyncRead? = nil, _ run: inout Run
    ) async throws -> [Available] {
        let markers: [RemoteItem]
        if let listed { markers = listed } else { markers = try await fetchRecentSyncListing() }
        run.report.remoteRequests += 1
        // Once after a fresh start, SyncChanges/ is listed too (below): asked now, with the markers' reads.
        let listsClients = !state.remote.hasListedClients && !isReadOnly
        async let clientFolders = listsClients ? fetchClientsWithChangeSets() : nil
        if let item = ownRecentSync(in: markers) {
            try await checkOwnHistory(item, prefetched: ownMarker, &state, &run)
        } else if !isReadOnly, state.progress.publishedSequence > 0 {
            // Gone although this client published: deleted (checked next), or a folder restored to before its first
            // marker.
            try await checkOwnChangeSets(after: 0, &state, warning: !ownMarkerRemovedByDeletion, &run)
        }
        if let ownSets {
            run.report.remoteRequests += 1
            try await checkOwnNumbers(in: ownSets, &state, &run)
        }
        let applied = try appliedChangeSets(&run)
        let acknowledged = try acknowledgement(&run)
        var clientsWithNews: [String] = []
        /// Per client, sets its marker names under numbers this client already applied, new since the marker was last
        /// read: a second set under one number (two installations share the client's identity), or one applied already.
        var renamed: [String: [(sequence: Int64, name: String)]] = [:]
        var listedInstead = Set<String>()
        var withMarkers = Set<String>()
        let fetched = await readRecentSyncs(changedIn: markers, state: state, &run)
        // The highest of this client's sets another client says it applied: more than this store published means it
        // went back (a store restored while its marker was gone, or before another client applied it).
        var ownAppliedElsewhere: Int64 = 0
        // The lowest of this client's sets another client says it waits for (missing where it looked).
        var ownAskedFor: Int64?
        // Whether another installation left this client's identity: its sets under numbers this client published too
        // are applied (this client applies no other set of its own identity).
        var ownNumbersShared = false
        for item in markers where item.kind == .file && !TemporaryName.isTemporary(item.name) {
            guard let client = RemoteLayout.parseRecentSyncFileName(item.name) else {
                warnUnknown(layout.recentSyncsDirectory(documentIdentifier).appending(item.name), &run)
                continue
            }
            withMarkers.insert(client)
            if client == clientIdentifier { continue }
            var known = state.remote.knownRecentSyncs[client]
            if Self.hasChanged(item, since: known) {
                let recent: RecentSync?
                do {
                    if let prefetched = fetched[client] {
                        recent = try prefetched.get()
                    } else {
                        recent = try await readRecentSync(client: client, &run)
                    }
                } catch let error as FolderSyncError
                    where error.isDamagedFile || error.code == .unsupportedFormatVersion
                {
                    // Its folder is listed instead: what the marker would have said is what the folder holds.
                    warnUnreadable(error, "the recent sync of client \(client)", &run)
                    clientsWithNews.append(client)
                    listedInstead.insert(client)
                    continue
                }
                guard let recent else { continue }
                if let contents = recent.changeSetContents { run.markerContents[client] = contents }
                ownAppliedElsewhere = max(ownAppliedElsewhere, recent.acknowledgement[clientIdentifier] ?? 0)
                if let asked = recent.waitingFor?[clientIdentifier] { ownAskedFor = min(ownAskedFor ?? asked, asked) }
                for (other, sequence) in recent.acknowledgement where other != client && other != clientIdentifier {
                    state.remote.acknowledgedByOthers[other] = max(
                        state.remote.acknowledgedByOthers[other] ?? 0, sequence)
                }
                if let previous = known, recent.publishedSequence < previous.publishedSequence {
                    // A marker never goes back: this one is an older copy (a restored folder, a provider rolling it
                    // back). What was seen stays known, and the folder is listed for what the marker no longer says.
                    run.report.warnings.append(
                        SyncWarning(
                            kind: .staleRecentSync,
                            message:
                                "client \(client)'s recent sync says it published up to \(recent.publishedSequence), "
                                + "where it said \(previous.publishedSequence) before; the older copy is ignored",
                            path: layout.recentSyncFile(documentIdentifier, client: client).description))
                    known?.etag = item.etag
                    clientsWithNews.append(client)
                    listedInstead.insert(client)
                } else {
                    if let before = known?.installation, let now = recent.installation, before != now {
                        // Another installation wrote it: two may share the client's identity, and publish under one
                        // number. The folder is listed, which shows a second set under a number this client applied.
                        listedInstead.insert(client)
                        clientsWithNews.append(client)
                    }
                    if let former = recent.formerIdentity, known?.installation != recent.installation,
                        DocumentInventory.isIdentifierName(former)
                    {
                        // A client that left a shared identity: the folder of that identity is listed once, for the
                        // sets it published there that a marker of the other installation may have hidden. This client,
                        // when it kept that identity, looks for the sets the other published under numbers it published
                        // too.
                        if former == clientIdentifier { ownNumbersShared = true } else { listedInstead.insert(former) }
                        clientsWithNews.append(former)
                    }
                    // Names new since the marker was last read (not at a first read) under numbers this client
                    // applied: looked up by identifier below.
                    if let seen = known?.recentChangeSets.map(Set.init) {
                        let names = (recent.recentChangeSets ?? []).compactMap {
                            name -> (sequence: Int64, name: String)? in
                            guard !seen.contains(name),
                                let sequence = RemoteLayout.parseChangeSetFileName(name)?.sequence,
                                sequence <= acknowledged[client] ?? 0
                            else { return nil }
                            return (sequence, name)
                        }
                        if !names.isEmpty { renamed[client] = names }
                    }
                    known = .init(
                        etag: item.etag, publishedSequence: recent.publishedSequence,
                        recentChangeSets: recent.recentChangeSets, installation: recent.installation)
                }
                state.remote.knownRecentSyncs[client] = known
            }
            if let known, known.publishedSequence > (acknowledged[client] ?? 0) || renamed[client] != nil {
                clientsWithNews.append(client)
            }
        }
        var ownListing = ownSets
        if !isReadOnly, ownSets == nil, ownAppliedElsewhere > state.progress.publishedSequence,
            !isStaged(through: ownAppliedElsewhere, state)
        {
            // Another client says it applied sets of this client the store does not know: a store restored while its
            // marker was gone. That client's word is a hint to look at the folder, never a number to continue after (a
            // forged marker would make this client number sets no file name holds): this client's own sets there, and,
            // for sets a vacuum removed since, the whole stores that cover them, up to what the hint says.
            let listing = try await fetchChangeSetListing(client: clientIdentifier)
            run.report.remoteRequests += 1
            try await checkOwnNumbers(in: listing, &state, &run)
            ownListing = listing
            let covered = min(try await wholeStoreCoverage(&run), ownAppliedElsewhere)
            if covered > state.progress.publishedSequence {
                try continueAfterRestore(
                    publishedOnRemote: covered, &state,
                    path: layout.wholeStoreDirectory(documentIdentifier).description, &run)
            }
        }
        if !isReadOnly, ownListing != nil || ownAskedFor != nil {
            // Its own sets gone from the folder: looked at whenever it is listed anyway, and when another client waits.
            let listing: [RemoteItem]
            if let ownListing {
                listing = ownListing
            } else {
                listing = try await fetchChangeSetListing(client: clientIdentifier)
                run.report.remoteRequests += 1
            }
            try await checkOwnSetsPresent(in: listing, askedFor: ownAskedFor, &state, &run)
        }
        if let former = state.remote.formerIdentity, state.progress.publishedSequence == 0, former != clientIdentifier {
            // Until this client publishes under its new identity: the sets of the one it left, which the whole store
            // it re-joined from may cover without the other installation's sets under the same numbers.
            listedInstead.insert(former)
            clientsWithNews.append(former)
        }
        if let after = state.progress.ownChangeSetsToReapplyAfter, state.progress.publishedSequence > after {
            clientsWithNews.append(clientIdentifier)
            ownNumbersShared = false
        }
        // Clients without a marker: those that others applied sets of, and, once after a fresh start, every
        // client with a folder in SyncChanges/.
        for (client, sequence) in state.remote.acknowledgedByOthers
        where !withMarkers.contains(client) && sequence > (acknowledged[client] ?? 0) {
            let known = state.remote.knownRecentSyncs[client]
            state.remote.knownRecentSyncs[client] = .init(
                etag: nil, publishedSequence: max(known?.publishedSequence ?? 0, sequence))
        }
        if let folders = try await clientFolders {
            run.report.remoteRequests += 1
            for item in folders
            where item.kind == .directory && !withMarkers.contains(item.name)
                && state.remote.knownRecentSyncs[item.name] == nil && DocumentInventory.isIdentifierName(item.name)
            {
                state.remote.knownRecentSyncs[item.name] = .init(etag: nil, publishedSequence: 0)
            }
            state.remote.hasListedClients = true
        }
        // A client whose marker vanished leaves its change sets until everyone applied them: its folder is listed
        // until everything it published (as far as anyone knows) is applied, then it is forgotten.
        let vanished = Set(
            state.remote.knownRecentSyncs.keys.filter { $0 != clientIdentifier && !withMarkers.contains($0) })
        clientsWithNews += vanished
        var available: [Available] = []
        for client in Set(clientsWithNews).sorted() {
            let directory = layout.syncChangesDirectory(documentIdentifier, client: client)
            if client != clientIdentifier, !vanished.contains(client), !listing.contains(client),
                !listedInstead.contains(client),
                let announced = state.remote.knownRecentSyncs[client]?.announcedChangeSets(
                    after: acknowledged[client] ?? 0)
            {
                // Its marker names every set this client lacks: no listing of a folder of any size. And sets it names
                // under numbers applied already that the ledger does not name there (a number a whole store covered
                // names none: applying such a set again changes nothing).
                var named = announced.filter { !applied.contains($0.sequence, of: client) }
                if let renamed = renamed[client],
                    let identifiers = try store.appliedChangeSetIdentifiers(
                        of: client, sequences: renamed.map(\.sequence))
                {
                    named += renamed.filter {
                        !(identifiers[$0.sequence]?.contains(Self.identifier(of: $0.name)) ?? true)
                    }
                }
                for (sequence, name) in named {
                    available.append(
                        Available(
                            client: client, sequence: sequence, name: name, path: directory.appending(name),
                            announced: true,
                            contents: run.markerContents[client]?[name]))
                }
                continue
            }
            let listing = try await fetchChangeSetListing(client: client)
            run.report.remoteRequests += 1
            var names: [Int64: [String]] = [:]
            for item in listing where item.kind == .file {
                guard let parsed = RemoteLayout.parseChangeSetFileName(item.name) else {
                    if !TemporaryName.isTemporary(item.name) { warnUnknown(directory.appending(item.name), &run) }
                    continue
                }
                if client == clientIdentifier && parsed.sequence > state.progress.publishedSequence { continue }
                names[parsed.sequence, default: []].append(item.name)
            }
            if client == clientIdentifier && ownNumbersShared {
                // Only the numbers both installations published under: its own set there again changes nothing.
                names = names.filter { $0.value.count > 1 }
            }
            for (sequence, name) in try unapplied(names, of: client, applied: applied, &run) {
                available.append(
                    Available(
                        client: client, sequence: sequence, name: name, path: directory.appending(name),
                        contents: run.markerContents[client]?[name]))
            }
            let next = (acknowledged[client] ?? 0) + 1
            let present = Set(available.filter { $0.client == client }.map(\.sequence))
            let published =
                client == clientIdentifier
                ? state.progress.publishedSequence : state.remote.knownRecentSyncs[client]?.publishedSequence ?? 0
            if client == clientIdentifier && ownNumbersShared { continue }
            if vanished.contains(client) && present.isEmpty && published < next {
                // Everything it published, as far as anyone knows, is applied: forget it. A listing that lags
                // behind cannot make it forgotten early: its published sequence says what must be applied first.
                state.remote.knownRecentSyncs[client] = nil
            } else if published >= next, !present.contains(next), present.min().map({ $0 > next }) ?? true {
                // The next set this client needs is gone: vacuum removed it, so only a whole store has its changes, or,
                // when none filled the gap, the removed area.
                let healed =
                    healsFromRemovedArea
                    ? try await changeSetsInRemovedArea(of: client, from: next, before: present.min(), &run) : []
                if healed.isEmpty { run.report.missingChangeSets[client] = next } else { available += healed }
            }
        }
        return available.sorted(by: Available.appliedBefore)
    }

    /// The identifier in a change set's file name (empty for a name that does not parse).
    static func identifier(of name: String) -> String {
        RemoteLayout.parseChangeSetFileName(name)?.changeSetIdentifier ?? ""
    }

    /// The sets of `client` a listing shows (`names`, by number) that this store has not applied. A number that holds
    /// one set counts as applied when the ledger has it (by number: its runs name no set); one that holds more (two
    /// installations of the client published under it) is asked by identifier, so that each of its sets is applied
    /// once, in the order of their identifiers, like everywhere. An adapter that records one set per number
    /// (``ModelAdapter/appliedChangeSetIdentifiers(of:sequences:)`` answers `nil`) applies one of them, as before.
    func unapplied(
        _ names: [Int64: [String]], of client: String,
        applied: AppliedChangeSets, _ run: inout Run
    ) throws -> [(sequence: Int64, name: String)] {
        let shared = names.filter { $0.value.count > 1 }.map(\.key)
        let identifiers = shared.isEmpty ? [:] : try store.appliedChangeSetIdentifiers(of: client, sequences: shared)
        var found: [(sequence: Int64, name: String)] = []
        for (sequence, candidates) in names {
            guard candidates.count > 1, let identifiers else {
                if !applied.contains(sequence, of: client), let name = candidates.min() {
                    found.append((sequence, name))
                }
                continue
            }
            let missing = candidates.filter { !(identifiers[sequence]?.contains(Self.identifier(of: $0)) ?? false) }
                .sorted()
            guard !missing.isEmpty else { continue }
            let sets = candidates.sorted().joined(separator: ", ")
            run.report.warnings.append(
                SyncWarning(
                    kind: .duplicateSequence,
                    message:
                        "client \(client) published \(candidates.count) change sets numbered \(sequence) (\(sets)): "
                        + "two devices share its identity; each set is applied",
                    path: layout.syncChangesDirectory(documentIdentifier, client: client).description))
            found += missing.map { (sequence, $0) }
        }
        return found
    }

    /// This client's own marker in a listing of `RecentSyncs/`, if it is there.
    func ownRecentSync(in markers: [RemoteItem]) -> RemoteItem? {
        markers.first { $0.kind == .file && $0.name == RemoteLayout.recentSyncFileName(client: clientIdentifier) }
    }

    /// Whether a listed marker must be read: never read, or its version tag changed since (or the remote gives none).
    static func hasChanged(_ marker: RemoteItem, since known: LocalSyncState.KnownRecentSync?) -> Bool {
        known == nil || marker.etag == nil || known?.etag != marker.etag
    }

    /// Reads this client's own recent sync back when its version tag changed since it was last read (once after each
    /// of this client's writes, with the sync's first requests: `prefetched`), to find a store or a folder that went
    /// back in time:
    /// - the marker says more was published than the store knows: the store was restored from an earlier copy. It
    ///   continues after the published sequence
    ///   (``ModelAdapter/continueAfterRestore(remotePublishedSequence:localClient:)``), its own sets in between come
    ///   back from the remote, and nothing is ever numbered twice. Unless the sets it names beyond are still staged
    ///   here under the same names: a marker written with its sets, whose upload failed
    ///   (``publish(_:_:announcing:_:)``); this sync publishes them. Another client's marker acknowledging more of this
    ///   client's sets than its store published tells the same
    ///   (``findNewChangeSets(_:listing:markers:ownSets:ownMarker:_:)``);
    /// - the marker says less: the folder was restored from an older copy, or the marker rolled back. The marker is
    ///   written again, and when this client's own sets are gone from the folder, it owes a whole store that
    ///   covers them (uploaded by the manager after this sync), so that the folder heals;
    /// - the marker acknowledges more than the store applied: the store went back. The marker is written again.
    func checkOwnHistory(
        _ item: RemoteItem, prefetched: RecentSyncRead?, _ state: inout LocalSyncState, _ run: inout Run
    ) async throws {
        guard !isReadOnly, item.etag == nil || item.etag != state.remote.ownRecentSyncEtag else { return }
        let path = layout.recentSyncFile(documentIdentifier, client: clientIdentifier).description
        let recent: RecentSync
        do {
            let read: RecentSync?
            if let prefetched {
                run.report.remoteRequests += prefetched.requests
                run.report.bytesReceived += prefetched.bytes
                read = try prefetched.recent.get()
            } else {
                read = try await readRecentSync(client: clientIdentifier, &run)
            }
            guard let read else { return }
            recent = read
        } catch let error as FolderSyncError where error.isDamagedFile || error.code == .unsupportedFormatVersion {
            warnUnreadable(error, "this client's own recent sync", &run)
            run.rewritesOwnRecentSync = true
            return
        }
        try checkInstallation(of: recent, state, &run)
        state.remote.ownRecentSyncEtag = item.etag
        // A marker that acknowledges sets the store no longer holds (it went back) is corrected by this sync: vacuum
        // trusts it. What the store applied since the marker was written waits (SyncPolicy.acknowledgementDelay).
        let held = try acknowledgement(&run)
        if recent.acknowledgement.contains(where: { $0.value > held[$0.key] ?? 0 }) { run.rewritesOwnRecentSync = true }
        if recent.publishedSequence > state.progress.publishedSequence {
            // Every set the marker carried or named beyond, by the name it gave it.
            let names = (recent.recentChangeSets ?? []) + (recent.changeSetContents.map { Array($0.keys) } ?? [])
            guard !isStaged(through: recent.publishedSequence, state, names: names) else { return }
            try continueAfterRestore(publishedOnRemote: recent.publishedSequence, &state, path: path, &run)
        } else if recent.publishedSequence < state.progress.publishedSequence {
            try await checkOwnChangeSets(after: recent.publishedSequence, &state, &run)
        }
    }

    /// Another installation writing this client's marker: after this installation announced its own identifier in a
    /// marker, a marker carrying another, dated no earlier than this installation's last one, was written since by an
    /// installation that shares this client's identity (a copy of this device's store used on another computer).
    /// Otherwise the marker is this installation's past (written before it announced itself: a copy made from it is
    /// the other one, and finds this one by the marker written next; or an older copy put back, by a restore of the
    /// folder or a provider rolling the file back), or an older version's: it is written again, carrying this
    /// installation's identifier. A clock behind by more than the time between the two markers hides the other
    /// installation's marker from this one; this one's marker, written after, then looks newer to the other.
    /// - Throws: ``FolderSyncError/Code/clientIdentityShared`` naming the marker.
    func checkInstallation(of recent: RecentSync, _ state: LocalSyncState, _ run: inout Run) throws {
        guard let installation, recent.installation != installation else { return }
        guard let other = recent.installation else {
            run.rewritesOwnRecentSync = true  // an older version's marker: it names this installation from now on
            return
        }
        guard installationAnnounced, isWrittenSinceAnnouncement(recent, state) else {
            run.rewritesOwnRecentSync = true
            run.report.warnings.append(
                SyncWarning(
                    kind: .staleRecentSync,
                    message:
                        "this client's recent sync was written by another installation of it (\(other)): this device's "
                        + "earlier self, an older copy put back, or the device this one was copied from; it is written again, "
                        + "naming this installation",
                    path: layout.recentSyncFile(documentIdentifier, client: clientIdentifier).description))
            return
        }
        environment.logger.notice(
            "Installation \(other) wrote the recent sync of client \(clientIdentifier) after this one, \(installation)")
        throw FolderSyncError(
            .clientIdentityShared,
            "another device syncs as this client (\(clientIdentifier)): this device's data was copied to it, or from it, "
                + "and both are in use; this device continues as a new client when it re-joins, and nothing is lost",
            path: layout.recentSyncFile(documentIdentifier, client: clientIdentifier).description)
    }

    /// Whether `recent` was written no earlier than this installation's last marker. Dates are whole seconds: a marker
    /// of the same second that announces fewer sets than this installation did is its past (a copy of the folder
    /// made a moment before, put back); were it another installation's, that one finds this one by the marker this
    /// one writes next.
    private func isWrittenSinceAnnouncement(_ recent: RecentSync, _ state: LocalSyncState) -> Bool {
        guard let announced = state.remote.announcedAt else { return false }
        if recent.lastSyncDate != announced { return recent.lastSyncDate > announced }
        return recent.publishedSequence >= state.remote.announcedSequence
    }

    /// Whether every set of this client after its store's published sequence through `sequence` is still staged here
    /// (under its name in `names`, when given): sets that went out (or whose marker did) before the store marked them
    /// published (``publish(_:_:announcing:_:)``), not a store restored from an earlier copy.
    private func isStaged(through sequence: Int64, _ state: LocalSyncState, names: [String]? = nil) -> Bool {
        let staged = localLayout.stagedSyncChangesDirectory
        var stagedNames: [Int64: String] = [:]
        for name in names ?? (try? FileManager.default.contentsOfDirectory(atPath: staged.path)) ?? [] {
            if let parsed = RemoteLayout.parseChangeSetFileName(name) {
                stagedNames[parsed.sequence] = stagedNames[parsed.sequence] ?? name
            }
        }
        return (state.progress.publishedSequence + 1...sequence).allSatisfy { sequence in
            guard sequence < state.progress.nextSequence, let name = stagedNames[sequence] else { return false }
            return FileManager.default.fileExists(atPath: staged.appendingPathComponent(name).path)
        }
    }

    /// Whether this sync lists this client's own change sets before numbering new ones: it has something to publish.
    func listsOwnChangeSets(_ state: LocalSyncState) throws -> Bool {
        try !isReadOnly
            && (state.progress.nextSequence > state.progress.publishedSequence + 1 || store.hasUnpublishedChanges())
    }

    /// Before this client numbers new change sets: its own folder, for sets its store does not know. A store restored
    /// from a copy taken before a sync that published sets but died before writing the marker has nothing else to
    /// tell it so: numbering new sets after its own published sequence would give them numbers those sets hold, and
    /// every reader that applied one would skip the other as applied. Sets this store staged and published before a
    /// crash are its own (same names); any other after its published sequence means a restore: it continues after the
    /// highest, as when its marker says so, and a number missing below that one (its upload never happened: sets go
    /// four at a time) gets an empty set, since readers apply a client's sets in order.
    ///
    /// Only the sets the folder holds after the published sequence, through gaps no wider than one batch of uploads
    /// (``concurrentPublications``), count: a set numbered beyond a wider gap is no set this client's history explains
    /// (a hostile file), and is ignored with a warning, so that every loop here is bounded by what the folder holds.
    func checkOwnNumbers(in listing: [RemoteItem], _ state: inout LocalSyncState, _ run: inout Run) async throws {
        let staged = localLayout.stagedSyncChangesDirectory
        let published = state.progress.publishedSequence
        let directory = layout.syncChangesDirectory(documentIdentifier, client: clientIdentifier)
        var present: [Int64: String] = [:]
        for item in listing where item.kind == .file {
            if TemporaryName.isTemporary(item.name) {
                // Only this client writes here, under its sync lock: a temporary is what an upload killed mid-way left
                // (a marker written beside its sets can die while they upload). Removed now, not left for vacuum.
                try? await fileSystem.remove(directory.appending(item.name))
                run.report.remoteRequests += 1
                continue
            }
            guard let sequence = RemoteLayout.changeSetSequence(ofFileName: item.name, after: published) else {
                continue
            }
            present[sequence] = item.name
        }
        var reached = published
        for sequence in present.keys.sorted() {
            guard sequence - reached <= Int64(Self.concurrentPublications) else {
                run.report.warnings.append(
                    SyncWarning(
                        kind: .unknownFile,
                        message:
                            "ignored a change set numbered \(sequence) in this client's own folder: it published only up to \(reached)",
                        path: directory.appending(present[sequence] ?? "").description))
                break
            }
            reached = sequence
        }
        let unknown = present.contains { sequence, name in
            sequence <= reached
                && (sequence >= state.progress.nextSequence
                    || !FileManager.default.fileExists(atPath: staged.appendingPathComponent(name).path))
        }
        guard unknown, reached > published else { return }
        for sequence in published + 1..<reached where present[sequence] == nil {
            try await publishEmptyChangeSet(sequence: sequence, &run)
        }
        try continueAfterRestore(publishedOnRemote: reached, &state, path: directory.description, &run)
    }

    /// Publishes a change set with no changes under `sequence`, a number this client's sets skip.
    private func publishEmptyChangeSet(sequence: Int64, _ run: inout Run) async throws {
        let identifier = environment.makeIdentifier()
        let name = RemoteLayout.changeSetFileName(sequence: sequence, changeSetIdentifier: identifier)
        let url = localLayout.downloadsDirectory.appendingPathComponent(name)
        defer { try? FileManager.default.removeItem(at: url) }
        _ = try ChangeSetWriter(
            url: url, changeSetIdentifier: identifier, clientIdentifier: clientIdentifier, sequence: sequence,
            schemaVersion: store.schemaVersion, createdAt: environment.now()
        ).finish()
        try await publishChangeSet(from: url, name: name)
        run.report.remoteRequests += 1
    }

    /// The store went back in time: the remote holds this client's change sets up to `remote`, more than it knows.
    /// It continues after them (``ModelAdapter/continueAfterRestore(remotePublishedSequence:localClient:)``), its own
    /// sets in between come back from the remote, and nothing is ever numbered twice.
    private func continueAfterRestore(
        publishedOnRemote remote: Int64, _ state: inout LocalSyncState, path: String, _ run: inout Run
    ) throws {
        let restoredAt = state.progress.publishedSequence
        try store.continueAfterRestore(remotePublishedSequence: remote, localClient: clientIdentifier)
        run.ledger = nil
        state.progress = try store.loadSyncState().progress
        // Saved with the rest at the end of the sync: until then the old announcement is only stale, never wrong
        // (its marker is written again, since it no longer says the published sequence).
        state.remote.forgetAnnouncement()
        // Sets staged under numbers the remote already gave to other changes: their changes are pending again.
        let staged = localLayout.stagedSyncChangesDirectory
        for name in (try? FileManager.default.contentsOfDirectory(atPath: staged.path)) ?? []
        where (RemoteLayout.parseChangeSetFileName(name)?.sequence ?? 0) > restoredAt {
            try? FileManager.default.removeItem(at: staged.appendingPathComponent(name))
        }
        run.report.warnings.append(
            SyncWarning(
                kind: .restoredStore,
                message:
                    "this store was restored from an earlier copy: the remote holds this client's change sets up to "
                    + "\(remote), the store knew only up to \(restoredAt); it continues after "
                    + "\(remote) and applies its own sets in between from the remote", path: path))
    }

    /// Looks at this client's whole store, once per launch and with the heartbeat (one request): one changed since
    /// this client uploaded it (damaged, or put back from an older copy) is not trusted to cover anything, and a new
    /// one is owed. One that is gone was removed by a vacuum, because another store covers more, and is forgotten;
    /// unless no store is left at all (an operator quarantined it): then a new one is owed too.
    /// - Parameter tag: what ``fetchOwnWholeStoreVersionTag()`` answered (asked when the sync began).
    func checkOwnWholeStore(_ state: inout LocalSyncState, tag: String?, _ run: inout Run) async throws {
        run.report.remoteRequests += 1
        guard tag != state.remote.ownWholeStoreTag else { return }
        state.remote.ownWholeStoreTag = nil
        if tag == nil {
            run.report.remoteRequests += 1
            guard try await fetchWholeStoreClients().isEmpty else { return }
        }
        state.remote.owesWholeStore = true
        run.report.warnings.append(
            SyncWarning(
                kind: .wholeStoreUnusable,
                message: "this client's whole store "
                    + (tag == nil
                        ? "is gone and no other is left"
                        : "changed since it uploaded it (damaged, or put back from an older copy)")
                    + ": a new one is uploaded",
                path: layout.wholeStoreFile(documentIdentifier, client: clientIdentifier).description))
    }

    /// This client's marker on the remote says it published only up to `sequence` (or there is none), less than it
    /// did: the folder or the file was restored from an older copy. The marker is written again; when some of its
    /// change sets after `sequence` are gone from the folder, this client owes a whole store that covers them, a debt
    /// saved at once. Said as a warning, unless the marker went with a deletion this client re-joined from (`warning`).
    func checkOwnChangeSets(
        after sequence: Int64, _ state: inout LocalSyncState, warning: Bool = true, _ run: inout Run
    ) async throws {
        run.rewritesOwnRecentSync = true
        let listing = try await fetchChangeSetListing(client: clientIdentifier)
        run.report.remoteRequests += 1
        // Counted, not enumerated: the range is what this client published, the present sets what the folder holds.
        let published = state.progress.publishedSequence
        let present = Set(
            listing.compactMap { RemoteLayout.parseChangeSetFileName($0.name)?.sequence }
                .filter { $0 > sequence && $0 <= published })
        let lost = (published - max(sequence, 0)) - Int64(present.count)
        if lost > 0 {
            // Saved now, not with the rest at the end: this sync rewrites the marker, the only evidence of the loss,
            // and may fail after that (a sync cancelled once the marker went out would leave the debt unpaid).
            state.remote.owesWholeStore = true
            try store.updateRemoteKnowledge { $0.owesWholeStore = true }
        }
        guard warning else { return }
        run.report.warnings.append(
            SyncWarning(
                kind: .staleRecentSync,
                message:
                    "this client's recent sync on the remote says it published up to \(sequence), where it published up to "
                    + "\(state.progress.publishedSequence) (the folder or the file was restored from an older copy); it is written again"
                    + (lost > 0
                        ? ", and \(lost) of its change sets are gone from the folder: a whole store that covers them "
                            + "is uploaded" : ""),
                path: layout.recentSyncFile(documentIdentifier, client: clientIdentifier).description))
    }

    /// Reads another client's recent-sync marker, or `nil` if it vanished.
    func readRecentSync(client: String, _ run: inout Run) async throws -> RecentSync? {
        let read = await loadRecentSync(client: client)
        run.report.remoteRequests += read.requests
        run.report.bytesReceived += read.bytes
        return try read.recent.get()
    }

    /// Reads the markers of other clients whose version tag changed since this client last read them, all at once:
    /// over a wide-area link one after another would cost a round trip each. What each read gave (or threw), by client;
    /// the caller takes them in listing order, as it would have read them.
    func readRecentSyncs(changedIn markers: [RemoteItem], state: LocalSyncState, _ run: inout Run) async -> [String:
        Result<RecentSync?, any Error>]
    {
        var changed: [String] = []
        for item in markers where item.kind == .file && !TemporaryName.isTemporary(item.name) {
            guard let client = RemoteLayout.parseRecentSyncFileName(item.name), client != clientIdentifier else {
                continue
            }
            if Self.hasChanged(item, since: state.remote.knownRecentSyncs[client]) { changed.append(client) }
        }
        guard changed.count > 1 else { return [:] }  // one is read where it is needed
        let reads = await withTaskGroup(of: (String, RecentSyncRead).self) { group in
            for client in changed { group.addTask { (client, await self.loadRecentSync(client: client)) } }
            var reads: [String: RecentSyncRead] = [:]
            for await (client, read) in group { reads[client] = read }
            return reads
        }
        var results: [String: Result<RecentSync?, any Error>] = [:]
        for (client, read) in reads {
            run.report.remoteRequests += read.requests
            run.report.bytesReceived += read.bytes
            results[client] = read.recent
        }
        return results
    }

    /// One marker read: the marker (or `nil`, or the error), and the requests and bytes it took.
    struct RecentSyncRead: Sendable {
        var recent: Result<RecentSync?, any Error>
        var requests = 0
        var bytes: Int64 = 0
    }

    /// Reads a marker without touching the report (reads run concurrently).
    ///
    /// Markers are replaced at every sync; on servers whose replace is not atomic (WebDAV MOVE done as delete
    /// then rename) a read can catch one half written, so a damaged marker is read once more before it counts.
    func loadRecentSync(client: String) async -> RecentSyncRead {
        let path = layout.recentSyncFile(documentIdentifier, client: client).description
        var read = RecentSyncRead(recent: .success(nil))
        for attempt in 1...2 {
            do {
                // Inside the retry: on an encrypted remote, a half-written file fails authentication as it is read.
                guard let data = try await fetchRecentSync(client: client) else { return read }
                read.requests += 1
                read.bytes += Int64(data.count)
                let recent = try PropertyListFile.decode(RecentSync.self, from: data, path: path)
                guard recent.clientIdentifier == client else {
                    throw FolderSyncError(
                        .corruptFile, "the recent sync names client \(recent.clientIdentifier)", path: path)
                }
                read.recent = .success(recent)
                return read
            } catch let error as FolderSyncError where error.isDamagedFile && attempt == 1 {
                environment.logger.debug("Reading \(path) again: \(error)")
            } catch {
                read.recent = .failure(error)
                return read
            }
        }
        return read
    }

    /// Reports a file another client wrote that this sync cannot use.
    func warnUnreadable(_ error: FolderSyncError, _ what: String, _ run: inout Run) {
        run.report.warnings.append(
            SyncWarning(
                kind: .unreadableFile,
                message: "\(what) cannot be used (\(error.message)); the sync went on without it", path: error.path))
    }

    func warnUnknown(_ path: RemotePath, _ run: inout Run) {
        run.report.warnings.append(
            SyncWarning(kind: .unknownFile, message: "ignored a file the layout does not know", path: path.description))
    }
}

extension LocalSyncState.KnownRecentSync {
    /// `(sequence, name)` of every set after `acknowledged` through the published sequence (none when it published no
    /// more), when the marker named them all; `nil` otherwise (a marker from before announcements, or more new sets
    /// than it names): the folder is listed.
    func announcedChangeSets(after acknowledged: Int64) -> [(sequence: Int64, name: String)]? {
        guard let names = recentChangeSets else { return nil }
        guard publishedSequence > acknowledged else { return [] }
        // At most eight names: a search, not a [Int64: String] (whose first use costs a conformance lookup across every
        // loaded image, 0.45 M instructions of a one-row sync).
        let numbered = names.compactMap { name in
            RemoteLayout.parseChangeSetFileName(name).map { (sequence: $0.sequence, name: name) }
        }
        var announced: [(sequence: Int64, name: String)] = []
        for sequence in (acknowledged + 1)...publishedSequence {
            guard let name = numbered.last(where: { $0.sequence == sequence })?.name else { return nil }
            announced.append((sequence, name))
        }
        return announced
    }
}
