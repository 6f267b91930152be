import FolderSyncTesting
import Foundation
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

@Suite("Persistent client identifier")
struct ClientIdentifierTests {
    @Test("Made once and kept: the same at every call, also from eight callers at once; another folder gets another")
    func madeOnceAndKept() async throws {
        let directory = TemporaryDirectory()
        let folder = directory.url.appendingPathComponent("Application Support/Notes")
        let identifiers = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<8 { group.addTask { try ApplicationSyncManager.persistentClientIdentifier(in: folder) } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(identifiers.count == 1, "\(identifiers)")
        let first = try #require(identifiers.first)
        #expect(UUID(uuidString: first) != nil)
        #expect(try ApplicationSyncManager.persistentClientIdentifier(in: folder) == first)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["ClientIdentifier"],
            "no temporary left")
        let mode = try #require(
            try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent("ClientIdentifier").path)[
                .posixPermissions] as? Int)
        #expect(mode == 0o600)
        #expect(try ApplicationSyncManager.persistentClientIdentifier(in: directory.subdirectory("other")) != first)
    }

    @Test(
        "A damaged file is corruptFile naming it, and is left as it is",
        arguments: [Data(), Data("../../etc".utf8), Data(count: 4096)])
    func damagedFile(_ bytes: Data) throws {
        let directory = TemporaryDirectory()
        let folder = directory.subdirectory("app")
        let file = folder.appendingPathComponent("ClientIdentifier")
        try bytes.write(to: file)
        #expect { try ApplicationSyncManager.persistentClientIdentifier(in: folder) } throws: { error in
            (error as? FolderSyncError)?.code == .corruptFile && (error as? FolderSyncError)?.path == file.path
        }
        #expect(try Data(contentsOf: file) == bytes)
    }
}
