public import Foundation

/// Constants of the change-set file format, version 1.
///
/// The byte-level specification is `RemoteLayouts/v1/formats/change-set.md`;
/// in short:
/// ```
/// preamble  "FSCHGSET", format version (1 byte), header length H (UInt32 LE)
/// header    H bytes of fields, then their CRC-32 (covers the file from offset 0)
/// body      one zlib stream of change records
/// trailer   compressed length, uncompressed length (UInt64 LE each), CRC-32 of every preceding byte
/// ```
/// Integers are little-endian; lengths and counts inside records are LEB128 varints.
enum ChangeSetFile {
    static let magic: [UInt8] = Array("FSCHGSET".utf8)
    /// The version this build writes and the newest it reads.
    static let formatVersion: UInt8 = 1
    /// Magic, version byte, header length.
    static let preambleByteCount = 8 + 1 + 4
    /// Compressed length, uncompressed length, file CRC-32.
    static let trailerByteCount = 8 + 8 + 4
    /// Header fields are two identifiers and four integers; anything larger is not a header.
    static let maximumHeaderFieldsByteCount = 64 * 1024
    /// The reader's and writer's I/O chunk: memory use does not depend on the file size.
    static let chunkSize = 64 * 1024

    /// The tag byte before each column value.
    enum ValueTag: UInt8 {
        case null = 0
        case integer = 1
        case real = 2
        case text = 3
        case blob = 4
    }
}

/// What a change set's header says, readable without decompressing the body.
@_spi(ModelAdapter) @_spi(Tooling) public struct ChangeSetHeader: Hashable, Sendable {
    /// The unique identifier of this change set (a UUID by default); also part of its file name.
    public var changeSetIdentifier: String
    /// The identifier of the client that wrote it: the name of the folder it is published in.
    public var clientIdentifier: String
    /// The pushing client's sequence number of this change set (consecutive per client).
    public var sequence: Int64
    /// The app's schema version of the document when the changes were recorded.
    public var schemaVersion: Int
    /// How many row changes the body holds.
    public var changeCount: Int
    /// When the change set was written, to the millisecond; for display only, never for ordering.
    public var createdAt: Date
    /// Per other client, the sequence up to which the author had applied that client's change sets when it
    /// wrote this one. A reader applies this set only after those, so a change never arrives before the row
    /// it changes (causal order).
    public var dependencies: [String: Int64] = [:]

    /// The whole header block: preamble, fields and the header CRC-32.
    func encodedBlock() -> [UInt8] {
        var fields = ByteSink()
        fields.appendString(changeSetIdentifier)
        fields.appendString(clientIdentifier)
        fields.appendInt64(sequence)
        fields.appendInt64(Int64(schemaVersion))
        fields.appendUInt64(UInt64(changeCount))
        fields.appendInt64(Self.milliseconds(of: createdAt))
        fields.appendVarint(UInt64(dependencies.count))
        for (client, sequence) in dependencies.sorted(by: { $0.key < $1.key }) {
            fields.appendString(client)
            fields.appendInt64(sequence)
        }
        var block = ByteSink()
        block.bytes.append(contentsOf: ChangeSetFile.magic)
        block.bytes.append(ChangeSetFile.formatVersion)
        block.appendUInt32(UInt32(fields.bytes.count))
        block.bytes.append(contentsOf: fields.bytes)
        block.appendUInt32(Checksum.crc32(Data(block.bytes)))
        return block.bytes
    }

    /// Decodes the header fields (the bytes between the preamble and the header CRC).
    static func decodeFields(_ bytes: [UInt8]) throws -> ChangeSetHeader {
        var source = ArrayByteSource(bytes)
        let changeSetIdentifier = try source.readString(what: "change set identifier")
        let clientIdentifier = try source.readString(what: "client identifier")
        let sequence = try source.readInt64()
        let schemaVersion = try source.readInt64()
        let changeCount = try source.readUInt64()
        let createdAt = try source.readInt64()
        let dependencyCount = try source.readVarint()
        guard dependencyCount <= UInt64(source.remainingCount) else {
            throw FormatViolation("dependency count \(dependencyCount) is out of range")
        }
        var dependencies: [String: Int64] = [:]
        for _ in 0..<dependencyCount {
            let client = try source.readString(what: "dependency client identifier")
            dependencies[client] = try source.readInt64()
        }
        guard changeCount <= UInt64(Int.max) else {
            throw FormatViolation("change count \(changeCount) is out of range")
        }
        // Sequences a file name holds: readers compare and count with them.
        guard RemoteLayout.isSequence(sequence, allowingZero: false) else {
            throw FormatViolation("sequence \(sequence) is out of range")
        }
        for (client, applied) in dependencies where !RemoteLayout.isSequence(applied) {
            throw FormatViolation("dependency on client \(client) up to \(applied) is out of range")
        }
        guard source.isAtEnd else { throw FormatViolation("header has \(source.remainingCount) unexpected bytes") }
        return ChangeSetHeader(
            changeSetIdentifier: changeSetIdentifier, clientIdentifier: clientIdentifier,
            sequence: sequence, schemaVersion: Int(schemaVersion), changeCount: Int(changeCount),
            createdAt: date(milliseconds: createdAt), dependencies: dependencies)
    }

    /// Milliseconds since 1970, rounded to nearest so that a decoded date encodes to the same value.
    static func milliseconds(of date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1000).rounded()
        guard value.isFinite else { return 0 }
        return Int64(max(min(value, 9.0e15), -9.0e15))
    }

    static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// `date` as it will read back: to the millisecond.
    static func normalized(_ date: Date) -> Date {
        self.date(milliseconds: milliseconds(of: date))
    }
}

/// A structural problem found while decoding; the reader turns it into a corrupt-file error naming the file.
struct FormatViolation: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}
