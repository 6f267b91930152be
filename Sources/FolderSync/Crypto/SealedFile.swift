import Crypto
import Foundation

/// The byte format of an encrypted remote file: a 48-byte header, then AES-256-GCM chunks.
///
/// ```
/// header  "FSYNCENC" | version u32 LE (1) | chunk size u32 LE | salt (32 random bytes)
/// chunks  ciphertext of up to `chunk size` bytes, then its 16-byte tag; at least one chunk
/// ```
/// Each file gets its own key, `HKDF-SHA256(data key, salt, "FolderSync sealed file v1" NUL path)`, so the
/// contents are bound to the path they are published under: a file moved or swapped fails to open. Chunk `i`
/// uses the nonce `i` (11 bytes, big-endian) followed by 1 for the last chunk and 0 otherwise, and the header as
/// associated data, so chunks cannot be reordered, dropped, or the file cut or extended. Chunks let large files
/// stream through memory. `RemoteLayouts/v1/formats/encryption.md` is the specification.
struct SealedFile {
    static let magic = Data("FSYNCENC".utf8)
    static let version: UInt32 = 1
    static let headerSize = 48
    static let tagSize = 16
    /// 256 KiB: large enough that per-chunk costs vanish, small enough to stream.
    static let defaultChunkSize = 1 << 18
    static let chunkSizes = 1 << 12...1 << 24

    let header: Data
    let chunkSize: Int
    private let key: SymmetricKey
    private let path: String

    /// A new file's header and key, with a fresh random salt.
    init(dataKey: SymmetricKey, path: RemotePath, chunkSize: Int = defaultChunkSize) {
        var header = Self.magic
        header.append(littleEndian: Self.version)
        header.append(littleEndian: UInt32(chunkSize))
        header.append(SymmetricKey(size: .bits256).bytes)
        self.init(dataKey: dataKey, header: header, chunkSize: chunkSize, path: path.description)
    }

    /// An existing file's header and key; refuses a header that is not one of ours.
    init(dataKey: SymmetricKey, header: Data, path: RemotePath) throws {
        let header = Data(header)
        guard header.count == Self.headerSize, header.prefix(8) == Self.magic else {
            throw Self.tampered(path.description, "is not an encrypted FolderSync file")
        }
        let version = header.uint32(at: 8)
        guard version <= Self.version else {
            throw FolderSyncError(.unsupportedFormatVersion,
                                  "encrypted file format version \(version) is newer than the supported \(Self.version)", path: path.description)
        }
        guard version == Self.version else { throw Self.tampered(path.description, "has format version \(version), which never existed") }
        let chunkSize = Int(header.uint32(at: 12))
        guard Self.chunkSizes.contains(chunkSize) else { throw Self.tampered(path.description, "has an impossible chunk size") }
        self.init(dataKey: dataKey, header: header, chunkSize: chunkSize, path: path.description)
    }

    private init(dataKey: SymmetricKey, header: Data, chunkSize: Int, path: String) {
        var info = Data("FolderSync sealed file v1".utf8)
        info.append(0)
        info.append(Data(path.utf8))
        self.key = HKDF<SHA256>.deriveKey(inputKeyMaterial: dataKey, salt: header.suffix(32), info: info, outputByteCount: 32)
        self.header = header
        self.chunkSize = chunkSize
        self.path = path
    }

    private func nonce(_ index: UInt64, isLast: Bool) throws -> AES.GCM.Nonce {
        var bytes = Data(count: 3)
        bytes.append(bigEndian: index)
        bytes.append(isLast ? 1 : 0)
        return try AES.GCM.Nonce(data: bytes)
    }

    /// Seals chunk `index` (at most ``chunkSize`` bytes): its ciphertext followed by its tag.
    func seal(_ chunk: Data, index: UInt64, isLast: Bool) throws -> Data {
        let box = try AES.GCM.seal(chunk, using: key, nonce: nonce(index, isLast: isLast), authenticating: header)
        return box.ciphertext + box.tag
    }

