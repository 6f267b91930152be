/// The primitive encodings of FolderSync's binary formats: little-endian fixed-width
/// integers, LEB128 varints, zigzag for signed varints, varint-length-prefixed UTF-8.
struct ByteSink {
    var bytes: [UInt8] = []

    mutating func appendVarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    /// Zigzag keeps small negative numbers short: 0, -1, 1, -2 … become 0, 1, 2, 3 ….
    mutating func appendZigZag(_ value: Int64) {
        appendVarint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    mutating func appendUInt32(_ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func appendUInt64(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func appendInt64(_ value: Int64) {
        appendUInt64(UInt64(bitPattern: value))
    }

    mutating func appendBytes(_ data: some Collection<UInt8>) {
        appendVarint(UInt64(data.count))
        bytes.append(contentsOf: data)
    }

    mutating func appendString(_ string: String) {
        appendBytes(string.utf8)
    }
}

/// Sequential reads of the encodings ``ByteSink`` writes; running out of bytes is a ``FormatViolation``.
protocol ByteSource {
    mutating func readByte() throws -> UInt8
    /// Exactly `count` bytes; throws rather than allocating when fewer remain.
    mutating func readBytes(_ count: Int) throws -> [UInt8]
    /// Requirements with defaults below, so that a source holding the bytes in a buffer can read them in place
    /// (one allocation fewer per field: a change set's bulk decoding calls them millions of times).
    mutating func readUInt64() throws -> UInt64
    mutating func readString(what: String) throws -> String
    /// Passes over `count` bytes (throws when fewer remain).
    mutating func skipBytes(_ count: Int) throws
}

extension ByteSource {
    mutating func readVarint() throws -> UInt64 {
        var result: UInt64 = 0
        for index in 0..<10 {
            let byte = try readByte()
            // The tenth byte may only hold the 64th bit: anything more is an overlong or overflowing varint.
            if index == 9 && byte > 1 { throw FormatViolation("varint overflows 64 bits") }
            result |= UInt64(byte & 0x7F) << (7 * UInt64(index))
            if byte & 0x80 == 0 { return result }
        }
        throw FormatViolation("varint is longer than 10 bytes")
    }

    mutating func readZigZag() throws -> Int64 {
        let raw = try readVarint()
        return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
    }

    mutating func readUInt64() throws -> UInt64 {
        let bytes = try readBytes(8)
        var value: UInt64 = 0
        for (index, byte) in bytes.enumerated() { value |= UInt64(byte) << (8 * UInt64(index)) }
        return value
    }

    mutating func readInt64() throws -> Int64 {
        Int64(bitPattern: try readUInt64())
    }

    mutating func skipBytes(_ count: Int) throws {
        _ = try readBytes(count)
    }

    /// Passes over a varint length prefix and that many bytes.
    mutating func skipLengthPrefixed(what: String) throws {
        let length = try readVarint()
        guard length <= UInt64(Int.max) else { throw FormatViolation("\(what) length \(length) is out of range") }
        try skipBytes(Int(length))
    }

    /// A varint length prefix, then that many bytes.
    mutating func readLengthPrefixed(what: String) throws -> [UInt8] {
        let length = try readVarint()
        guard length <= UInt64(Int.max) else { throw FormatViolation("\(what) length \(length) is out of range") }
        return try readBytes(Int(length))
    }

    /// Length-prefixed UTF-8; invalid UTF-8 is refused, not repaired, so text round-trips byte for byte.
    mutating func readString(what: String) throws -> String {
        try UTF8Text.string(try readLengthPrefixed(what: what), what: what)
    }
}

/// Strings from bytes that must be valid UTF-8.
enum UTF8Text {
    /// `bytes` as a string; invalid UTF-8 is refused, not repaired, so text round-trips byte for byte.
    static func string(_ bytes: some Collection<UInt8>, what: String) throws -> String {
        let string = String(decoding: bytes, as: UTF8.self)
        // ASCII (most identifiers and much text) cannot need repair: the byte-by-byte comparison is for the rest.
        if isASCII(bytes) { return string }
        guard string.utf8.elementsEqual(bytes) else { throw FormatViolation("\(what) is not valid UTF-8") }
        return string
    }

    /// Whether every byte is below 0x80, eight at a time where the bytes are contiguous.
    static func isASCII(_ bytes: some Collection<UInt8>) -> Bool {
        if let result = bytes.withContiguousStorageIfAvailable({ buffer -> Bool in
            let raw = UnsafeRawBufferPointer(buffer)
            var index = 0
            while index + 8 <= raw.count {
                if raw.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 {
                    return false
                }
                index += 8
            }
            while index < raw.count {
                if raw[index] >= 0x80 { return false }
                index += 1
            }
            return true
        }) {
            return result
        }
        return bytes.allSatisfy { $0 < 0x80 }
    }
}

/// A ``ByteSource`` over bytes already in memory (small things: headers).
struct ArrayByteSource: ByteSource {
    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var remainingCount: Int { bytes.count - position }
    var isAtEnd: Bool { position == bytes.count }

    mutating func readByte() throws -> UInt8 {
        guard position < bytes.count else { throw FormatViolation("ends in the middle of a field") }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func readBytes(_ count: Int) throws -> [UInt8] {
        guard count <= remainingCount else { throw FormatViolation("ends in the middle of a field") }
        defer { position += count }
        return Array(bytes[position..<position + count])
    }
}
