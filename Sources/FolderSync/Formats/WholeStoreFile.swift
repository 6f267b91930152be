import Foundation

/// `WholeStore.ticdsync`: a SQLite snapshot of a document, zlib-compressed, versioned and checksummed.
///
/// ```
/// magic "FSWHOLST", format version (1 byte), header length H (UInt32 LE)
/// header  H bytes: whole-store identifier, uploading client (length-prefixed UTF-8),
///         schema version (Int64 LE), snapshot length (UInt64 LE)
/// body    one zlib stream of the snapshot's bytes
/// trailer CRC-32 of every preceding byte (UInt32 LE)
/// ```
/// Written and read in 64 KiB chunks, so a store of any size moves in bounded memory.
enum WholeStoreFile {
    static let magic = Array("FSWHOLST".utf8)
    static let formatVersion: UInt8 = 1
    static let chunkSize = 64 * 1024

    struct Header: Hashable {
        var wholeStoreIdentifier: String
        var clientIdentifier: String
        var schemaVersion: Int
        var snapshotByteCount: UInt64
    }

    /// Compresses the SQLite file at `snapshot` into `destination`; returns the file's size and CRC-32.
    static func write(snapshot: URL, to destination: URL, header: Header) throws -> (byteCount: Int64, checksum: UInt32) {
        guard FileManager.default.createFile(atPath: destination.path, contents: nil),
              let output = try? FileHandle(forWritingTo: destination), let input = try? FileHandle(forReadingFrom: snapshot) else {
            throw FolderSyncError(.localStoreFailed, "cannot open the whole store for writing", path: destination.path)
        }
        defer { try? output.close(); try? input.close() }
        var crc: UInt32 = 0
        var size: Int64 = 0
        func emit(_ bytes: Data) throws {
            crc = Checksum.crc32(bytes, seed: crc)
            size += Int64(bytes.count)
            try output.write(contentsOf: bytes)
        }
        var fields = ByteSink()
        fields.appendString(header.wholeStoreIdentifier)
        fields.appendString(header.clientIdentifier)
        fields.appendInt64(Int64(header.schemaVersion))
        fields.appendUInt64(header.snapshotByteCount)
        var preamble = ByteSink()
        preamble.bytes += magic
        preamble.bytes.append(formatVersion)
        preamble.appendUInt32(UInt32(fields.bytes.count))
        try emit(Data(preamble.bytes + fields.bytes))
        let deflater = try DeflateStream(path: destination.path) { chunk in try emit(Data(chunk)) }
        var copied: UInt64 = 0
        while let chunk = try input.read(upToCount: chunkSize), !chunk.isEmpty {
            try chunk.withUnsafeBytes { try deflater.write($0) }
            copied += UInt64(chunk.count)
        }
        try deflater.finish()
        guard copied == header.snapshotByteCount else {
            throw FolderSyncError(.localStoreFailed, "the snapshot changed while it was compressed", path: snapshot.path)
        }
        var trailer = ByteSink()
        trailer.appendUInt32(crc)
        try output.write(contentsOf: Data(trailer.bytes))
        try output.synchronize()
        return (size + 4, Checksum.crc32(Data(trailer.bytes), seed: crc))
    }

    /// The CRC-32 and size of a whole file, read in chunks (what a manifest records).
    static func fingerprint(of url: URL) throws -> (byteCount: Int64, checksum: UInt32) {
        guard let input = try? FileHandle(forReadingFrom: url) else {
            throw FolderSyncError(.localStoreFailed, "cannot open the whole store", path: url.path)
        }
        defer { try? input.close() }
        var crc: UInt32 = 0
        var size: Int64 = 0
        while let chunk = try input.read(upToCount: chunkSize), !chunk.isEmpty {
            crc = Checksum.crc32(chunk, seed: crc)
            size += Int64(chunk.count)
        }
        return (size, crc)
    }

