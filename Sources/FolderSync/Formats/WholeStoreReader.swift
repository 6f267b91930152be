import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Reads a `WholeStore.ticdsync` as a stream, in the pieces a download delivers: it checks the file while
/// it arrives and writes the snapshot's bytes straight into a new SQLite file.
///
/// One pass over the bytes: the CRC-32 trailer, the size and checksum a manifest records, the header and the
/// body are all taken from the same pieces, so a store is neither copied nor read a second time to be
/// verified. The snapshot file is only usable once ``finish()`` returned: a truncated, corrupt or foreign
/// file throws there, or as soon as its damage shows (a bad header, invalid zlib data, a body longer than
/// the header says).
///
/// The snapshot is untrusted until ``finish()`` returned: it is written `0600`, only once the local disk has room
/// for the size its header claims (a small zlib body can claim any size: a "zlib bomb" must not fill the disk), and
/// ``finish()`` runs the checks of ``SnapshotCheck`` that need no schema (no trigger, no virtual table, SQLite's
/// quick check), so that a damaged store fails here, while the download is verified and the next store can be tried.
final class WholeStoreReader {
    /// What a complete, verified file held.
    struct Result {
        var header: WholeStoreFile.Header
        /// The whole file's size and CRC-32 (trailer included): what a version-1 manifest records.
        var byteCount: Int64
        var checksum: UInt32
        /// The CRC-32 of everything before the trailer: what a manifest of version 2 or later records.
        var contentChecksum: UInt32
    }

    private let path: String
    /// Where the snapshot is written; `nil` to only verify the file (a vacuum or `doctor` checking a store).
    private let snapshot: URL?
    private var output: FileHandle?
    /// The preamble and header fields until they are parsed.
    private var prefix: [UInt8] = []
    /// The header, once the pieces consumed so far hold it whole.
    private(set) var header: WholeStoreFile.Header?
    private var inflater: InflatePushStream?
    /// The last 4 bytes seen, which are the trailer if the file ends here; held back from the body.
    private var tail: [UInt8] = []
    /// The CRC-32 of all but the trailer, computed on a thread of its own while this one writes the snapshot:
    /// together they were one core's work, and the CRC a third of a big bootstrap's reading.
    private let checksum = RunningChecksum()
    private let checksummer: BackgroundBatchConsumer<Data>
    private var checksummed = false
    private var byteCount: Int64 = 0
    private var written: UInt64 = 0
    /// Asks the system to start writing a range of the snapshot to disk (file descriptor, offset, length).
    private let startWriteback: ((Int32, Int64, Int64) -> Void)?
    private var writebackStarted: UInt64 = 0
    /// Whether ``finish()`` checks the snapshot as a SQLite database (``SnapshotCheck``).
    private let checksSnapshot: Bool

    /// A reader that writes the snapshot into a new file at `snapshot` (`nil`: verifies the file, every byte of
    /// it inflated and checked, and writes nothing); errors name `path` (the remote file).
    ///
    /// `startWriteback`, for a snapshot that is made durable (fsynced) once complete: called every 64 MiB
    /// written, so that the disk writes the file while the rest arrives instead of all of it at the fsync.
    ///
    /// `checksSnapshot`: whether ``finish()`` checks the snapshot as an untrusted SQLite file; only tests of the
    /// container format, whose bodies are not SQLite files, turn it off (a reader that writes no snapshot checks none).
    init(
        snapshot: URL?, path: String, checksSnapshot: Bool = true,
        startWriteback: ((_ fd: Int32, _ offset: Int64, _ length: Int64) -> Void)? = nil
    ) throws {
        self.snapshot = snapshot
        self.path = path
        self.checksSnapshot = checksSnapshot
        self.startWriteback = startWriteback
        let checksum = checksum
        checksummer = BackgroundBatchConsumer(batchSize: 1, capacity: 8) { pieces in
            for piece in pieces { checksum.value = Checksum.crc32(piece, seed: checksum.value) }
        }
    }

    deinit {
        if !checksummed { checksummer.abandon() }
        try? output?.close()
    }

    /// The checksum thread's running CRC, the caller's to read once the thread finished.
    private final class RunningChecksum {
        var value: UInt32 = 0
    }

    private func corrupt(_ reason: String) -> FolderSyncError {
        FolderSyncError(.corruptFile, "whole store \(reason)", path: path)
    }

    /// Reads a whole file through `read`, which hands over its pieces, checking every byte and writing nothing:
    /// what a vacuum or `doctor` does before counting a store.
    static func verify(path: String, _ read: (_ body: (Data) throws -> Void) async throws -> Void) async throws
        -> Result
    {
        let reader = try WholeStoreReader(snapshot: nil, path: path)
        try await read { try reader.consume($0) }
        return try reader.finish()
    }

    /// Takes the next piece of the file.
    func consume(_ piece: Data) throws {
        guard !piece.isEmpty else { return }
        byteCount += Int64(piece.count)
        // Everything but the last 4 bytes is checksummed and parsed now; those 4 may be the trailer.
        if piece.count >= 4 {
            let carried = tail
            tail = [UInt8](piece.suffix(4))
            try process(Data(carried))
            try process(piece.prefix(piece.count - 4))
        } else {
            let combined = tail + piece
            tail = Array(combined.suffix(4))
            try process(Data(combined.prefix(combined.count - tail.count)))
        }
    }