    /// Opens sealed chunk `index`; any failure is tampering, whatever swift-crypto's error says.
    func open(_ sealed: Data, index: UInt64, isLast: Bool) throws -> Data {
        guard sealed.count >= Self.tagSize, sealed.count <= chunkSize + Self.tagSize else {
            throw Self.tampered(path, "is cut short or extended")
        }
        do {
            let box = try AES.GCM.SealedBox(nonce: nonce(index, isLast: isLast),
                                            ciphertext: sealed.dropLast(Self.tagSize), tag: sealed.suffix(Self.tagSize))
            return try AES.GCM.open(box, using: key, authenticating: header)
        } catch {
            throw Self.tampered(path, "fails authentication")
        }
    }

    static func tampered(_ path: String, _ what: String) -> FolderSyncError {
        FolderSyncError(.tamperedFile, "the encrypted file \(what): it was altered, damaged, moved from another path, "
                        + "or sealed with another key", path: path)
    }

    // MARK: Whole files

    /// Seals a whole file held in memory.
    static func seal(_ data: Data, dataKey: SymmetricKey, path: RemotePath) throws -> Data {
        let file = SealedFile(dataKey: dataKey, path: path)
        var output = file.header
        output.reserveCapacity(headerSize + data.count + (data.count / file.chunkSize + 1) * tagSize)
        var index: UInt64 = 0
        var offset = data.startIndex
        repeat {
            let end = min(offset + file.chunkSize, data.endIndex)
            output.append(try file.seal(data[offset..<end], index: index, isLast: end == data.endIndex))
            index += 1
            offset = end
        } while offset < data.endIndex
        return output
    }

    /// Opens a whole file held in memory.
    static func open(_ data: Data, dataKey: SymmetricKey, path: RemotePath) throws -> Data {
        let data = Data(data)
        guard data.count >= headerSize + tagSize else {
            throw tampered(path.description, data.count >= 8 && data.prefix(8) == magic ? "is cut short" : "is not an encrypted FolderSync file")
        }
        let file = try SealedFile(dataKey: dataKey, header: data.prefix(headerSize), path: path)
        var output = Data()
        output.reserveCapacity(data.count)
        var index: UInt64 = 0
        var offset = headerSize
        let sealedChunkSize = file.chunkSize + tagSize
        while offset < data.count {
            let end = min(offset + sealedChunkSize, data.count)
            output.append(try file.open(data[offset..<end], index: index, isLast: end == data.count))
            index += 1
            offset = end
        }
        return output
    }

    /// Seals the local file `source` into `destination`, streaming.
    static func seal(fileAt source: URL, to destination: URL, dataKey: SymmetricKey, path: RemotePath) throws {
        let file = SealedFile(dataKey: dataKey, path: path)
        try LocalFiles.writeReplacing(destination, durably: false) { write in
            try write(file.header)
            var index: UInt64 = 0
            try LocalFiles.readPieces(of: source, size: file.chunkSize) { chunk, isLast in
                try write(try file.seal(chunk, index: index, isLast: isLast))
                index += 1
            }
            if index == 0 { try write(try file.seal(Data(), index: 0, isLast: true)) } // an empty file
        }
    }

    /// Opens the local sealed file `source` into `destination`, streaming; `destination` is left alone on failure.
    static func open(fileAt source: URL, to destination: URL, dataKey: SymmetricKey, path: RemotePath) throws {
        let header = try LocalFiles.readPrefix(of: source, count: headerSize)
        guard header.count == headerSize else { throw tampered(path.description, "is cut short") }
        let file = try SealedFile(dataKey: dataKey, header: header, path: path)
        try LocalFiles.writeReplacing(destination, durably: false) { write in
            var index: UInt64 = 0
            try LocalFiles.readPieces(of: source, size: file.chunkSize + tagSize, skipping: headerSize) { sealed, isLast in
                try write(try file.open(sealed, index: index, isLast: isLast))
                index += 1
            }
            guard index > 0 else { throw tampered(path.description, "is cut short") }
        }
    }
}

extension Data {
    mutating func append<Integer: FixedWidthInteger>(bigEndian value: Integer) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
    }

    mutating func append<Integer: FixedWidthInteger>(littleEndian value: Integer) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }

    /// The little-endian u32 at `offset` from the start.
    func uint32(at offset: Int) -> UInt32 {
        self[startIndex + offset..<startIndex + offset + 4].reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }
}
