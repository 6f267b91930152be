import Foundation

/// `WholeStore.ticdsync`: a SQLite snapshot of a document, versioned and checksummed.
///
/// ```
/// magic "FSWHOLST", format version (1 byte), header length H (UInt32 LE)
/// header  H bytes: whole-store identifier, uploading client (length-prefixed UTF-8),
///         schema version (Int64 LE), snapshot length (UInt64 LE),
///         version 2 and later: body encoding (1 byte: 0 stored, 1 zlib)
///         version 3 and later: snapshot schema version (Int64 LE), then what the snapshot contains: a count
///         (varint) of (client, highest sequence) pairs, sorted by client, each a length-prefixed UTF-8 string
///         and an Int64 LE
/// body    the snapshot's bytes, stored as they are or as one zlib stream (version 1: always zlib)
/// trailer CRC-32 of every preceding byte (UInt32 LE)
/// ```
/// Written in 64 KiB chunks and read as a stream by ``WholeStoreReader``, so a store of any size moves in
/// bounded memory. Version 2 exists because inflating a store costs more than copying it (zlib inflates
/// ~400 MB/s, a page-cache copy runs at ~1.7 GB/s): a store that is not compressed installs in one pass.
/// Version 3 says in the file itself what the snapshot contains, written in the same pass as the snapshot and
/// covered by the trailer: a reader installs, and a vacuum counts, a store only when its manifest's claim is
/// the file's own, and the snapshot schema version decides by number how its bookkeeping tables are read.
enum WholeStoreFile {
    static let magic = Array("FSWHOLST".utf8)
    /// The version written; every version up to it is read.
    static let formatVersion: UInt8 = 3
    static let chunkSize = 64 * 1024

    struct Header: Hashable {
        var wholeStoreIdentifier: String
        var clientIdentifier: String
        var schemaVersion: Int
        var snapshotByteCount: UInt64
        /// How the body holds the snapshot (version 1 files: always zlib).
        var compression: WholeStoreCompression = .zlib
        /// The shape of the snapshot's bookkeeping tables (``SnapshottingModelAdapter/snapshotSchemaVersion``);
        /// `nil` in files before version 3.
        var snapshotSchemaVersion: Int? = nil
        /// Per client, the highest sequence whose change set the snapshot contains; `nil` in files before version 3.
        var covers: [String: Int64]? = nil
    }

    /// Writes the SQLite file at `snapshot` into `destination` (compressed as `header.compression` says);
    /// returns the file's size, the CRC-32 of the whole file (a manifest's version-1 check) and the CRC-32 of
    /// everything before the trailer (its content checksum, since manifest version 2).
    static func write(snapshot: URL, to destination: URL, header: Header) throws -> (
        byteCount: Int64, checksum: UInt32, contentChecksum: UInt32
    ) {
        guard
            FileManager.default.createFile(
                atPath: destination.path, contents: nil, attributes: [.posixPermissions: LocalFiles.privateFileMode]),
            let output = try? FileHandle(forWritingTo: destination),
            let input = try? FileHandle(forReadingFrom: snapshot)
        else {
            throw FolderSyncError(.localStoreFailed, "cannot open the whole store for writing", path: destination.path)
        }
        defer {
            try? output.close()
            try? input.close()
        }
        var crc: UInt32 = 0
        var size: Int64 = 0
        func emit(_ bytes: Data) throws {
            crc = Checksum.crc32(bytes, seed: crc)
            size += Int64(bytes.count)
            try output.write(contentsOf: bytes)
        }
        try emit(Data(encodedHeader(header)))
        let deflater =
            header.compression == .zlib
            ? try DeflateStream(path: destination.path) { chunk in try emit(Data(chunk)) } : nil
        var copied: UInt64 = 0
        // Stored bodies go in 1 MiB pieces: fewer system calls, and the CRC runs on larger buffers.
        while let chunk = try input.read(upToCount: deflater == nil ? 1 << 20 : chunkSize), !chunk.isEmpty {
            if let deflater { try chunk.withUnsafeBytes { try deflater.write($0) } } else { try emit(chunk) }
            copied += UInt64(chunk.count)
        }
        try deflater?.finish()
        guard copied == header.snapshotByteCount else {
            throw FolderSyncError(.localStoreFailed, "the snapshot changed while it was written", path: snapshot.path)
        }
        var trailer = ByteSink()
        trailer.appendUInt32(crc)
        try output.write(contentsOf: Data(trailer.bytes))
        try output.synchronize()
        return (size + 4, Checksum.crc32(Data(trailer.bytes), seed: crc), crc)
    }

    /// The magic, version, header length and header fields of a file of the current version.
    static func encodedHeader(_ header: Header) -> [UInt8] {
        var fields = ByteSink()
        fields.appendString(header.wholeStoreIdentifier)
        fields.appendString(header.clientIdentifier)
        fields.appendInt64(Int64(header.schemaVersion))
        fields.appendUInt64(header.snapshotByteCount)
        fields.bytes.append(header.compression.rawValue)
        fields.appendInt64(Int64(header.snapshotSchemaVersion ?? 0))
        let covers = (header.covers ?? [:]).sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        fields.appendVarint(UInt64(covers.count))
        for (client, sequence) in covers {
            fields.appendString(client)
            fields.appendInt64(sequence)
        }
        var preamble = ByteSink()
        preamble.bytes += magic
        preamble.bytes.append(formatVersion)
        preamble.appendUInt32(UInt32(fields.bytes.count))
        return preamble.bytes + fields.bytes
    }

    /// Verifies the local file `source` and writes its snapshot into a new SQLite file at `snapshot`.
    ///
    /// - Throws: ``FolderSyncError/Code/corruptFile`` or ``FolderSyncError/Code/unsupportedFormatVersion``, naming
    ///   `path`.
    static func read(_ source: URL, to snapshot: URL, path: String) throws -> Header {
        let reader = try WholeStoreReader(snapshot: snapshot, path: path)
        do {
            try LocalFiles.readPieces(of: source, size: 1 << 20) { piece, _ in try reader.consume(piece) }
        } catch let error as FolderSyncError where error.code == .localStoreFailed && error.path == source.path {
            throw FolderSyncError(.corruptFile, "whole store cannot be read", path: path)
        }
        return try reader.finish().header
    }
}

/// How a whole-store file holds its snapshot.
///
/// Stored is the default: installing a stored store is one pass over its bytes, while inflating runs at about a
/// quarter of a page-cache copy. zlib makes the file about 2.7 times smaller (0.38 of a real SQLite file at
/// level 1): choose it when the remote is slow or metered (a WebDAV share over the internet).
public enum WholeStoreCompression: UInt8, Sendable, Hashable, CaseIterable {
    /// The snapshot's bytes as they are.
    case none = 0
    /// One zlib stream (level 1).
    case zlib = 1
}
