public import Foundation

/// The sync bookkeeping an adapter keeps with the data, in two parts with one writer each.
///
/// - ``progress`` is what the store commits in the same transaction as the data it describes (which change sets of this
///   client exist, what an installed or restored store must apply again). Only the adapter writes it, in
///   ``ModelAdapter/stageChanges(sequence:emit:seal:)``, ``ModelAdapter/markPublished(throughSequence:)``,
///   ``ModelAdapter/apply(_:localClient:changes:resolutions:)``,
///   ``ModelAdapter/continueAfterRestore(remotePublishedSequence:localClient:)`` and the whole-store installs; a sync
///   reads it.
/// - ``remote`` is what syncs learned about the remote and told it: a cache the sync side owns and saves with
///   ``ModelAdapter/saveRemoteKnowledge(_:)``, which leaves the progress as the store committed it. A cache may
///   be forgotten early, never late: whoever changes the store under it (an install, a rejoin) forgets the parts
///   it invalidates before, so that a crash in between costs a request, not a wrong answer.
///
/// Stored as one flat JSON object, the same keys as before the split (no format change).
@_spi(ModelAdapter) public struct LocalSyncState: Codable, Hashable, Sendable {
    /// What the store commits with its data.
    public var progress = Progress()
    /// What syncs know of the remote.
    public var remote = RemoteKnowledge()

    /// The state of a client that has never synced: nothing staged, published or read.
    public init() {}

    /// What the store commits in the same transaction as the data it describes; written only by the adapter.
    public struct Progress: Hashable, Sendable {
        /// The sequence number the next staged change set gets.
        public var nextSequence: Int64 = 1
        /// The highest sequence of this client's change sets known to be published.
        public var publishedSequence: Int64 = 0
        /// After installing a whole store older than this client's own publications: the sequence after which this
        /// client's own change sets must be applied again from the remote. Cleared by the apply that catches up.
        public var ownChangeSetsToReapplyAfter: Int64?
        /// Whether the store was installed from a whole store, or the first sync looked for one and went on without.
        public var hasBootstrapped = false

        public init() {}
    }

    /// What syncs learned about the remote and decided to tell it; saved by ``ModelAdapter/saveRemoteKnowledge(_:)``.
    public struct RemoteKnowledge: Hashable, Sendable {
        /// Per other client: the version tag of its recent-sync file when last read, and the sequence it reported.
        public var knownRecentSyncs: [String: KnownRecentSync] = [:]
        /// Change sets published since this client last uploaded a whole store (for the upload policy).
        public var changeSetsSinceWholeStore = 0
        /// Bytes sent by syncs since this client last uploaded a whole store, compared with
        /// ``SyncPolicy/wholeStoreUploadAfterBytes``.
        public var bytesSinceWholeStore: Int64 = 0
        /// What this client's recent-sync marker said when last written: it is written again until it says the
        /// published sequence and acknowledgement of now, even when the sync that changed them failed to write it.
        public var announcedSequence: Int64 = 0
        /// The acknowledgement (highest applied sequence per client) the marker said when last written.
        public var announcedAcknowledgement: [String: Int64] = [:]
        /// The version tag of this client's own recent sync when it was last read back: read again when it changes, to
        /// find that the store was restored from an earlier copy, or the folder from an older one. `nil`: unknown (it
        /// was written since), so the next sync reads it.
        public var ownRecentSyncEtag: String?
        /// Whether this client owes the remote a whole store: its own published change sets are gone from the folder
        /// (restored from an older copy), or the only whole store that covers them is unusable. The next sync that can
        /// upload one does.
        public var owesWholeStore = false
        /// Per client, the highest sequence any other client's recent sync acknowledged applying: how a client whose
        /// marker is gone (deleted, expired) is still found, so that its last change sets reach every device.
        public var acknowledgedByOthers: [String: Int64] = [:]
        /// Whether this client has listed `SyncChanges/` since it last started from scratch (a first sync, a whole
        /// store installed): once, to find clients that left no marker.
        public var hasListedClients = false
        /// When the marker was last written (the ``RecentSync/lastSyncDate`` it holds); an idle sync writes it again
        /// once it is ``RecentSync/heartbeatInterval`` old. `nil` for state saved before the heartbeat existed.
        public var announcedAt: Date?
        /// The file names of this client's newest published change sets, announced in its marker
        /// (``RecentSync/recentChangeSets``).
        public var recentlyPublished: [String] = []
        /// The version tag of this client's whole store as it uploaded it (its ETag, or its size when the backend has
        /// none): a store found changed since (damaged, or put back from an older copy) covers nothing, and a new one
        /// is owed. `nil`: none uploaded, or it was removed since.
        public var ownWholeStoreTag: String?
        /// Per client, the change set the marker said this client waits for (``RecentSync/waitingFor``): missing from
        /// the folder when it was last written. The marker is written again when what it waits for changes.
        public var announcedWaitingFor: [String: Int64] = [:]
        /// The client identifier this client had before ``DocumentSyncManager/rejoin()`` took a new one after
        /// ``FolderSyncError/Code/clientIdentityShared``: its marker says so (``RecentSync/formerIdentity``).
        public var formerIdentity: String?
        /// The clients of the document's earlier epochs this client knew and has not seen registered since: what its
        /// marker awaits (``RecentSync/awaiting``). Set when it re-joins after the folder or the document was wiped.
        public var awaitedClients: [String] = []
        /// What this client's marker said it awaits when last written: it is written again when that changes.
        public var announcedAwaiting: [String] = []

