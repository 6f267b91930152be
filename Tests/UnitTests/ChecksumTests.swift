import CZlib
import Foundation
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// The folded CRC-32 must give exactly zlib's values: files written by either are checked by the other.
@Suite("CRC-32")
struct ChecksumTests {
    @Test("The folded CRC-32 equals zlib's for every length, alignment and running value")
    func equalsZlib() {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<(1 << 16) + 64).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let lengths = Array(0...300) + (0..<300).map { _ in Int.random(in: 0...(1 << 16), using: &generator) }
        for length in lengths {
            let offset = Int.random(in: 0..<64, using: &generator)
            let seed = length % 3 == 0 ? 0 : UInt32.random(in: 0...UInt32.max, using: &generator)
            let piece = Data(bytes[offset..<(offset + length)])
            let expected = piece.withUnsafeBytes {
                UInt32(crc32_z(uLong(seed), $0.bindMemory(to: Bytef.self).baseAddress, z_size_t(length)))
            }
            #expect(Checksum.crc32(piece, seed: seed) == expected, "length \(length), offset \(offset), seed \(seed)")
        }
        #expect(Checksum.crc32(Data("123456789".utf8)) == 0xCBF4_3926)  // the standard check value
    }
}
