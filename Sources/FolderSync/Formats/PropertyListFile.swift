public import Foundation

/// The envelope of every FolderSync property list: a kind, a format version, a checksum and a payload.
///
/// ```
/// kind           "deviceInfo", "documentInfo", …
/// formatVersion  the payload's version; newer versions are refused, not guessed at
/// checksum       "crc32:<8 hex digits>" of the payload encoded as an XML property list
/// payload        the typed contents
/// ```
/// Files are XML property lists (readable, diff-able); Foundation sorts
/// dictionary keys, so encoding is deterministic. Dates are kept to whole
/// seconds, which XML property lists preserve exactly.
public protocol PropertyListPayload: Codable, Sendable, Equatable {
    /// The value of the envelope's `kind` key.
    static var kind: String { get }
    /// The newest payload version this build reads, and the one it writes unless ``writtenFormatVersion`` says less.
    static var formatVersion: Int { get }
    /// The version this payload is written as: the oldest whose readers read everything it holds, so that a file
    /// without what a newer version added stays readable by older clients (the default: ``formatVersion``).
    var writtenFormatVersion: Int { get }
    /// Checks what the decoded payload claims that no type checks: every number another device wrote is bounded
    /// before anything acts on it (a sequence a file name can hold, a count that is not negative). Called by
    /// `PropertyListFile.decode(_:from:path:)` on every file it returns; the default accepts everything.
    /// - Throws: ``FolderSyncError/Code/corruptFile`` naming `path` and the value.
    func validate(path: String) throws
}

extension PropertyListPayload {
    /// ``formatVersion``: a payload whose every version is read by the same readers is written as the newest.
    public var writtenFormatVersion: Int { Self.formatVersion }

    public func validate(path: String) throws {}

    /// Refuses a sequence outside what a change-set file name holds (``RemoteLayout/maximumSequence``), or negative.
    func validateSequence(_ value: Int64, _ what: String, path: String) throws {
        guard RemoteLayout.isSequence(value) else {
            throw FolderSyncError(
                .corruptFile, "\(Self.kind) claims \(what) \(value): no change-set file name holds that number",
                path: path)
        }
    }
}

/// Writes and reads the versioned, checksummed property-list envelope of every FolderSync property-list file.
@_spi(Tooling) public enum PropertyListFile {
    /// The largest property list FolderSync reads (1 MiB): a larger file is refused by its size before it is
    /// read (``RemoteFileSystem/read(_:maximumSize:)``). Real ones are a few KiB; a recent sync naming the
    /// acknowledgements of a thousand clients stays under 100 KiB.
    public static let maximumByteCount = 1 << 20

    private struct Header: Decodable {
        let kind: String
        let formatVersion: Int
    }

    private struct Envelope<Payload: PropertyListPayload>: Codable {
        let kind: String
        let formatVersion: Int
        let checksum: String
        let payload: Payload
    }

    private static func encoder() -> PropertyListEncoder {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .xml
        return encoder
    }

    private static func checksum(of data: Data) -> String { "crc32:" + Checksum.hex(Checksum.crc32(data)) }

    /// The XML property list of `payload` in its envelope, with its kind, format version and checksum; deterministic.
    public static func encode<Payload: PropertyListPayload>(_ payload: Payload) throws -> Data {
        // A marker in the bytes PropertyListEncoder writes, without it (what the fast writer does not take goes below).
        if Payload.self == RecentSync.self, let recent = payload as? RecentSync,
            let data = CanonicalPropertyList.encode(recent)
        {
            return data
        }
        // The status written after every sync (Foundation's encoder was a twentieth of a one-row sync's instructions).
        if Payload.self == LocalSyncStatus.self, let status = payload as? LocalSyncStatus,
            let data = CanonicalPropertyList.encode(status)
        {
            return data
        }
        return try encodeWithFoundation(payload)
    }

    /// ``encode(_:)`` by Foundation's `PropertyListEncoder` alone: the definition of the bytes.
    static func encodeWithFoundation<Payload: PropertyListPayload>(_ payload: Payload) throws -> Data {
        let payloadBytes = try encoder().encode(payload)
        let envelope = Envelope(
            kind: Payload.kind, formatVersion: payload.writtenFormatVersion,
            checksum: checksum(of: payloadBytes), payload: payload)
        return try encoder().encode(envelope)
    }

    /// The envelope's `kind` (`"deviceInfo"`, `"recentSync"`…), read without verifying anything else;
    /// `nil` when `data` is not a FolderSync property list. Lets tools pick the payload type to decode.
    public static func kind(of data: Data) -> String? {
        guard isSafeToParse(data) else { return nil }
        return try? PropertyListDecoder().decode(Header.self, from: data).kind
    }

    /// Foundation's property-list decoder stops the process (a fatal error, not a thrown one) on an XML property
    /// list that is not valid UTF-8: only binary ones and valid UTF-8 text reach it.
    static func isSafeToParse(_ data: Data) -> Bool {
        data.starts(with: Array("bplist".utf8)) || String(validating: data, as: UTF8.self) != nil
    }

    /// Decodes and verifies a file, naming `path` in every error.
    ///
    /// - Throws: ``FolderSyncError/Code/unsupportedFormatVersion`` for a newer version;
    ///   ``FolderSyncError/Code/corruptFile`` for anything truncated, garbled, of another kind or failing its checksum.
    public static func decode<Payload: PropertyListPayload>(_ type: Payload.Type, from data: Data, path: String) throws
        -> Payload
    {
        // Markers and documentInfo.plist as PropertyListEncoder wrote them, without Foundation's decoder (what this
        // path does not take, Foundation reads or refuses below).
        let payload =
            try CanonicalPropertyList.decode(type, from: data) ?? decodeWithFoundation(type, from: data, path: path)
        try payload.validate(path: path)
        return payload
    }

    /// ``decode(_:from:path:)`` through Foundation's decoder alone: what the fast reader must agree with (fuzzed).
    static func decodeWithFoundation<Payload: PropertyListPayload>(_ type: Payload.Type, from data: Data, path: String)
        throws -> Payload
    {
        let decoder = PropertyListDecoder()
        let header: Header
        guard isSafeToParse(data) else {
            throw FolderSyncError(.corruptFile, "not a readable FolderSync property list (not UTF-8 text)", path: path)
        }
        do {
            header = try decoder.decode(Header.self, from: data)
        } catch {
            throw FolderSyncError(
                .corruptFile, "not a readable FolderSync property list", path: path, underlying: error)
        }
        guard header.kind == Payload.kind else {
            throw FolderSyncError(
                .corruptFile, "expected a \(Payload.kind) property list, found \(header.kind)", path: path)
        }
        guard header.formatVersion <= Payload.formatVersion else {
            throw FolderSyncError(
                .unsupportedFormatVersion,
                "\(Payload.kind) format version \(header.formatVersion) is newer than the supported \(Payload.formatVersion)",
                path: path)
        }
        let envelope: Envelope<Payload>
        do {
            envelope = try decoder.decode(Envelope<Payload>.self, from: data)
        } catch {
            throw FolderSyncError(
                .corruptFile, "\(Payload.kind) property list is missing fields or has wrong types", path: path,
                underlying: error)
        }
        let reencoded = try encoder().encode(envelope.payload)
        guard checksum(of: reencoded) == envelope.checksum else {
            throw FolderSyncError(.corruptFile, "\(Payload.kind) property list fails its checksum", path: path)
        }
        return envelope.payload
    }
}

extension Date {
    /// This date without its fraction of a second, as property lists store it.
    var wholeSeconds: Date { Date(timeIntervalSince1970: timeIntervalSince1970.rounded(.down)) }
}
