import Foundation
import GRDB
import Testing

@_spi(Tooling) @_spi(ModelAdapter) @testable import FolderSync
@testable import TestSupport

/// Issue 38, item 5, as a property: a compromised device (or a provider writing files) puts a hostile number in any
/// numeric field of its marker, its whole-store manifest or the header of its newest change set, checksums fixed.
/// Whatever the field and the number, every other device's syncs, a vacuum and `doctor` end (no hang), end in a
/// report or a typed ``FolderSyncError`` (no crash, no untyped error), and the honest devices keep publishing and
/// applying each other's changes (no silent stop); what the hostile device's own files can no longer bring is said.
@Suite("Hostile numbers in every numeric field", .timeLimit(.minutes(10)))
struct HostileNumbersTests {
    /// One planted number: which file and field, and the value.
    struct Plant: Sendable, CustomStringConvertible {
        enum File: String, Sendable { case marker, manifest, header }
        var file: File
        var field: String
        var value: Int64
        var description: String { "\(file).\(field) = \(value)" }
    }

    static let values: [Int64] = [
        Int64.min, -1, RemoteLayout.maximumSequence, RemoteLayout.maximumSequence + 1, Int64.max,
    ]
    static let fields: [(Plant.File, String)] = [
        (.marker, "publishedSequence"), (.marker, "acknowledgement.A"), (.marker, "acknowledgement.B"),
        (.marker, "acknowledgement.ghost"), (.marker, "waitingFor.A"), (.marker, "schemaVersion"),
        (.manifest, "covers.A"), (.manifest, "covers.B"), (.manifest, "covers.ghost"),
        (.manifest, "wholeStoreByteCount"),
        (.manifest, "attachmentReferenceCount"), (.manifest, "schemaVersion"),
        (.header, "sequence"), (.header, "schemaVersion"), (.header, "changeCount"), (.header, "createdAt"),
        (.header, "dependencies.A"), (.header, "dependencies.ghost"),
    ]
    static let plants: [Plant] = fields.flatMap { file, field in
        values.map { Plant(file: file, field: field, value: $0) }
    }

    /// The shared folder's document.
    static let document = "com.example.notes/Documents/DOC"

