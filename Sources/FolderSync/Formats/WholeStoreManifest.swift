public import Foundation

/// `WholeStore/<client>/AppliedSyncChangeSets.ticdsync`: exactly which change sets a whole store contains.
///
/// Change sets are applied per client in sequence order, so "which sets"
/// is, per client, the highest sequence contained (every lower one is
/// contained too). Vacuum deletes a change set only when some whole store's
/// manifest covers it; a new client downloads the store that covers the most
/// and applies only the sets after it. A versioned, checksummed property list.
public struct WholeStoreManifest: PropertyListPayload, Hashable {
    public static let kind = "appliedSyncChangeSets"
    /// Version 2 adds ``contentChecksum``: version 1's ``wholeStoreChecksum`` is the CRC-32 of the whole file,
    /// its own CRC trailer included, which is the same constant for every intact file and so protects nothing.
    public static let formatVersion = 2

    /// The client that uploaded the whole store.
    public var clientIdentifier: String
    /// Identifies the snapshot; also written in the whole-store file, so a manifest never describes another file.
    public var wholeStoreIdentifier: String
    /// For display only.
    public var creationDate: Date
    /// The app's schema version of the snapshot.
    public var schemaVersion: Int
    /// Per client (the uploader included), the highest sequence whose change set the snapshot contains.
    public var covers: [String: Int64]
    /// Size and CRC-32 of `WholeStore.ticdsync`, checked before it is installed.
    public var wholeStoreByteCount: Int64
    /// The CRC-32 of the whole `WholeStore.ticdsync`, trailer included: version 1's check, kept for its readers.
    public var wholeStoreChecksum: UInt32
    /// The CRC-32 of `WholeStore.ticdsync` without its trailer, which the trailer also holds: what ties the
    /// manifest to one file's content (version 2 on; `nil` in version 1 manifests).
    public var contentChecksum: UInt32?
    /// How many attachment references the snapshot holds (in any column of any table); `nil` when the uploader
    /// did not count them (manifests written before the count existed). A reader looks for them only when this
    /// is not 0: the search is a pass over every value of a store of any size.
    public var attachmentReferenceCount: Int?

    /// A manifest of the whole store a client uploads; see the properties for each argument.
    public init(
        clientIdentifier: String, wholeStoreIdentifier: String, creationDate: Date, schemaVersion: Int,
        covers: [String: Int64], wholeStoreByteCount: Int64, wholeStoreChecksum: UInt32, contentChecksum: UInt32? = nil,
        attachmentReferenceCount: Int? = nil
    ) {
        self.clientIdentifier = clientIdentifier
        self.wholeStoreIdentifier = wholeStoreIdentifier
        self.creationDate = creationDate
        self.schemaVersion = schemaVersion
        self.covers = covers
        self.wholeStoreByteCount = wholeStoreByteCount
        self.wholeStoreChecksum = wholeStoreChecksum
        self.contentChecksum = contentChecksum
        self.attachmentReferenceCount = attachmentReferenceCount
    }

    /// What a snapshot of a store covers: each client's run of change sets in its ledger, and the uploader's own sets
    /// up to what it published (its own writes are in its data, whether or not its ledger lists them). The one rule,
    /// for the snapshot and for the upload's check made before the snapshot is written.
    static func covers(ledger: [String: Int64], publishedSequence: Int64, localClient: String) -> [String: Int64] {
        var covers = ledger
        if publishedSequence > 0 { covers[localClient] = publishedSequence }
        return covers
    }

    /// Every coverage is a sequence a file name holds, and the counts are not negative: vacuum, downloads and the
    /// ledger act on them.
    public func validate(path: String) throws {
        for (client, sequence) in covers {
            try validateSequence(sequence, "to cover client \(client)'s change sets up to", path: path)
        }
        guard wholeStoreByteCount >= 0, (attachmentReferenceCount ?? 0) >= 0 else {
            throw FolderSyncError(.corruptFile, "the manifest claims a negative size or count", path: path)
        }
    }

    /// Whether this store contains every change set `other` contains (it covers at least as much of every client).
    public func dominates(_ other: WholeStoreManifest) -> Bool {
        other.covers.allSatisfy { client, sequence in (covers[client] ?? 0) >= sequence }
    }

    /// How many change sets the store contains in all; used to pick the store that covers the most.
    public var coveredCount: Int64 { covers.values.reduce(0, +) }

    /// Checks that a whole-store file, as read whole by ``WholeStoreReader``, is the one this manifest describes:
    /// its size, its checksum, its identifier and uploader, and (files of version 3 on) that what the manifest says
    /// the snapshot contains is what the file itself says. The one rule every reader applies (install, vacuum,
    /// `doctor`, export): a store that fails it is never installed nor counted as covering anything.
    /// - Throws: ``FolderSyncError/Code/corruptFile`` naming `path` and what differs.
    func check(_ file: WholeStoreReader.Result, path: String) throws {
        func mismatch(_ what: String) -> FolderSyncError {
            FolderSyncError(.corruptFile, "the whole store does not match its manifest (\(what))", path: path)
        }
        guard file.byteCount == wholeStoreByteCount else {
            throw mismatch("\(file.byteCount) bytes, the manifest says \(wholeStoreByteCount)")
        }
        if let contentChecksum {
            guard file.contentChecksum == contentChecksum else { throw mismatch("checksum") }
        } else {
            guard file.checksum == wholeStoreChecksum else { throw mismatch("checksum") }
        }
        guard file.header.wholeStoreIdentifier == wholeStoreIdentifier else {
            throw mismatch("another store's identifier")
        }
        guard file.header.clientIdentifier == clientIdentifier else { throw mismatch("uploaded by another client") }
        if let contained = file.header.covers, contained != covers {
            throw mismatch("it claims change sets the snapshot does not say it contains")
        }
    }
}