    private func process(_ data: Data) throws {
        guard !data.isEmpty else { return }
        try checksummer.add(data)
        if header != nil { return try body(data) }
        prefix += data
        let fixed = WholeStoreFile.magic.count + 5
        guard prefix.count >= fixed else { return }
        guard Array(prefix.prefix(WholeStoreFile.magic.count)) == WholeStoreFile.magic else {
            throw corrupt("is not a FolderSync whole store")
        }
        let version = prefix[WholeStoreFile.magic.count]
        guard version >= 1 else { throw corrupt("has format version 0") }
        guard version <= WholeStoreFile.formatVersion else {
            throw FolderSyncError(
                .unsupportedFormatVersion,
                "whole-store format version \(version) is newer than the supported \(WholeStoreFile.formatVersion)",
                path: path)
        }
        let length = prefix[(fixed - 4)..<fixed].enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
        guard length <= 64 * 1024 else { throw corrupt("has a bad header length") }
        guard prefix.count >= fixed + length else { return }
        var fields = ArrayByteSource(Array(prefix[fixed..<(fixed + length)]))
        var parsed: WholeStoreFile.Header
        var encoding: UInt8?
        do {
            parsed = WholeStoreFile.Header(
                wholeStoreIdentifier: try fields.readString(what: "identifier"),
                clientIdentifier: try fields.readString(what: "client"),
                schemaVersion: Int(try fields.readInt64()), snapshotByteCount: try fields.readUInt64())
            if version >= 2 { encoding = try fields.readByte() }
            if version >= 3 {
                parsed.snapshotSchemaVersion = Int(try fields.readInt64())
                var covers: [String: Int64] = [:]
                let count = try fields.readVarint()
                guard count <= UInt64(length) else { throw corrupt("has an unreadable header") }
                for _ in 0..<count {
                    let client = try fields.readString(what: "client")
                    let sequence = try fields.readInt64()
                    guard RemoteLayout.isSequence(sequence) else {
                        throw corrupt("claims to cover client \(client) up to \(sequence)")
                    }
                    guard covers.updateValue(sequence, forKey: client) == nil else {
                        throw corrupt("names a client twice")
                    }
                }
                parsed.covers = covers
            }
        } catch let error as FolderSyncError {
            throw error
        } catch { throw corrupt("has an unreadable header") }
        if let encoding {
            guard let compression = WholeStoreCompression(rawValue: encoding) else {
                throw corrupt("has an unknown body encoding \(encoding)")
            }
            parsed.compression = compression
        }
        header = parsed
        if let snapshot {
            // The claimed size is written only if the disk has room for it and a reserve (LocalFiles.checkFreeSpace):
            // a zlib body of a few megabytes can claim terabytes, and `emit` never writes more than the claim.
            try LocalFiles.checkFreeSpace(
                for: parsed.snapshotByteCount, in: snapshot.deletingLastPathComponent(), path: path)
            // A new file that only this user can read (another device's data, maybe decrypted), never through a link.
            unlink(snapshot.path)
            let fd = open(snapshot.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard fd >= 0 else { throw LocalFiles.error("create the snapshot", path: snapshot.path) }
            output = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        }
        if header?.compression == .zlib {
            inflater = try InflatePushStream(path: path) { [unowned self] chunk in try self.emit(Data(chunk)) }
        }
        let rest = Data(prefix[(fixed + length)...])
        prefix = []
        try body(rest)
    }

    private func body(_ data: Data) throws {
        guard !data.isEmpty else { return }
        if let inflater { try data.withUnsafeBytes { try inflater.write($0) } } else { try emit(data) }
    }

    private func emit(_ data: Data) throws {
        guard let header else { return }
        written += UInt64(data.count)
        guard written <= header.snapshotByteCount else { throw corrupt("holds more than its header says") }
        guard let output else { return }
        do { try output.write(contentsOf: data) } catch {
            throw FolderSyncError(
                .localStoreFailed, "cannot write the snapshot", path: snapshot?.path, underlying: error)
        }
        if let startWriteback, written - writebackStarted >= 64 << 20 {
            startWriteback(output.fileDescriptor, Int64(writebackStarted), Int64(written - writebackStarted))
            writebackStarted = written
        }
    }

    /// Ends the file: checks the trailer, that the body was complete, and closes the snapshot (not fsynced:
    /// it is a scratch file, and whatever installs it makes its own copy durable).
    func finish() throws -> Result {
        guard let header, tail.count == 4 else { throw corrupt("is truncated") }
        checksummed = true
        try checksummer.finish()
        let crc = checksum.value
        let stored = tail.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (8 * UInt32($1.offset)) }
        guard stored == crc else { throw corrupt("fails its checksum") }
        try inflater?.finish()
        guard written == header.snapshotByteCount else { throw corrupt("ends early") }
        try output?.close()
        output = nil
        if checksSnapshot, let snapshot {
            try SnapshotCheck.verify(at: snapshot, path: path, schema: nil, integrity: .quick)
        }
        return Result(
            header: header, byteCount: byteCount, checksum: Checksum.crc32(Data(tail), seed: crc), contentChecksum: crc)
    }
}
