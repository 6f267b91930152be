import CZlib
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Streams sync changes into a change-set file as they are added.
///
/// Records are compressed and written in 64 KiB chunks, so memory does not
/// grow with the number of changes (except for the row keys that enforce
/// "one change per row", bounded by a part's size when the
/// ``ChangeSetSplitter`` is used). The file is complete and valid only after
/// ``finish()``, which fills in the header's change count, writes the trailer
/// and fsyncs; a writer dropped before that removes its partial file.
final class ChangeSetWriter {
    private struct RowKey: Hashable {
        let table: String
        let syncID: String
    }

    private let url: URL
    private let output: ChangeSetOutputFile
    private let deflater: DeflateStream
    private var header: ChangeSetHeader
    private let headerByteCount: Int
    private var staging = ByteSink()
    private var record = ByteSink()
    /// The rows appended so far: the first alone, a set from the second on (a process's first set of row keys cost a
    /// conformance lookup across every loaded image, a twentieth of a one-row sync).
    private var firstRow: RowKey?
    private var rows: Set<RowKey>?
    private var isFinished = false
    private var failure: (any Error)?

    /// The size of the records appended so far, before compression (what the splitter limits).
    private(set) var uncompressedByteCount = 0
    /// The number of changes appended so far.
    var changeCount: Int { header.changeCount }

    /// Creates (or truncates) the file at `url` and reserves room for the header.
    ///
    /// `createdAt` is kept to the millisecond, as the file stores it.
    init(
        url: URL, changeSetIdentifier: String, clientIdentifier: String, sequence: Int64, schemaVersion: Int,
        createdAt: Date, dependencies: [String: Int64] = [:], compressionLevel: Int32 = 1
    ) throws {
        self.url = url
        header = ChangeSetHeader(
            changeSetIdentifier: changeSetIdentifier, clientIdentifier: clientIdentifier,
            sequence: sequence, schemaVersion: schemaVersion, changeCount: 0,
            createdAt: ChangeSetHeader.normalized(createdAt), dependencies: dependencies)
        let placeholder = header.encodedBlock()
        guard placeholder.count - ChangeSetFile.preambleByteCount - 4 <= ChangeSetFile.maximumHeaderFieldsByteCount
        else {
            throw FolderSyncError(
                .invalidConfiguration, "change-set identifiers are too long for a header", path: url.path)
        }
        headerByteCount = placeholder.count
        let output = try ChangeSetOutputFile(url: url)
        self.output = output
        do {
            deflater = try DeflateStream(level: compressionLevel, path: url.path) { chunk in
                try output.write(chunk, checksummed: true)
            }
        } catch {
            output.close()
            unlink(url.path)
            throw error
        }
        // Zeros until finish(): an unfinished file does not even look like a change set.
        try output.write([UInt8](repeating: 0, count: headerByteCount), checksummed: false)
    }

    deinit {
        if !isFinished {
            output.close()
            unlink(url.path)
        }
    }

    /// Adds one change.
    ///
    /// - Throws: ``FolderSyncError/Code/localStoreFailed`` for a malformed change or a row already in this
    ///   change set (a caller bug: changes to one row are coalesced first); I/O errors from the disk.
    func append(_ change: SyncChange) throws {
        try checkUsable()
        if let problem = ChangeSetRecord.problem(with: change) {
            throw FolderSyncError(.localStoreFailed, "cannot write change set: \(problem)", path: url.path)
        }
        let key = RowKey(table: change.table, syncID: change.syncID)
        let isNew: Bool
        if let firstRow {
            if rows == nil { rows = [firstRow] }
            isNew = rows!.insert(key).inserted
        } else {
            firstRow = key
            isNew = true
        }
        guard isNew else {
            throw FolderSyncError(
                .localStoreFailed,
                "cannot write change set: row \(change.table)/\(change.syncID) is already in it",
                path: url.path)
        }
        record.bytes.removeAll(keepingCapacity: true)
        ChangeSetRecord.encode(change, into: &record)
        staging.bytes.append(contentsOf: record.bytes)
        uncompressedByteCount += record.bytes.count
        header.changeCount += 1
        if staging.bytes.count >= ChangeSetFile.chunkSize { try flushStaging() }
    }