    @Test("Honest devices keep syncing, vacuum and doctor end, every failure is typed", arguments: plants)
    func hostileNumber(_ plant: Plant) async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let remote = FileManagerFileSystem(rootURL: root)
        let a = try await TestClient.make(remote, name: "A", in: directory)
        let b = try await TestClient.make(remote, name: "B", in: directory)
        let c = try await TestClient.make(remote, name: "C", in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('a1', 'from A')")
        try b.execute("INSERT INTO notes(id, title) VALUES ('b1', 'from B')")
        try await converge(a, b, c)
        try b.execute("INSERT INTO notes(id, title) VALUES ('b2', 'from B again')")
        try await b.sync()
        #expect(try await b.document.uploadWholeStore() != nil)
        try plantNumber(plant, root: root)

        var typedFailures: [FolderSyncError] = []
        var warnings: [SyncWarning] = []
        /// Runs a sync, a vacuum or doctor: it returns, or throws a typed error.
        func attempt<T>(_ body: () async throws -> T) async -> T? {
            do {
                return try await body()
            } catch let error as FolderSyncError {
                typedFailures.append(error)
            } catch {
                Issue.record("\(plant): an untyped error: \(error)")
            }
            return nil
        }
        try a.execute("INSERT INTO notes(id, title) VALUES ('a2', 'after the plant')")
        let d = try await TestClient.make(remote, name: "D", in: directory)
        for _ in 0..<2 {
            for client in [a, c, d] { warnings += await attempt { try await client.sync() }?.warnings ?? [] }
        }
        _ = await attempt { try await a.document.vacuum() }
        _ = await attempt {
            try await RemoteTreeDoctor(fileSystem: remote, applicationIdentifier: "com.example.notes").examine()
        }
        for client in [c, d] { warnings += await attempt { try await client.sync() }?.warnings ?? [] }
        // A's write reaches every honest device: nothing B planted stops A from publishing or them from applying.
        for (name, client) in [("C", c), ("D", d)] {
            #expect(
                try client.value("SELECT title FROM notes WHERE id = 'a2'") == "after the plant",
                "\(plant): \(name) \(typedFailures)")
        }
        // What B's files can no longer bring is said, never dropped in silence.
        for (name, client) in [("C", c), ("D", d)]
        where try client.value("SELECT count(*) FROM notes WHERE id LIKE 'b%'") != "2" {
            #expect(
                !warnings.isEmpty || !typedFailures.isEmpty, "\(plant): \(name) lacks B's notes and nothing says why")
        }
    }

    /// Puts `plant` into B's marker, B's whole-store manifest or B's newest change set, with every checksum fixed.
    func plantNumber(_ plant: Plant, root: URL) throws {
        let document = root.appendingPathComponent(Self.document)
        let key = plant.field.split(separator: ".").last.map(String.init) ?? ""
        let client = ["A": "client-A", "B": "client-B", "ghost": "client-ghost"][key] ?? key
        switch plant.file {
        case .marker:
            let url = document.appendingPathComponent("RecentSyncs/client-B.recentsync")
            var recent = try PropertyListFile.decode(RecentSync.self, from: try Data(contentsOf: url), path: "marker")
            switch plant.field {
            case "publishedSequence": recent.publishedSequence = plant.value
            case "schemaVersion": recent.schemaVersion = Int(plant.value)
            case let field where field.hasPrefix("waitingFor"): recent.waitingFor = [client: plant.value]
            default: recent.acknowledgement[client] = plant.value
            }
            try PropertyListFile.encode(recent).write(to: url)
        case .manifest:
            let url = document.appendingPathComponent(
                "WholeStore/client-B/\(RemoteLayout.appliedSyncChangeSetsFileName)")
            var manifest = try PropertyListFile.decode(
                WholeStoreManifest.self, from: try Data(contentsOf: url), path: "manifest")
            switch plant.field {
            case "wholeStoreByteCount": manifest.wholeStoreByteCount = plant.value
            case "attachmentReferenceCount": manifest.attachmentReferenceCount = Int(plant.value)
            case "schemaVersion": manifest.schemaVersion = Int(plant.value)
            default: manifest.covers[client] = plant.value
            }
            try PropertyListFile.encode(manifest).write(to: url)
        case .header:
            let folder = document.appendingPathComponent("SyncChanges/client-B")
            let name = try #require(
                try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".syncchg") }
                    .max())
            try Self.rewriteHeader(of: folder.appendingPathComponent(name)) { header in
                switch plant.field {
                case "sequence": header.sequence = plant.value
                case "schemaVersion": header.schemaVersion = Int(plant.value)
                case "changeCount": header.changeCount = Int(clamping: max(0, plant.value))
                case "createdAt": header.createdAt = Date(timeIntervalSince1970: Double(plant.value) / 1000)
                default: header.dependencies[client] = plant.value
                }
            }
        }
    }

    /// Rewrites a change set's header fields, its header and file CRC-32s recomputed (a body the header does not
    /// describe, when the change count changed, is for the reader to find).
    static func rewriteHeader(of url: URL, _ change: (inout ChangeSetHeader) -> Void) throws {
        var bytes = [UInt8](try Data(contentsOf: url))
        let length = Int(bytes[9]) | Int(bytes[10]) << 8 | Int(bytes[11]) << 16 | Int(bytes[12]) << 24
        let end = ChangeSetFile.preambleByteCount + length + 4
        var header = try ChangeSetHeader.decodeFields(Array(bytes[ChangeSetFile.preambleByteCount..<(end - 4)]))
        change(&header)
        bytes.replaceSubrange(0..<end, with: header.encodedBlock())
        let crc = Checksum.crc32(Data(bytes.dropLast(4)))
        bytes.replaceSubrange((bytes.count - 4)..., with: withUnsafeBytes(of: crc.littleEndian) { Array($0) })
        try Data(bytes).write(to: url)
    }
}
