import Foundation

/// Writes a stream of changes as one or more change sets, each holding at most
/// a bounded amount of (uncompressed) change data.
///
/// Bounded parts keep uploads retryable and let a reader apply each part in
/// one transaction of predictable size. Every part is an independent,
/// complete change set; parts take consecutive sequence numbers starting at
/// `firstSequence`. A part is closed before a change would take it past the
/// limit, so a part exceeds the limit only when it holds a single change
/// that is larger than the limit by itself.
final class ChangeSetSplitter {
    /// Where a part goes: the file to write and the part's change-set identifier.
    struct Destination {
        var url: URL
        var changeSetIdentifier: String
    }

    /// A finished part.
    struct Part: Hashable {
        var url: URL
        var header: ChangeSetHeader
    }

    /// 4 MiB of records: around 20,000 typical row changes, a few seconds of upload on a slow link.
    static let defaultPartByteLimit = 4 * 1024 * 1024

    private let clientIdentifier: String
    private let schemaVersion: Int
    private let createdAt: Date
    private let dependencies: [String: Int64]
    private let partByteLimit: Int
    private let compressionLevel: Int32
    private let destination: (Int64) throws -> Destination
    private var nextSequence: Int64
    private var current: (writer: ChangeSetWriter, url: URL)?
    private var finishedParts: [Part] = []

    /// - Parameter destination: called with each part's sequence number, when the part is started.
    init(
        clientIdentifier: String, schemaVersion: Int, firstSequence: Int64, createdAt: Date,
        dependencies: [String: Int64] = [:], partByteLimit: Int = ChangeSetSplitter.defaultPartByteLimit,
        compressionLevel: Int32 = 1,
        destination: @escaping (Int64) throws -> Destination
    ) {
        precondition(partByteLimit > 0, "partByteLimit must be positive")
        self.clientIdentifier = clientIdentifier
        self.schemaVersion = schemaVersion
        self.createdAt = createdAt
        self.dependencies = dependencies
        self.partByteLimit = partByteLimit
        self.compressionLevel = compressionLevel
        self.destination = destination
        self.nextSequence = firstSequence
    }

    /// Adds a change to the current part, first closing the part if the change would take it past the limit.
    func append(_ change: SyncChange) throws {
        if let (writer, _) = current, writer.changeCount > 0,
            writer.uncompressedByteCount + writer.encodedByteCount(of: change) > partByteLimit
        {
            try finishCurrentPart()
        }
        if current == nil { try startPart() }
        try current!.writer.append(change)
    }

    /// Completes the last part and returns every part in sequence order; no changes means no parts.
    func finish() throws -> [Part] {
        if current != nil { try finishCurrentPart() }
        return finishedParts
    }

    private func startPart() throws {
        let sequence = nextSequence
        let target = try destination(sequence)
        let writer = try ChangeSetWriter(
            url: target.url, changeSetIdentifier: target.changeSetIdentifier,
            clientIdentifier: clientIdentifier, sequence: sequence,
            schemaVersion: schemaVersion, createdAt: createdAt,
            dependencies: dependencies, compressionLevel: compressionLevel)
        current = (writer, target.url)
        nextSequence += 1
    }

    private func finishCurrentPart() throws {
        guard let (writer, url) = current else { return }
        let header = try writer.finish()
        finishedParts.append(Part(url: url, header: header))
        current = nil
    }
}
