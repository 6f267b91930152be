import Foundation

/// Fixed-width integers written into and read from byte buffers.
extension Data {
    mutating func append<Integer: FixedWidthInteger>(bigEndian value: Integer) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
    }

    mutating func append<Integer: FixedWidthInteger>(littleEndian value: Integer) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }

    /// The little-endian u32 at `offset` from the start.
    func uint32(at offset: Int) -> UInt32 {
        self[startIndex + offset..<startIndex + offset + 4].reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }
}