    /// The uncompressed size `change` would add: lets the splitter start a new part before a limit is passed.
    func encodedByteCount(of change: SyncChange) -> Int {
        ChangeSetRecord.byteCount(of: change)
    }

    /// Completes the file: the rest of the body, the trailer, the final header; then fsyncs and closes it.
    @discardableResult
    func finish() throws -> ChangeSetHeader {
        try checkUsable()
        do {
            try flushStaging()
            try deflater.finish()
            var trailer = ByteSink()
            trailer.appendUInt64(output.checksummedByteCount)
            trailer.appendUInt64(UInt64(uncompressedByteCount))
            try output.write(trailer.bytes, checksummed: true)
            let headerBlock = header.encodedBlock()
            precondition(headerBlock.count == headerByteCount, "header size changed while writing")
            try output.write(headerBlock, at: 0)
            // CRC-32 of the whole file before the CRC field: the header's, followed by everything after it.
            let headerCRC = Checksum.crc32(Data(headerBlock))
            let fileCRC = UInt32(
                truncatingIfNeeded: crc32_combine(
                    uLong(headerCRC), uLong(output.checksum),
                    off_t(output.checksummedByteCount)))
            var crcField = ByteSink()
            crcField.appendUInt32(fileCRC)
            try output.write(crcField.bytes, checksummed: false)
            try output.synchronizeAndClose()
        } catch {
            failure = error
            throw error
        }
        isFinished = true
        return header
    }

    private func flushStaging() throws {
        guard !staging.bytes.isEmpty else { return }
        do {
            try staging.bytes.withUnsafeBytes { try deflater.write($0) }
        } catch {
            failure = error
            throw error
        }
        staging.bytes.removeAll(keepingCapacity: true)
    }

    private func checkUsable() throws {
        precondition(!isFinished, "ChangeSetWriter used after finish()")
        if let failure { throw failure }
    }
}

/// The file a ``ChangeSetWriter`` writes, with a running CRC-32 of the bytes after the header.
private final class ChangeSetOutputFile {
    private var descriptor: Int32
    private let path: String
    private(set) var checksum: UInt32 = 0
    private(set) var checksummedByteCount: UInt64 = 0

    init(url: URL) throws {
        path = url.path
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, LocalFiles.privateFileMode)
        guard descriptor >= 0 else { throw LocalFiles.error("create", path: path) }
    }

    deinit { close() }

    func write(_ bytes: [UInt8], checksummed: Bool) throws {
        try bytes.withUnsafeBytes { try write($0, checksummed: checksummed) }
    }

    /// Appends `bytes`, adding them to the running checksum when `checksummed`.
    func write(_ bytes: UnsafeRawBufferPointer, checksummed: Bool) throws {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        var offset = 0
        while offset < bytes.count {
            let written = systemWrite(descriptor, base + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw LocalFiles.error("write", path: path)
            }
            offset += written
        }
        if checksummed {
            checksum = foldersync_crc32(checksum, base.assumingMemoryBound(to: UInt8.self), bytes.count)
            checksummedByteCount += UInt64(bytes.count)
        }
    }

    /// Overwrites bytes at `offset` (the header, once the change count is known).
    func write(_ bytes: [UInt8], at offset: Int) throws {
        try bytes.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                let written = pwrite(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
                if written < 0 {
                    if errno == EINTR { continue }
                    throw LocalFiles.error("write", path: path)
                }
                done += written
            }
        }
    }

    func synchronizeAndClose() throws {
        guard fsync(descriptor) == 0 else { throw LocalFiles.error("fsync", path: path) }
        let result = systemClose(descriptor)
        descriptor = -1
        guard result == 0 else { throw LocalFiles.error("close", path: path) }
    }

    func close() {
        if descriptor >= 0 { _ = systemClose(descriptor) }
        descriptor = -1
    }
}

// File-scope wrappers: inside the class, `write` and `close` name its own methods.
private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}

private func systemClose(_ descriptor: Int32) -> Int32 {
    close(descriptor)
}
