import Crypto
import Foundation

/// The remote form of an attachment, `Attachments/<sha256>`, written and read as a stream.
///
/// ```
/// magic     8 bytes  "FSATTACH"
/// version   1 byte   1
/// encoding  1 byte   0 stored, 1 zlib (RFC 1950)
/// size      UInt64 LE, the contents' size
/// sha256    32 bytes, the contents' SHA-256 (also the file's name)
/// payload   the contents, stored or compressed
/// ```
/// The contents are compressed only when a sample of them shrinks by a tenth at zlib level 1 (photos and
/// archives do not). A reader checks the size and the SHA-256 of what it decodes, so a damaged or tampered
/// file is never taken for the attachment.
///
/// **Names under encryption (decided, not built yet).** The name is the unkeyed SHA-256 of the contents even on an
/// encrypted remote, so a provider holding a known file can confirm that a user holds it too (the contents and
/// header are sealed; the name is not). Fixing it changes the remote layout, so it is a new attachment-name version,
/// not a patch, and it is deferred as a whole rather than half done. The design: under encryption the name becomes
/// `k1-` + hex HMAC-SHA256 of the contents' SHA-256 under a name key derived from the data key (HKDF-SHA256, label
/// `FolderSync attachment name v1`); references inside change sets and stores (sealed) keep the plain SHA-256, from
/// which the name is computed; writers use the keyed name; readers and vacuum look for the keyed name, then the
/// unkeyed one (old files stay readable); `RemoteLayouts/` gains the name version with a golden tree; a clear
/// remote keeps unkeyed names (the provider sees the contents anyway).
enum AttachmentFile {
    static let magic = Array("FSATTACH".utf8)
    static let version: UInt8 = 1
    static let headerSize = 8 + 1 + 1 + 8 + 32
    static let chunkSize = 256 * 1024

    enum Encoding: UInt8 { case stored = 0, zlib = 1 }

    /// Encodes the local file `source` into `destination`, checking it still has `reference`'s contents.
    ///
    /// - Throws: ``FolderSyncError/Code/attachmentChanged`` when the file no longer hashes to the reference
    ///   (an immutable attachment changed before it was uploaded).
    static func encode(_ source: URL, as reference: AttachmentReference, to destination: URL) throws {
        let input = try LocalStream(reading: source)
        let output = try LocalStream(writing: destination)
        let sample = try input.read(chunkSize)
        let encoding = try compressesWell(sample) ? Encoding.zlib : .stored
        try output.write(Data(count: headerSize))
        var hasher = SHA256()
        var size: Int64 = 0
        var deflater: DeflateStream?
        if encoding == .zlib { deflater = try DeflateStream(path: destination.path) { try output.write(Data($0)) } }
        var chunk = sample
        while !chunk.isEmpty {
            hasher.update(data: chunk)
            size += Int64(chunk.count)
            if let deflater { try chunk.withUnsafeBytes { try deflater.write($0) } } else { try output.write(chunk) }
            chunk = try input.read(chunkSize)
        }
        try deflater?.finish()
        let digest = Array(hasher.finalize())
        guard AttachmentReference.hex(digest) == reference.sha256, size == reference.size else {
            throw FolderSyncError(.attachmentChanged, "the file changed after it was attached (\(size) bytes, \(reference.size) expected)",
                                  path: source.path)
        }
        try output.write(header(encoding: encoding, size: size, digest: digest), at: 0)
        try output.close()
    }

    /// Decodes a downloaded attachment into `destination`, checking it is `reference`'s contents.
    ///
    /// - Throws: ``FolderSyncError/Code/corruptFile`` naming `path` when it is not.
    static func decode(_ source: URL, as reference: AttachmentReference, to destination: URL, path: String) throws {
        try decode(source, sha256: reference.sha256, size: reference.size, to: destination, path: path)
    }

    /// Checks that a file is a well-formed attachment whose contents hash to `sha256` (its name), writing nothing.
    static func verify(_ source: URL, sha256: String, path: String) throws {
        try decode(source, sha256: sha256, size: nil, to: nil, path: path)
    }

    /// Decodes into `destination` (or nowhere), checking the contents' SHA-256 and, when given, their size.
    private static func decode(_ source: URL, sha256: String, size expectedSize: Int64?, to destination: URL?, path: String) throws {
        let input = try LocalStream(reading: source)
        var header = ArrayByteSource(Array(try input.read(headerSize)))
        func corrupt(_ reason: String) -> FolderSyncError { FolderSyncError(.corruptFile, "attachment \(reason)", path: path) }
        guard (try? header.readBytes(magic.count)) == magic else { throw corrupt("does not start with FSATTACH") }
        let version = try header.readByte()
        guard version == Self.version else {
            throw FolderSyncError(.unsupportedFormatVersion, "attachment format version \(version) is not supported", path: path)
        }
        guard let encoding = Encoding(rawValue: try header.readByte()) else { throw corrupt("has an unknown encoding") }
        let size = try header.readUInt64()
        let digest = try header.readBytes(32)
        guard expectedSize.map({ UInt64($0) == size }) ?? true, AttachmentReference.hex(digest) == sha256 else {
            throw corrupt("header does not match its name")
        }
        // A zlib body of a few kilobytes can claim any size: the disk must have room for the claim before a byte
        // is written (and `take` never writes more than it).
        if let destination { try LocalFiles.checkFreeSpace(for: size, in: destination.deletingLastPathComponent(), path: path) }
        let output = try destination.map { try LocalStream(writing: $0) }
        var hasher = SHA256()
        var written: UInt64 = 0
        func take(_ data: Data) throws {
            written += UInt64(data.count)
            guard written <= size else { throw corrupt("is longer than its header says") }
            hasher.update(data: data)
            try output?.write(data)
        }
        switch encoding {
        case .stored:
            while case let chunk = try input.read(chunkSize), !chunk.isEmpty { try take(chunk) }
        case .zlib:
            let inflater = try InflateStream(path: path) { buffer in
                let data = try input.read(buffer.count)
                data.copyBytes(to: buffer)
                return data.count
            }
            var buffer = Data(count: chunkSize)
            while true {
                let count = try buffer.withUnsafeMutableBytes { try inflater.read(into: $0) }
                if count == 0 { break }
                try take(buffer.prefix(count))
            }
        }
        guard written == size, AttachmentReference.hex(hasher.finalize()) == sha256 else {
            throw corrupt("contents do not match its SHA-256")
        }
        try output?.close()
    }

    private static func header(encoding: Encoding, size: Int64, digest: [UInt8]) -> Data {
        var sink = ByteSink()
        sink.bytes.append(contentsOf: magic)
        sink.bytes.append(version)
        sink.bytes.append(encoding.rawValue)
        sink.appendUInt64(UInt64(size))
        sink.bytes.append(contentsOf: digest)
        return Data(sink.bytes)
    }

    /// Whether zlib level 1 takes a tenth off `sample`.
    private static func compressesWell(_ sample: Data) throws -> Bool {
        guard sample.count >= 512 else { return false }
        var compressed = 0
        let deflater = try DeflateStream(path: "sample") { compressed += $0.count }
        try sample.withUnsafeBytes { try deflater.write($0) }
        try deflater.finish()
        return compressed < sample.count * 9 / 10
    }
}