    /// Verifies `source` and decompresses it into a new SQLite file at `snapshot`.
    ///
    /// - Throws: ``FolderSyncError/Code/corruptFile`` or ``FolderSyncError/Code/unsupportedFormatVersion``, naming `path`.
    static func read(_ source: URL, to snapshot: URL, path: String) throws -> Header {
        func corrupt(_ reason: String) -> FolderSyncError { FolderSyncError(.corruptFile, "whole store \(reason)", path: path) }
        let size = (try? FileManager.default.attributesOfItem(atPath: source.path)[.size] as? Int64) ?? 0
        guard let input = try? FileHandle(forReadingFrom: source) else { throw corrupt("cannot be opened") }
        defer { try? input.close() }
        guard size >= Int64(magic.count + 5 + 4) else { throw corrupt("is truncated") }
        let preamble = [UInt8](try input.read(upToCount: magic.count + 5) ?? Data())
        guard Array(preamble.prefix(magic.count)) == magic else { throw corrupt("is not a FolderSync whole store") }
        guard preamble[magic.count] <= formatVersion else {
            throw FolderSyncError(.unsupportedFormatVersion, "whole-store format version \(preamble[magic.count]) is newer than the supported \(formatVersion)", path: path)
        }
        // Checksum first: nothing is decompressed from a file that fails it.
        try input.seek(toOffset: 0)
        var crc: UInt32 = 0
        var remaining = size - 4
        while remaining > 0, let chunk = try input.read(upToCount: Int(min(Int64(chunkSize), remaining))), !chunk.isEmpty {
            crc = Checksum.crc32(chunk, seed: crc)
            remaining -= Int64(chunk.count)
        }
        let stored = [UInt8](try input.read(upToCount: 4) ?? Data())
        guard remaining == 0, stored.count == 4, crc == stored.enumerated().reduce(UInt32(0), { $0 | UInt32($1.element) << (8 * UInt32($1.offset)) })
        else { throw corrupt("fails its checksum") }

        let headerLength = Int(preamble[magic.count + 1]) | Int(preamble[magic.count + 2]) << 8
            | Int(preamble[magic.count + 3]) << 16 | Int(preamble[magic.count + 4]) << 24
        guard headerLength <= 64 * 1024, Int64(magic.count + 5 + headerLength + 4) <= size else { throw corrupt("has a bad header length") }
        try input.seek(toOffset: UInt64(magic.count + 5))
        var fields = ArrayByteSource([UInt8](try input.read(upToCount: headerLength) ?? Data()))
        let header: Header
        do {
            header = Header(wholeStoreIdentifier: try fields.readString(what: "identifier"), clientIdentifier: try fields.readString(what: "client"),
                            schemaVersion: Int(try fields.readInt64()), snapshotByteCount: try fields.readUInt64())
        } catch { throw corrupt("has an unreadable header") }

        var bodyRemaining = size - 4 - Int64(magic.count + 5 + headerLength)
        let inflater = try InflateStream(path: path) { buffer in
            guard bodyRemaining > 0, let chunk = try input.read(upToCount: Int(min(Int64(buffer.count), bodyRemaining))) else { return 0 }
            chunk.copyBytes(to: buffer)
            bodyRemaining -= Int64(chunk.count)
            return chunk.count
        }
        guard FileManager.default.createFile(atPath: snapshot.path, contents: nil),
              let output = try? FileHandle(forWritingTo: snapshot) else {
            throw FolderSyncError(.localStoreFailed, "cannot write the snapshot", path: snapshot.path)
        }
        defer { try? output.close() }
        var buffer = [UInt8](repeating: 0, count: chunkSize)
        var written: UInt64 = 0
        while true {
            let count = try buffer.withUnsafeMutableBytes { try inflater.read(into: $0) }
            if count == 0 { break }
            try output.write(contentsOf: Data(buffer[0..<count]))
            written += UInt64(count)
        }
        guard inflater.isAtEnd, written == header.snapshotByteCount else { throw corrupt("ends early") }
        try output.synchronize()
        return header
    }
}
