import Foundation
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// `foldersync vacuum`, `removed list` and `removed restore`, run as binaries against a real folder (issue 39): what a
/// vacuum removes is moved into the document's removed area, listed with who, when, why and bytes, put back on demand,
/// and purged only by a vacuum after the grace period, judged by the folder's own dates.
@Suite("foldersync removed")
struct FoldersyncRemovedTests {
    struct VacuumJSON: Decodable {
        struct Document: Decodable {
            var removed: [Removal]
            var removalFolder: String?
            var keepRemovedFor: Double?
            var purgedRemovals: [String]
        }
        struct Removal: Decodable {
            var path: String
            var reason: String
        }
        var documents: [Document]
    }

    struct ListJSON: Decodable {
        struct File: Decodable {
            var path: String
            var originalPath: String
            var kind: String
            var bytes: Int64
        }
        struct Removal: Decodable {
            var folder: String
            var removedBy: String?
            var operation: String?
            var bytes: Int64
            var files: [File]
        }
        struct Document: Decodable {
            var identifier: String
            var deleted: Bool
            var removals: [Removal]
        }
        var documents: [Document]
    }

    struct RestoreJSON: Decodable {
        struct Skipped: Decodable {
            var path: String
            var reason: String
        }
        struct Document: Decodable {
            var identifier: String
            var restored: [String]
            var skipped: [Skipped]
        }
        var documents: [Document]
    }

