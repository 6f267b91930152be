import CZlib
import Foundation

/// CRC-32 (zlib's), used to detect truncated or corrupted files.
///
/// It detects accidents, not attacks; encrypted folders rely on AES-GCM tags for that. Computed by carry-less
/// multiplication where the CPU has it (`crc32_folded.h`, the same values as zlib's, three times as fast),
/// since checking a whole store was a new device's slowest step.
enum Checksum {
    static func crc32(_ data: Data, seed: UInt32 = 0) -> UInt32 {
        data.withUnsafeBytes { buffer -> UInt32 in
            guard let base = buffer.bindMemory(to: UInt8.self).baseAddress else { return seed }
            return foldersync_crc32(seed, base, buffer.count)
        }
    }

    static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}
