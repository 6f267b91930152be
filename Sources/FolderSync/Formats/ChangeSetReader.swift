import CZlib
public import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads change-set files in bounded memory: 64 KiB of file and 64 KiB of
/// decompressed body at a time, plus the change being delivered.
///
/// Nothing is trusted before it is checked: the format version comes first (a
/// newer file is refused before its header is parsed), the header carries its
/// own CRC-32 (so ``readHeader(at:path:)`` is cheap and safe), and
/// ``forEachChange(at:path:_:)`` checks the whole file's CRC-32 before it
/// delivers a single change, so a damaged file never yields wrong data.
/// `path` is the (remote) path every error names.
///
/// Public so that tools (`foldersync inspect`, ``RemoteTreeDoctor``) read files with exactly the code sync uses.
@_spi(Tooling) public enum ChangeSetReader {
    /// The header, checked against its own CRC-32; the body is not read.
    public static func readHeader(at url: URL, path: String) throws -> ChangeSetHeader {
        let file = try ChangeSetInputFile(url: url, path: path)
        return try readHeader(of: file, path: path).header
    }

    /// Checks the header and the CRC-32 of the whole file in one streaming pass; does not decompress.
    public static func verify(at url: URL, path: String) throws -> ChangeSetHeader {
        let file = try ChangeSetInputFile(url: url, path: path)
        return try verify(file, path: path).header
    }

    /// Verifies the file, then decodes and delivers its changes one at a time, in file order.
    ///
    /// Also checks the structure: the number of changes, each record's shape, and that the body ends
    /// exactly after the last change. Errors thrown by `body` pass through unchanged.
    public static func forEachChange(at url: URL, path: String, _ body: (SyncChange) throws -> Void) throws {
        try forEachChange(at: url, path: path, selecting: .all, body)
    }

