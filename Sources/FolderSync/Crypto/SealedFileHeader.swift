import Foundation

/// The 48-byte header of a sealed file (``SealedFile``): `"FSYNCENC" | version u32 LE | chunk size u32 LE | salt`.
///
/// Parsed without any key or cipher, so that a header that is not one of ours is refused before any crypto,
/// and so that scripts/fuzz can fuzz it without compiling swift-crypto.
struct SealedFileHeader {
    static let magic = Data("FSYNCENC".utf8)
    static let version: UInt32 = 1
    static let size = 48
    /// The AES-GCM tag that ends every sealed chunk.
    static let tagSize = 16
    /// 256 KiB: large enough that per-chunk costs vanish, small enough to stream.
    static let defaultChunkSize = 1 << 18
    static let chunkSizes = 1 << 12...1 << 24

    /// The largest sealed file that can hold `plaintext` bytes, whatever chunk size its writer chose: what a
    /// bounded read of an encrypted file allows.
    static func maximumSealedSize(ofPlaintext plaintext: Int) -> Int {
        size + (plaintext / chunkSizes.lowerBound + 1) * tagSize + plaintext
    }

    /// The header's bytes: every chunk's associated data.
    let bytes: Data
    let chunkSize: Int
    /// The 32 random bytes the file's key is derived with.
    var salt: Data { bytes.suffix(32) }

    /// A new file's header.
    init(chunkSize: Int, salt: Data) {
        precondition(Self.chunkSizes.contains(chunkSize) && salt.count == 32)
        var bytes = Self.magic
        bytes.append(littleEndian: Self.version)
        bytes.append(littleEndian: UInt32(chunkSize))
        bytes.append(salt)
        self.bytes = bytes
        self.chunkSize = chunkSize
    }

    /// An existing file's header; refuses one that is not one of ours.
    ///
    /// - Throws: ``FolderSyncError/Code/tamperedFile``, or ``FolderSyncError/Code/unsupportedFormatVersion`` for
    ///   a newer version.
    init(parsing header: Data, path: String) throws {
        let header = Data(header)
        guard header.count == Self.size, header.prefix(8) == Self.magic else {
            throw Self.tampered(path, "is not an encrypted FolderSync file")
        }
        let version = header.uint32(at: 8)
        guard version <= Self.version else {
            throw FolderSyncError(
                .unsupportedFormatVersion,
                "encrypted file format version \(version) is newer than the supported \(Self.version)", path: path)
        }
        guard version == Self.version else {
            throw Self.tampered(path, "has format version \(version), which never existed")
        }
        let chunkSize = Int(header.uint32(at: 12))
        guard Self.chunkSizes.contains(chunkSize) else { throw Self.tampered(path, "has an impossible chunk size") }
        self.bytes = header
        self.chunkSize = chunkSize
    }

    static func tampered(_ path: String, _ what: String) -> FolderSyncError {
        FolderSyncError(
            .tamperedFile,
            "the encrypted file \(what): it was altered, damaged, moved from another path, "
                + "or sealed with another key", path: path)
    }
}