    private func run<T: Decodable>(
        _ type: T.Type, _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation
    )
        async throws -> T
    {
        let result = try await FoldersyncTool.run(arguments + ["--json"])
        #expect(
            result.status == 0 && result.errors.isEmpty, "\(arguments): \(result.errors)",
            sourceLocation: sourceLocation)
        return try FoldersyncTool.json(type, result)
    }

    @Test(
        "vacuum moves what it removes into Removed/; removed list names it; restore puts it back; only an old removal is purged"
    )
    func listRestorePurge() async throws {
        let directory = TemporaryDirectory()
        let scenario = try await MaintenanceScenario(directory)
        let remote = ["--remote", scenario.root.path]

        let vacuum = try #require(try await run(VacuumJSON.self, ["vacuum"] + remote).documents.first)
        let removedSets = vacuum.removed.filter { $0.reason == "changeSet" }.map(\.path)
        #expect(removedSets.count == 2 && vacuum.keepRemovedFor == 14 * 86_400, "\(vacuum)")
        let folder = try #require(vacuum.removalFolder)
        #expect(folder.hasPrefix(scenario.layout.removedDirectory("DOC").description + "/"))
        for path in removedSets {
            #expect(
                !FileManager.default.fileExists(atPath: scenario.root.appendingPathComponent(path).path),
                "gone from its place")
        }

        let listed = try #require(try await run(ListJSON.self, ["removed", "list"] + remote).documents.first)
        let removal = try #require(listed.removals.first)
        #expect(listed.removals.count == 1 && removal.folder == folder)
        #expect(removal.operation == "vacuum" && removal.removedBy == "foldersync")
        #expect(Set(removal.files.filter { $0.kind == "changeSet" }.map(\.originalPath)) == Set(removedSets))
        #expect(removal.bytes == removal.files.reduce(0) { $0 + $1.bytes } && removal.bytes > 0)
        for file in removal.files {
            #expect(
                FileManager.default.fileExists(atPath: scenario.root.appendingPathComponent(file.path).path),
                "kept: \(file.path)")
        }

        // Putting back client A's files: its change set is where it was, byte for byte the one removed.
        let setOfA = try #require(
            removal.files.first { $0.kind == "changeSet" && $0.originalPath.contains("/client-A/") })
        let bytes = try Data(contentsOf: scenario.root.appendingPathComponent(setOfA.path))
        let restored = try await run(RestoreJSON.self, ["removed", "restore", "--client", "client-A"] + remote)
        #expect(restored.documents.first?.restored == [setOfA.originalPath])
        #expect(try Data(contentsOf: scenario.root.appendingPathComponent(setOfA.originalPath)) == bytes)

        // A grace period shorter than a day is refused before anything is read.
        let short = try await FoldersyncTool.run(["vacuum", "--keep-removed", "12h"] + remote)
        #expect(short.status == 2 && short.errors.contains("'12h' is too short"), "\(short.errors)")

        // Fifteen days later by the folder's dates: a 30-day grace keeps the removal, the default 14 days purges it.
        let record = scenario.root.appendingPathComponent(folder).appendingPathComponent(
            RemoteLayout.removalRecordFileName)
        try FileManager.default.setAttributes(
            [.modificationDate: Date().addingTimeInterval(-15 * 86_400)], ofItemAtPath: record.path)
        let kept = try #require(
            try await run(VacuumJSON.self, ["vacuum", "--keep-removed", "30d"] + remote).documents.first)
        #expect(kept.purgedRemovals.isEmpty && FileManager.default.fileExists(atPath: record.path))
        let purged = try #require(try await run(VacuumJSON.self, ["vacuum"] + remote).documents.first)
        #expect(purged.purgedRemovals == [folder])
        #expect(!FileManager.default.fileExists(atPath: scenario.root.appendingPathComponent(folder).path))
        // What the restore put back and the later vacuum removed again is kept, in a removal of its own.
        let after = try await run(ListJSON.self, ["removed", "list"] + remote)
        #expect(after.documents.first?.removals.map(\.folder) == [kept.removalFolder].compactMap { $0 }, "\(after)")
    }

    @Test("removed list shows a deleted document; restore --document brings it back; devices sync it again")
    func deletedDocument() async throws {
        let directory = TemporaryDirectory()
        let scenario = try await MaintenanceScenario(directory)
        let remote = ["--remote", scenario.root.path]
        let rowsBefore = try NotesSchema.dump(scenario.a.store)
        try await scenario.b.app.deleteDocument(identifier: "DOC")
        await #expect { try await scenario.a.sync() } throws: { ($0 as? FolderSyncError)?.code == .documentDeleted }

        let listed = try #require(try await run(ListJSON.self, ["removed", "list"] + remote).documents.first)
        #expect(listed.identifier == "DOC" && listed.deleted, "\(listed)")
        let deletion = try #require(listed.removals.first { $0.operation == "documentDeletion" })
        #expect(
            deletion.removedBy == "client-B"
                && deletion.folder.hasPrefix(scenario.layout.applicationRemovedDirectory.description + "/"))
        let info = scenario.layout.documentInfoFile("DOC").description
        #expect(deletion.files.contains { $0.originalPath == info })
        #expect(
            try await run(ListJSON.self, ["removed", "list", "--document", "DOC"] + remote).documents.map(\.identifier)
                == ["DOC"])

        // Without --document a deleted document stays deleted.
        #expect(try await run(RestoreJSON.self, ["removed", "restore"] + remote).documents.isEmpty)
        #expect(!scenario.exists(info))

        let restored = try #require(
            try await run(RestoreJSON.self, ["removed", "restore", "--document", "DOC"] + remote).documents.first)
        #expect(restored.identifier == "DOC" && restored.skipped.isEmpty, "\(restored)")
        #expect(Set(restored.restored) == Set(deletion.files.map(\.originalPath)))
        #expect(scenario.exists(info) && !scenario.exists(scenario.layout.deletedDocumentFile("DOC").description))
        let after = try #require(try await run(ListJSON.self, ["removed", "list"] + remote).documents.first)
        #expect(!after.deleted && !after.removals.contains { $0.operation == "documentDeletion" }, "\(after)")

        // The device that saw the deletion resumes; a new device joins with every row.
        try await scenario.a.document.rejoin()
        let d = try await TestClient.make(scenario.remote, name: "D", in: directory)
        try await d.sync()
        #expect(try NotesSchema.dump(d.store) == rowsBefore)
        #expect(try NotesSchema.dump(scenario.a.store) == rowsBefore)
    }
}