        public init() {}

        /// What a store installed from a whole store makes stale: the clients that left no marker are looked for
        /// again, since the store may cover less of them than this client had applied.
        mutating func forgetClientListing() {
            hasListedClients = false
        }

        /// Records that this client's marker now says what `recent` says.
        mutating func announce(_ recent: RecentSync) {
            announcedAt = recent.lastSyncDate
            announcedSequence = recent.publishedSequence
            announcedAcknowledgement = recent.acknowledgement
            announcedWaitingFor = recent.waitingFor ?? [:]
            announcedAwaiting = recent.awaiting ?? []
        }

        /// What a store restored from an earlier copy makes stale: the marker it wrote described numbers the remote
        /// gave to other change sets, so it is written again and announces none of them.
        mutating func forgetAnnouncement() {
            recentlyPublished = []
            announcedSequence = 0
        }
    }

    /// What this client last read of another client's recent-sync marker, so an unchanged marker is not read again.
    public struct KnownRecentSync: Codable, Hashable, Sendable {
        /// The marker file's version tag when it was read; `nil` when the remote gives none (the marker is then read at
        /// every sync).
        public var etag: String?
        /// The highest sequence the marker said its client had published.
        public var publishedSequence: Int64
        /// The names of the newest change sets the marker announced (``RecentSync/recentChangeSets``).
        public var recentChangeSets: [String]?
        /// The installation that wrote the marker (``RecentSync/installation``); `nil` for markers before version 3.
        public var installation: String?
        /// What was read of a marker: its version tag, its published sequence, the change sets it announced and the
        /// installation that wrote it.
        public init(
            etag: String?, publishedSequence: Int64, recentChangeSets: [String]? = nil, installation: String? = nil
        ) {
            self.etag = etag
            self.publishedSequence = publishedSequence
            self.recentChangeSets = recentChangeSets
            self.installation = installation
        }
    }

    private enum CodingKeys: String, CodingKey {
        case nextSequence, publishedSequence, ownChangeSetsToReapplyAfter, hasBootstrapped
        case knownRecentSyncs, changeSetsSinceWholeStore, bytesSinceWholeStore, announcedSequence,
            announcedAcknowledgement
        case announcedAt, ownRecentSyncEtag, owesWholeStore, acknowledgedByOthers, hasListedClients, recentlyPublished,
            ownWholeStoreTag
        case announcedWaitingFor, formerIdentity, awaitedClients, announcedAwaiting
    }

