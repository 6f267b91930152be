import Crypto
import Foundation

@_spi(Tooling) @testable import FolderSync

/// Today's writers, fed the fixed inputs of the catalog: what pins each current format's bytes, and what
/// records a new golden file.
enum GoldenWriters {
    /// The encryption key file of the golden sealed files: the golden data key wrapped by the golden password,
    /// with a fixed salt and nonce.
    static let encryptionKeyInfo: EncryptionKeyInfo = {
        let nonce = try! AES.GCM.Nonce(data: GoldenCatalog.keyNonce)
        return try! EncryptionKeyInfo.make(
            wrapping: GoldenCatalog.dataKey, password: GoldenCatalog.password, client: Golden.clientA,
            date: Golden.date, salt: GoldenCatalog.keySalt, nonce: nonce
        ).0
    }()

    /// The file salt of a golden sealed file: fixed, and different for every path.
    static func fileSalt(for path: String) -> Data { Data(SHA256.hash(data: Data(path.utf8))) }

    /// The bytes today's writer writes for `file` (a `.current` one), from the catalog's content.
    ///
    /// Whole stores are written from the snapshot inside the golden file (the container is pinned; the
    /// snapshot's own shape is pinned by its dump, see ``GoldenWriterPinTests``); local stores are SQLite
    /// files and are pinned by their dump only.
    static func bytes(for file: GoldenFile, scratch: URL) throws -> Data {
        let output = scratch.appendingPathComponent("written-" + (file.path as NSString).lastPathComponent)
        try? FileManager.default.removeItem(at: output)
        switch file.content {
        case .changeSet(let header, let changes):
            let writer = try ChangeSetWriter(
                url: output, changeSetIdentifier: header.changeSetIdentifier,
                clientIdentifier: header.clientIdentifier, sequence: header.sequence,
                schemaVersion: header.schemaVersion, createdAt: header.createdAt,
                dependencies: header.dependencies)
            for change in changes { try writer.append(change) }
            try writer.finish()
            return try Data(contentsOf: output)
        case .wholeStore(let store):
            let snapshot = scratch.appendingPathComponent("snapshot-" + (file.path as NSString).lastPathComponent)
            _ = try WholeStoreFile.read(Golden.url(file.path), to: snapshot, path: file.path)
            _ = try WholeStoreFile.write(snapshot: snapshot, to: output, header: store.header)
            return try Data(contentsOf: output)
        case .propertyList(let payload):
            return try PropertyListFile.encode(payload)
        case .attachment(let reference, let contents):
            let source = scratch.appendingPathComponent("contents-" + reference.sha256)
            try contents.write(to: source)
            var encoded = Data()
            try AttachmentFile.encode(source, as: reference) { encoded.append($0) }
            return encoded
        case .sealed(let plaintext, let remotePath):
            return try SealedFile.seal(
                try Golden.data(plaintext), dataKey: GoldenCatalog.dataKey, path: try RemotePath(remotePath),
                fixedSalt: fileSalt(for: file.path))
        case .localStore:
            throw FolderSyncError(.invalidConfiguration, "a local store's bytes are SQLite's; it is pinned by its dump")
        }
    }

    /// Writes the golden files of the catalog that do not exist yet (``Golden/recordingNew``); returns their paths.
    @discardableResult
    static func recordMissing(scratch: URL) throws -> [String] {
        var written: [String] = []
        func missing(_ path: String) -> Bool { !FileManager.default.fileExists(atPath: Golden.url(path).path) }
        func write(_ data: Data, _ path: String) throws {
            try FileManager.default.createDirectory(
                at: Golden.url(path).deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: Golden.url(path))
            written.append(path)
        }
        for file in GoldenCatalog.files where file.writer == .current && missing(file.path) {
            switch file.content {
            case .wholeStore(let store):
                // A new snapshot of the scenario, its dump, the file, then its manifest.
                let attachments = store.header.wholeStoreIdentifier.hasSuffix("2")
                let snapshot = scratch.appendingPathComponent("record-\(file.path.hashValue).sqlite")
                let covers = try GoldenScenario.writeSnapshot(at: snapshot, attachments: attachments, scratch: scratch)
                try write(Data(try NeutralDump.dump(snapshot, full: false).utf8), store.snapshotDump)
                let size = try FileManager.default.attributesOfItem(atPath: snapshot.path)[.size] as! Int
                var header = store.header
                header.snapshotByteCount = UInt64(size)
                header.covers = covers
                let output = scratch.appendingPathComponent("record-\(file.path.hashValue).ticdsync")
                let written = try WholeStoreFile.write(snapshot: snapshot, to: output, header: header)
                try write(try Data(contentsOf: output), file.path)
                let manifest = WholeStoreManifest(
                    clientIdentifier: header.clientIdentifier, wholeStoreIdentifier: header.wholeStoreIdentifier,
                    creationDate: Golden.date, schemaVersion: header.schemaVersion, covers: covers,
                    wholeStoreByteCount: written.byteCount, wholeStoreChecksum: written.checksum,
                    contentChecksum: written.contentChecksum, attachmentReferenceCount: attachments ? 1 : 0)
                try write(try PropertyListFile.encode(manifest), store.manifest)
            case .localStore(_, let expected):
                let url = scratch.appendingPathComponent("record-local.sqlite")
                try GoldenScenario.writeLocalStore(at: url)
                try write(try Data(contentsOf: url), file.path)
                try write(Data(try NeutralDump.dump(url, full: true).utf8), expected)
            default:
                // A manifest is written with its whole store, above.
                guard !file.path.hasSuffix(".manifest.ticdsync") else { continue }
                try write(try bytes(for: file, scratch: scratch), file.path)
            }
        }
        return written
    }
}