    /// The same pass, delivering only the records `selection` keeps; the others are checked for shape and skipped
    /// without being decoded (a pass that looks for deletes or attachments need not build 100,000 changes).
    static func forEachChange(
        at url: URL, path: String, selecting selection: ChangeSetRecord.Selection,
        _ body: (SyncChange) throws -> Void
    ) throws {
        let file = try ChangeSetInputFile(url: url, path: path)
        let layout = try verify(file, path: path)
        var offset = UInt64(layout.headerByteCount)
        var remaining = layout.compressedByteCount
        let inflater = try InflateStream(path: path) { buffer in
            let count = Int(min(UInt64(buffer.count), remaining))
            guard count > 0 else { return 0 }
            let read = try file.read(at: offset, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]))
            guard read == count else { throw corrupt("became shorter while being read", path: path) }
            offset += UInt64(read)
            remaining -= UInt64(read)
            return read
        }
        var source = InflatedByteSource(inflater: inflater, expectedByteCount: layout.uncompressedByteCount)
        let total = layout.header.changeCount
        for index in 0..<total {
            let change: SyncChange?
            do {
                change = try ChangeSetRecord.decode(from: &source, selecting: selection)
            } catch let violation as FormatViolation {
                throw corrupt("change \(index + 1) of \(total) is malformed: \(violation.reason)", path: path)
            }
            if let change { try body(change) }
        }
        do {
            guard try source.isAtEnd() else { throw FormatViolation("holds more data than its \(total) changes") }
        } catch let violation as FormatViolation {
            throw corrupt(violation.reason, path: path)
        }
        guard remaining == 0, inflater.unconsumedInputCount == 0 else {
            throw corrupt("has data after the end of its compressed body", path: path)
        }
    }

    // MARK: Steps

    private struct Layout {
        var header: ChangeSetHeader
        var headerByteCount: Int
        var compressedByteCount: UInt64
        var uncompressedByteCount: UInt64
    }

    private static func readHeader(of file: ChangeSetInputFile, path: String) throws -> (
        header: ChangeSetHeader, byteCount: Int
    ) {
        let magic = ChangeSetFile.magic
        let preamble = try file.readBytes(at: 0, count: ChangeSetFile.preambleByteCount)
        let signature = Array(preamble.prefix(magic.count))
        guard signature == magic else {
            if file.size == 0 { throw corrupt("is empty", path: path) }
            if signature == Array(magic.prefix(signature.count)) { throw truncated(file, path: path) }
            throw corrupt("does not start with the change-set signature (not a change set, or damaged)", path: path)
        }
        guard preamble.count > magic.count else { throw truncated(file, path: path) }
        // The version is checked before anything else is interpreted: a newer format may change everything after it.
        let version = preamble[magic.count]
        guard version != 0 else { throw corrupt("claims format version 0, which does not exist", path: path) }
        guard version <= ChangeSetFile.formatVersion else {
            throw FolderSyncError(
                .unsupportedFormatVersion,
                "change set format version \(version) is newer than the supported version \(ChangeSetFile.formatVersion)",
                path: path)
        }
        guard preamble.count == ChangeSetFile.preambleByteCount else { throw truncated(file, path: path) }
        let fieldsByteCount = Int(littleEndianUInt32(preamble[(magic.count + 1)...]))
        guard fieldsByteCount <= ChangeSetFile.maximumHeaderFieldsByteCount else {
            throw corrupt("declares an implausible header length of \(fieldsByteCount) bytes", path: path)
        }
        let rest = try file.readBytes(at: UInt64(preamble.count), count: fieldsByteCount + 4)
        guard rest.count == fieldsByteCount + 4 else { throw truncated(file, path: path) }
        let fields = Array(rest.prefix(fieldsByteCount))
        let stored = littleEndianUInt32(rest.suffix(4))
        let computed = Checksum.crc32(Data(preamble + fields))
        guard stored == computed else {
            throw corrupt(
                "header fails its CRC-32 check (stored \(Checksum.hex(stored)), computed \(Checksum.hex(computed)))",
                path: path)
        }
        do {
            let header = try ChangeSetHeader.decodeFields(fields)
            return (header, preamble.count + rest.count)
        } catch let violation as FormatViolation {
            throw corrupt("header is malformed: \(violation.reason)", path: path)
        }
    }

    private static func verify(_ file: ChangeSetInputFile, path: String) throws -> Layout {
        let (header, headerByteCount) = try readHeader(of: file, path: path)
        let size = file.size
        guard size >= UInt64(headerByteCount + ChangeSetFile.trailerByteCount) else {
            throw truncated(file, path: path)
        }
        let checksummedEnd = size - 4
        var checksum: UInt32 = 0
        var offset: UInt64 = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: ChangeSetFile.chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        while offset < checksummedEnd {
            let wanted = Int(min(UInt64(buffer.count), checksummedEnd - offset))
            let read = try file.read(at: offset, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted]))
            guard read == wanted else { throw corrupt("became shorter while being read", path: path) }
            checksum = foldersync_crc32(checksum, buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), read)
            offset += UInt64(read)
        }
        let trailer = try file.readBytes(
            at: size - UInt64(ChangeSetFile.trailerByteCount), count: ChangeSetFile.trailerByteCount)
        guard trailer.count == ChangeSetFile.trailerByteCount else {
            throw corrupt("became shorter while being read", path: path)
        }
        let stored = littleEndianUInt32(trailer.suffix(4))
        let computed = UInt32(truncatingIfNeeded: checksum)
        guard stored == computed else {
            throw corrupt(
                "fails its CRC-32 check (stored \(Checksum.hex(stored)), computed \(Checksum.hex(computed))): it is truncated or damaged",
                path: path)
        }
        var lengths = ArrayByteSource(Array(trailer.prefix(16)))
        let compressed = try lengths.readUInt64()
        let uncompressed = try lengths.readUInt64()
        guard compressed == size - UInt64(headerByteCount + ChangeSetFile.trailerByteCount) else {
            throw corrupt("trailer's body length \(compressed) disagrees with the file size \(size)", path: path)
        }
        return Layout(
            header: header, headerByteCount: headerByteCount,
            compressedByteCount: compressed, uncompressedByteCount: uncompressed)
    }

    // MARK: Helpers

    private static func corrupt(_ reason: String, path: String) -> FolderSyncError {
        FolderSyncError(.corruptFile, "change set " + reason, path: path)
    }

    private static func truncated(_ file: ChangeSetInputFile, path: String) -> FolderSyncError {
        corrupt("is truncated (\(file.size) bytes)", path: path)
    }

    private static func littleEndianUInt32(_ bytes: some Collection<UInt8>) -> UInt32 {
        bytes.reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }
}