    /// Keys added after the first version are optional, so that state saved by an older version reads.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        progress.nextSequence = try container.decode(Int64.self, forKey: .nextSequence)
        progress.publishedSequence = try container.decode(Int64.self, forKey: .publishedSequence)
        progress.ownChangeSetsToReapplyAfter = try container.decodeIfPresent(
            Int64.self, forKey: .ownChangeSetsToReapplyAfter)
        progress.hasBootstrapped = try container.decodeIfPresent(Bool.self, forKey: .hasBootstrapped) ?? false
        remote.knownRecentSyncs =
            try container.decodeIfPresent([String: KnownRecentSync].self, forKey: .knownRecentSyncs) ?? [:]
        remote.changeSetsSinceWholeStore =
            try container.decodeIfPresent(Int.self, forKey: .changeSetsSinceWholeStore) ?? 0
        remote.bytesSinceWholeStore = try container.decodeIfPresent(Int64.self, forKey: .bytesSinceWholeStore) ?? 0
        remote.announcedSequence = try container.decodeIfPresent(Int64.self, forKey: .announcedSequence) ?? 0
        remote.announcedAcknowledgement =
            try container.decodeIfPresent([String: Int64].self, forKey: .announcedAcknowledgement) ?? [:]
        remote.announcedAt = try container.decodeIfPresent(Date.self, forKey: .announcedAt)
        remote.ownRecentSyncEtag = try container.decodeIfPresent(String.self, forKey: .ownRecentSyncEtag)
        remote.owesWholeStore = try container.decodeIfPresent(Bool.self, forKey: .owesWholeStore) ?? false
        remote.acknowledgedByOthers =
            try container.decodeIfPresent([String: Int64].self, forKey: .acknowledgedByOthers) ?? [:]
        remote.hasListedClients = try container.decodeIfPresent(Bool.self, forKey: .hasListedClients) ?? false
        remote.recentlyPublished = try container.decodeIfPresent([String].self, forKey: .recentlyPublished) ?? []
        remote.ownWholeStoreTag = try container.decodeIfPresent(String.self, forKey: .ownWholeStoreTag)
        remote.announcedWaitingFor =
            try container.decodeIfPresent([String: Int64].self, forKey: .announcedWaitingFor) ?? [:]
        remote.formerIdentity = try container.decodeIfPresent(String.self, forKey: .formerIdentity)
        remote.awaitedClients = try container.decodeIfPresent([String].self, forKey: .awaitedClients) ?? []
        remote.announcedAwaiting = try container.decodeIfPresent([String].self, forKey: .announcedAwaiting) ?? []
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(progress.nextSequence, forKey: .nextSequence)
        try container.encode(progress.publishedSequence, forKey: .publishedSequence)
        try container.encodeIfPresent(progress.ownChangeSetsToReapplyAfter, forKey: .ownChangeSetsToReapplyAfter)
        try container.encode(progress.hasBootstrapped, forKey: .hasBootstrapped)
        try container.encode(remote.knownRecentSyncs, forKey: .knownRecentSyncs)
        try container.encode(remote.changeSetsSinceWholeStore, forKey: .changeSetsSinceWholeStore)
        try container.encode(remote.bytesSinceWholeStore, forKey: .bytesSinceWholeStore)
        try container.encode(remote.announcedSequence, forKey: .announcedSequence)
        try container.encode(remote.announcedAcknowledgement, forKey: .announcedAcknowledgement)
        try container.encodeIfPresent(remote.announcedAt, forKey: .announcedAt)
        try container.encodeIfPresent(remote.ownRecentSyncEtag, forKey: .ownRecentSyncEtag)
        try container.encode(remote.owesWholeStore, forKey: .owesWholeStore)
        try container.encode(remote.acknowledgedByOthers, forKey: .acknowledgedByOthers)
        try container.encode(remote.hasListedClients, forKey: .hasListedClients)
        try container.encode(remote.recentlyPublished, forKey: .recentlyPublished)
        try container.encodeIfPresent(remote.ownWholeStoreTag, forKey: .ownWholeStoreTag)
        if !remote.announcedWaitingFor.isEmpty {
            try container.encode(remote.announcedWaitingFor, forKey: .announcedWaitingFor)
        }
        try container.encodeIfPresent(remote.formerIdentity, forKey: .formerIdentity)
        if !remote.awaitedClients.isEmpty { try container.encode(remote.awaitedClients, forKey: .awaitedClients) }
        if !remote.announcedAwaiting.isEmpty {
            try container.encode(remote.announcedAwaiting, forKey: .announcedAwaiting)
        }
    }
}
