public import Foundation

/// What a row's column holds for a file or a large value stored once, by content, under the document's
/// `Attachments/<sha256>` folder.
///
/// Store ``databaseValue`` in a column of a synced table (a `BLOB` column, or one without a type); change sets
/// and whole stores then carry these few bytes, never the file. ``init(databaseValue:)`` reads it back.
/// Attach a file with ``DocumentSyncManager/attachFile(at:mode:metadata:)``; get its local copy with
/// ``DocumentSyncManager/localFile(for:)`` or ``DocumentSyncManager/requestDownload(for:)``.
public struct AttachmentReference: Hashable, Sendable, CustomStringConvertible {
    /// The SHA-256 of the contents, 64 lowercase hex digits: the attachment's name on the remote.
    public let sha256: String
    /// The size of the contents in bytes.
    public let size: Int64
    /// The app's metadata (a file name, a MIME type…), carried with the reference.
    public let metadata: [String: String]
    /// Whether this stands for a column value above ``SyncPolicy/attachmentThreshold`` that the app stored inline:
    /// a client puts the bytes back into the column once it has them.
    public let isInlineValue: Bool

    /// Metadata is for names and types, not contents: at most this many bytes of keys and values.
    public static let metadataByteLimit = 4096

    init(sha256: String, size: Int64, metadata: [String: String] = [:], isInlineValue: Bool = false) {
        self.sha256 = sha256
        self.size = size
        self.metadata = metadata
        self.isInlineValue = isInlineValue
    }

    /// Reads a column value; `nil` when it is not an attachment reference.
    public init?(databaseValue: Data) {
        guard let reference = try? Self.decode(databaseValue) else { return nil }
        self = reference
    }

    /// The bytes to store in a column; they start with `FSATTREF`.
    public var databaseValue: Data {
        var sink = ByteSink()
        sink.bytes.append(contentsOf: Self.magic)
        sink.bytes.append(Self.version)
        sink.bytes.append(isInlineValue ? 1 : 0)
        sink.bytes.append(contentsOf: Self.digestBytes(sha256) ?? [])
        sink.appendVarint(UInt64(size))
        sink.appendVarint(UInt64(metadata.count))
        for key in metadata.keys.sorted() {
            sink.appendString(key)
            sink.appendString(metadata[key]!)
        }
        return Data(sink.bytes)
    }

    public var description: String { "attachment \(sha256) (\(size) bytes)" }

    // MARK: Encoding

    static let magic = Array("FSATTREF".utf8)
    static let version: UInt8 = 1

    /// Whether `bytes` may be a reference, cheaply (the magic), before decoding it.
    static func looksLikeReference(_ bytes: Data) -> Bool {
        bytes.count >= magic.count + 36 && bytes.prefix(magic.count).elementsEqual(magic)
    }

    static func decode(_ bytes: Data) throws -> AttachmentReference {
        guard looksLikeReference(bytes), bytes.count <= 64 + metadataByteLimit * 2 else {
            throw FormatViolation("not an attachment reference")
        }
        var source = ArrayByteSource(Array(bytes.dropFirst(magic.count)))
        let version = try source.readByte()
        guard version == Self.version else {
            throw FormatViolation("attachment reference version \(version) is not supported")
        }
        let flags = try source.readByte()
        guard flags <= 1 else { throw FormatViolation("attachment reference has unknown flags \(flags)") }
        let digest = try source.readBytes(32)
        let size = try source.readVarint()
        guard size <= UInt64(Int64.max) else { throw FormatViolation("attachment size \(size) is out of range") }
        var metadata: [String: String] = [:]
        var remaining = try source.readVarint()
        while remaining > 0 {
            let key = try source.readString(what: "metadata key")
            metadata[key] = try source.readString(what: "metadata value")
            remaining -= 1
        }
        guard source.isAtEnd else { throw FormatViolation("attachment reference has trailing bytes") }
        return AttachmentReference(
            sha256: Self.hex(digest), size: Int64(size), metadata: metadata, isInlineValue: flags == 1)
    }

    static func hex(_ digest: some Sequence<UInt8>) -> String {
        digest.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }

    /// The 32 bytes of a 64-hex-digit name; `nil` for anything else (so a hostile name never becomes a path).
    static func digestBytes(_ hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count == 64 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        for index in stride(from: 0, to: 64, by: 2) {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    /// Whether `name` is a valid attachment name (64 lowercase hex digits).
    static func isValidName(_ name: String) -> Bool { digestBytes(name) != nil }
}