/// The decompressed body as a ``ByteSource``, one 64 KiB buffer at a time.
private final class InflatedByteSource: ByteSource {
    private let inflater: InflateStream
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: ChangeSetFile.chunkSize, alignment: 16)
    private var position = 0
    private var count = 0
    /// What the (checksummed) trailer says the body decompresses to.
    private let expectedByteCount: UInt64
    private var producedByteCount: UInt64 = 0

    init(inflater: InflateStream, expectedByteCount: UInt64) {
        self.inflater = inflater
        self.expectedByteCount = expectedByteCount
    }

    deinit { buffer.deallocate() }

    /// Bytes of the body not yet handed out, by the trailer's count.
    private var remainingByteCount: UInt64 {
        expectedByteCount - (producedByteCount - UInt64(count - position))
    }

    func readByte() throws -> UInt8 {
        if position == count {
            try refill()
            guard count > 0 else { throw FormatViolation("ends in the middle of a record") }
        }
        defer { position += 1 }
        return buffer[position]
    }

    func readBytes(_ wanted: Int) throws -> [UInt8] {
        // Checked against the trailer first, so a damaged length never triggers a huge allocation.
        guard UInt64(wanted) <= remainingByteCount else {
            throw FormatViolation("a field runs past the end of the body")
        }
        var result: [UInt8] = []
        result.reserveCapacity(min(wanted, ChangeSetFile.chunkSize))
        while result.count < wanted {
            if position == count {
                try refill()
                guard count > 0 else { throw FormatViolation("ends in the middle of a record") }
            }
            let take = min(wanted - result.count, count - position)
            result.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[position..<position + take]))
            position += take
        }
        return result
    }

    func readUInt64() throws -> UInt64 {
        guard count - position >= 8 else {
            var value: UInt64 = 0
            for index in 0..<8 { value |= UInt64(try readByte()) << (8 * UInt64(index)) }
            return value
        }
        defer { position += 8 }
        return UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: position, as: UInt64.self))
    }

    /// Length-prefixed UTF-8 made into a string straight from the buffer when it lies within it.
    func readString(what: String) throws -> String {
        var source = self  // a class: the same reader, through a variable, for the protocol's mutating helpers
        let length = try source.readVarint()
        guard length <= UInt64(count - position) else {
            guard length <= UInt64(Int.max) else { throw FormatViolation("\(what) length \(length) is out of range") }
            return try UTF8Text.string(try readBytes(Int(length)), what: what)
        }
        let bytes = UnsafeRawBufferPointer(rebasing: buffer[position..<position + Int(length)])
        position += Int(length)
        return try UTF8Text.string(bytes, what: what)
    }

    func skipBytes(_ wanted: Int) throws {
        guard UInt64(wanted) <= remainingByteCount else {
            throw FormatViolation("a field runs past the end of the body")
        }
        var left = wanted
        while left > 0 {
            if position == count {
                try refill()
                guard count > 0 else { throw FormatViolation("ends in the middle of a record") }
            }
            let take = min(left, count - position)
            position += take
            left -= take
        }
    }

    /// Whether the body is exhausted: the zlib stream ended exactly at the trailer's uncompressed length.
    func isAtEnd() throws -> Bool {
        if position < count { return false }
        try refill()
        if count > 0 { return false }
        guard producedByteCount == expectedByteCount else {
            throw FormatViolation(
                "body decompresses to \(producedByteCount) bytes, not the \(expectedByteCount) its trailer says")
        }
        return true
    }

    private func refill() throws {
        position = 0
        count = try inflater.read(into: buffer)
        producedByteCount += UInt64(count)
        guard producedByteCount <= expectedByteCount else {
            throw FormatViolation("body decompresses to more than the \(expectedByteCount) bytes its trailer says")
        }
    }
}

/// A change-set file opened for reading at explicit offsets.
private final class ChangeSetInputFile {
    private let descriptor: Int32
    private let path: String
    let size: UInt64

    init(url: URL, path: String) throws {
        self.path = path
        descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw LocalFiles.error("open", path: path) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let error = LocalFiles.error("stat", path: path)
            close(descriptor)
            throw error
        }
        size = UInt64(max(0, status.st_size))
    }

    deinit { close(descriptor) }

    /// Fills `buffer` from `offset`; fewer bytes only at the end of the file.
    func read(at offset: UInt64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var done = 0
        while done < buffer.count {
            let count = pread(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if count < 0 {
                if errno == EINTR { continue }
                throw LocalFiles.error("read", path: path)
            }
            if count == 0 { break }
            done += count
        }
        return done
    }

    /// Up to `count` bytes from `offset`, for small fixed parts (header, trailer).
    func readBytes(at offset: UInt64, count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let read = try bytes.withUnsafeMutableBytes { try self.read(at: offset, into: $0) }
        return Array(bytes.prefix(read))
    }
}
