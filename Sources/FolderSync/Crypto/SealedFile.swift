import Crypto
import Foundation

/// The byte format of an encrypted remote file: a 48-byte header (``SealedFileHeader``), then AES-256-GCM chunks.
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
    private typealias Header = SealedFileHeader

    let header: SealedFileHeader
    var chunkSize: Int { header.chunkSize }
    private let key: SymmetricKey
    private let path: String

    /// A new file's header and key, with a fresh random salt.
    init(dataKey: SymmetricKey, path: RemotePath, chunkSize: Int = SealedFileHeader.defaultChunkSize) {
        self.init(
            dataKey: dataKey, header: SealedFileHeader(chunkSize: chunkSize, salt: SymmetricKey(size: .bits256).bytes),
            path: path.description)
    }

    /// An existing file's header and key; refuses a header that is not one of ours.
    init(dataKey: SymmetricKey, header: Data, path: RemotePath) throws {
        self.init(
            dataKey: dataKey, header: try SealedFileHeader(parsing: header, path: path.description),
            path: path.description)
    }

    private init(dataKey: SymmetricKey, header: SealedFileHeader, path: String) {
        var info = Data("FolderSync sealed file v1".utf8)
        info.append(0)
        info.append(Data(path.utf8))
        self.key = HKDF<SHA256>.deriveKey(inputKeyMaterial: dataKey, salt: header.salt, info: info, outputByteCount: 32)
        self.header = header
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
        let box = try AES.GCM.seal(chunk, using: key, nonce: nonce(index, isLast: isLast), authenticating: header.bytes)
        return box.ciphertext + box.tag
    }

    /// Opens sealed chunk `index`; any failure is tampering, whatever swift-crypto's error says.
    func open(_ sealed: Data, index: UInt64, isLast: Bool) throws -> Data {
        guard sealed.count >= Header.tagSize, sealed.count <= chunkSize + Header.tagSize else {
            throw Header.tampered(path, "is cut short or extended")
        }
        do {
            let box = try AES.GCM.SealedBox(
                nonce: nonce(index, isLast: isLast),
                ciphertext: sealed.dropLast(Header.tagSize), tag: sealed.suffix(Header.tagSize))
            return try AES.GCM.open(box, using: key, authenticating: header.bytes)
        } catch {
            throw Header.tampered(path, "fails authentication")
        }
    }

    // MARK: Whole files

    /// Seals a whole file held in memory.
    static func seal(_ data: Data, dataKey: SymmetricKey, path: RemotePath) throws -> Data {
        try seal(data, file: SealedFile(dataKey: dataKey, path: path))
    }

    /// Seals a whole file held in memory with the file salt `salt` instead of a random one: the same input then
    /// gives the same bytes. Only for tests that pin the format against golden files; never reuse a salt.
    static func seal(_ data: Data, dataKey: SymmetricKey, path: RemotePath, fixedSalt salt: Data) throws -> Data {
        precondition(salt.count == 32, "a file salt is 32 bytes")
        return try seal(
            data,
            file: SealedFile(
                dataKey: dataKey, header: SealedFileHeader(chunkSize: SealedFileHeader.defaultChunkSize, salt: salt),
                path: path.description))
    }

    private static func seal(_ data: Data, file: SealedFile) throws -> Data {
        var output = file.header.bytes
        output.reserveCapacity(Header.size + data.count + (data.count / file.chunkSize + 1) * Header.tagSize)
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
        guard data.count >= Header.size + Header.tagSize else {
            throw Header.tampered(
                path.description,
                data.count >= 8 && data.prefix(8) == Header.magic
                    ? "is cut short" : "is not an encrypted FolderSync file")
        }
        let file = try SealedFile(dataKey: dataKey, header: data.prefix(Header.size), path: path)
        var output = Data()
        output.reserveCapacity(data.count)
        var index: UInt64 = 0
        var offset = Header.size
        let sealedChunkSize = file.chunkSize + Header.tagSize
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
            try write(file.header.bytes)
            var index: UInt64 = 0
            try LocalFiles.readPieces(of: source, size: file.chunkSize) { chunk, isLast in
                try write(try file.seal(chunk, index: index, isLast: isLast))
                index += 1
            }
            if index == 0 { try write(try file.seal(Data(), index: 0, isLast: true)) }  // an empty file
        }
    }

    /// Opens the local sealed file `source` into `destination`, streaming; `destination` is left alone on failure.
    static func open(fileAt source: URL, to destination: URL, dataKey: SymmetricKey, path: RemotePath) throws {
        let header = try LocalFiles.readPrefix(of: source, count: Header.size)
        guard header.count == Header.size else { throw Header.tampered(path.description, "is cut short") }
        let file = try SealedFile(dataKey: dataKey, header: header, path: path)
        try LocalFiles.writeReplacing(destination, durably: false) { write in
            var index: UInt64 = 0
            try LocalFiles.readPieces(of: source, size: file.chunkSize + Header.tagSize, skipping: Header.size) {
                sealed, isLast in
                try write(try file.open(sealed, index: index, isLast: isLast))
                index += 1
            }
            guard index > 0 else { throw Header.tampered(path.description, "is cut short") }
        }
    }
}
