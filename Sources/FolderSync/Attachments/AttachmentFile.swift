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

    enum Encoding: UInt8 {
        case stored = 0
        case zlib = 1
    }

    /// Encodes the local file `source`, handing the encoded file to `write` piece by piece (an upload), checking it
    /// still has `reference`'s contents.
    ///
    /// The header, written first, says what the reference says; a file that turns out to differ throws before the
    /// last piece, so an upload that streams the pieces publishes nothing. An attached file is hashed again (the app
    /// may have changed it); a large value's own copy, which FolderSync wrote durably under the SHA-256 it hashed
    /// then, is checked by its size alone: hashing 200 MB again cost a tenth of the sync, and every reader checks the
    /// SHA-256 of what it decodes anyway.
    ///
    /// - Throws: ``FolderSyncError/Code/attachmentChanged`` when the file no longer hashes to the reference
    ///   (an immutable attachment changed before it was uploaded).
    static func encode(_ source: URL, as reference: AttachmentReference, into write: (Data) throws -> Void) throws {
        // The deflater keeps its sink, but not past this call (it is finished here).
        try withoutActuallyEscaping(write) { try encode(source, as: reference, escapingInto: $0) }
    }

    private static func encode(
        _ source: URL, as reference: AttachmentReference,
        escapingInto write: @escaping (Data) throws -> Void
    ) throws {
        let input = try LocalStream(reading: source)
        let sample = try input.read(chunkSize)
        let encoding = try compressesWell(sample) ? Encoding.zlib : .stored
        let digest = AttachmentReference.digestBytes(reference.sha256) ?? []
        try write(header(encoding: encoding, size: reference.size, digest: digest))
        var hasher: SHA256? = reference.isInlineValue ? nil : SHA256()
        var size: Int64 = 0
        var deflater: DeflateStream?
        if encoding == .zlib { deflater = try DeflateStream(path: source.path) { try write(Data($0)) } }
        var chunk = sample
        var changed: FolderSyncError {
            FolderSyncError(
                .attachmentChanged,
                "the file changed after it was attached (\(size) bytes, \(reference.size) expected)",
                path: source.path)
        }
        while !chunk.isEmpty {
            hasher?.update(data: chunk)
            size += Int64(chunk.count)
            guard size <= reference.size else { throw changed }
            if let deflater { try chunk.withUnsafeBytes { try deflater.write($0) } } else { try write(chunk) }
            chunk = try input.read(chunkSize)
        }
        guard size == reference.size, hasher.map({ AttachmentReference.hex($0.finalize()) == reference.sha256 }) ?? true
        else {
            throw changed
        }
        try deflater?.finish()
    }

    /// Decodes a downloaded attachment into `destination`, checking it is `reference`'s contents.
    ///
    /// - Throws: ``FolderSyncError/Code/corruptFile`` naming `path` when it is not.
    static func decode(_ source: URL, as reference: AttachmentReference, to destination: URL, path: String) throws {
        try Decoder(sha256: reference.sha256, size: reference.size, to: destination, durably: true, path: path).decode(
            source)
    }

    /// Checks that a file is a well-formed attachment whose contents hash to `sha256` (its name), writing nothing.
    static func verify(_ source: URL, sha256: String, path: String) throws {
        try Decoder(sha256: sha256, size: nil, to: nil, durably: false, path: path).decode(source)
    }

    /// An attachment file's bytes handed over piece by piece as they are read (a download), decoded into
    /// `destination` (or nowhere; flushed to disk when `durably`) and checked: the contents' SHA-256 and, when given,
    /// their size. No copy of the encoded file is needed.
    final class Decoder {
        private let sha256: String, expectedSize: Int64?, destination: URL?, durably: Bool, path: String
        private var header = Data()
        private var size: UInt64 = 0
        private var output: LocalStream?
        private var inflater: InflatePushStream?
        private var hasher = SHA256()
        private var written: UInt64 = 0
        /// The encoded bytes taken so far.
        private(set) var encodedByteCount: Int64 = 0

        init(sha256: String, size: Int64?, to destination: URL?, durably: Bool, path: String) {
            (self.sha256, expectedSize, self.destination, self.durably, self.path) = (
                sha256, size, destination, durably, path
            )
        }

        /// The whole local file `source`, read piece by piece.
        func decode(_ source: URL) throws {
            try LocalFiles.readPieces(of: source, size: 1 << 20) { piece, _ in try take(piece) }
            try finish()
        }

        /// The next piece of the file.
        func take(_ piece: Data) throws {
            encodedByteCount += Int64(piece.count)
            var payload = piece
            if header.count < headerSize {
                let needed = headerSize - header.count
                header.append(piece.prefix(needed))
                payload = piece.count > needed ? piece.dropFirst(needed) : Data()
                guard header.count == headerSize else { return }
                try start()
            }
            guard !payload.isEmpty else { return }
            if let inflater { try payload.withUnsafeBytes { try inflater.write($0) } } else { try append(payload) }
        }

        /// The end of the file: checks that the contents were whole and are the named ones, then closes the decoded
        /// file.
        func finish() throws {
            guard header.count == headerSize else {
                throw header.starts(with: magic.prefix(header.count)) && !header.isEmpty
                    ? corrupt("ends inside its header") : corrupt("does not start with FSATTACH")
            }
            try inflater?.finish()
            guard written == size, AttachmentReference.hex(hasher.finalize()) == sha256 else {
                throw corrupt("contents do not match its SHA-256")
            }
            try output?.close(durably: durably)
        }

        private func corrupt(_ reason: String) -> FolderSyncError {
            FolderSyncError(.corruptFile, "attachment \(reason)", path: path)
        }

        /// Reads the complete header and opens the destination.
        private func start() throws {
            var fields = ArrayByteSource(Array(header))
            guard (try? fields.readBytes(magic.count)) == magic else { throw corrupt("does not start with FSATTACH") }
            let version = try fields.readByte()
            guard version == AttachmentFile.version else {
                throw FolderSyncError(
                    .unsupportedFormatVersion, "attachment format version \(version) is not supported", path: path)
            }
            guard let encoding = Encoding(rawValue: try fields.readByte()) else {
                throw corrupt("has an unknown encoding")
            }
            size = try fields.readUInt64()
            let digest = try fields.readBytes(32)
            guard expectedSize.map({ UInt64($0) == size }) ?? true, AttachmentReference.hex(digest) == sha256 else {
                throw corrupt("header does not match its name")
            }
            // A zlib body of a few kilobytes can claim any size: the disk must have room for the claim before a byte
            // is written (and `append` never writes more than it).
            if let destination {
                try LocalFiles.checkFreeSpace(for: size, in: destination.deletingLastPathComponent(), path: path)
                output = try LocalStream(writing: destination)
            }
            if encoding == .zlib {
                inflater = try InflatePushStream(path: path) { [unowned self] in try self.append(Data($0)) }
            }
        }

        private func append(_ data: Data) throws {
            written += UInt64(data.count)
            guard written <= size else { throw corrupt("is longer than its header says") }
            hasher.update(data: data)
            try output?.write(data)
        }
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
