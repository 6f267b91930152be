import Foundation

/// Reads the bookkeeping BLOBs (``RowRegisters``, ``PendingMarks``) in place, without copying them first:
/// they are decoded for every row a sync touches.
struct BlobReader {
    let bytes: UnsafeRawBufferPointer
    var position = 0

    var remaining: Int { bytes.count - position }

    mutating func byte() throws -> UInt8 {
        guard position < bytes.count else { throw FormatViolation("bookkeeping value ends in the middle of a field") }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func bytes(_ count: Int) throws -> UnsafeRawBufferPointer {
        guard count <= remaining else { throw FormatViolation("bookkeeping value ends in the middle of a field") }
        defer { position += count }
        return UnsafeRawBufferPointer(rebasing: bytes[position..<position + count])
    }

    mutating func varint() throws -> UInt64 {
        var result: UInt64 = 0
        for index in 0..<10 {
            let byte = try byte()
            if index == 9 && byte > 1 { throw FormatViolation("varint overflows 64 bits") }
            result |= UInt64(byte & 0x7F) << (7 * UInt64(index))
            if byte & 0x80 == 0 { return result }
        }
        throw FormatViolation("varint is longer than 10 bytes")
    }

    mutating func string(what: String) throws -> String {
        let length = try varint()
        guard length <= UInt64(remaining) else { throw FormatViolation("\(what) runs past the end of its value") }
        return try UTF8Text.string(try bytes(Int(length)), what: what)
    }
}
