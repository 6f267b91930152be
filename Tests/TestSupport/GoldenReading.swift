import Crypto
import Foundation
import GRDB

@_spi(Tooling) @_spi(ModelAdapter) @testable import FolderSync

/// Decodes `data` as a property list of `expected`'s type and tells whether it holds `expected`.
func decodedPayload<P: PropertyListPayload>(like expected: P, from data: Data, path: String) throws
    -> any PropertyListPayload
{
    try PropertyListFile.decode(P.self, from: data, path: path)
}

/// What a golden file decodes to, in a form that compares: its reader's view of it.
enum GoldenReading {
    /// Reads `data` as `file`'s kind with today's reader; throws what the reader throws.
    static func read(_ file: GoldenFile, data: Data, scratch: URL) throws -> String {
        let input = scratch.appendingPathComponent("input-" + (file.path as NSString).lastPathComponent)
        try data.write(to: input)
        switch file.content {
        case .changeSet:
            var changes: [SyncChange] = []
            try ChangeSetReader.forEachChange(at: input, path: file.path) { changes.append($0) }
            let header = try ChangeSetReader.readHeader(at: input, path: file.path)
            return "\(header)\n\(changes)"
        case .wholeStore:
            let snapshot = scratch.appendingPathComponent("snapshot-" + (file.path as NSString).lastPathComponent)
            try? FileManager.default.removeItem(at: snapshot)
            let header = try WholeStoreFile.read(input, to: snapshot, path: file.path)
            return "\(header)\n" + (try NeutralDump.dump(snapshot, full: false))
        case .propertyList(let expected):
            // Re-encoded (keys sorted): a canonical form, where a description's dictionary order is not.
            let payload = try decodedPayload(like: expected, from: data, path: file.path)
            return try PropertyListFile.encode(payload).base64EncodedString()
        case .attachment(let reference, _):
            let output = scratch.appendingPathComponent("output-" + reference.sha256)
            try? FileManager.default.removeItem(at: output)
            try AttachmentFile.decode(input, as: reference, to: output, path: file.path)
            return try Data(contentsOf: output).base64EncodedString()
        case .sealed(_, let remotePath):
            return try SealedFile.open(data, dataKey: GoldenCatalog.dataKey, path: try RemotePath(remotePath))
                .base64EncodedString()
        case .localStore:
            let store = try Golden.openStore(input)
            defer { try? store.close() }
            return try store.database.read { try NeutralDump.dump($0, full: true) }
        }
    }
}
