import CZlib
import Foundation

/// CRC-32 (zlib's), used to detect truncated or corrupted files.
///
/// It detects accidents, not attacks; encrypted folders rely on AES-GCM tags for that.
enum Checksum {
    static func crc32(_ data: Data, seed: UInt32 = 0) -> UInt32 {
        data.withUnsafeBytes { buffer -> UInt32 in
            guard let base = buffer.bindMemory(to: Bytef.self).baseAddress else { return seed }
            var crc = UInt(seed)
            var offset = 0
            while offset < buffer.count {
                let length = min(buffer.count - offset, Int(UInt32.max))
                crc = CZlib.crc32(crc, base + offset, uInt(length))
                offset += length
            }
            return UInt32(truncatingIfNeeded: crc)
        }
    }

    static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}
