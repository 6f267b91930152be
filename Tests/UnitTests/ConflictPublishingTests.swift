import FolderSyncTesting
import Foundation
import GRDB
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// What each conflict resolution publishes, read from the change sets on the remote: a local value the resolver
/// rejected never leaves the device, and a kept or merged value goes out once. Before local changes were staged
/// after the apply, a rejected value was published anyway (staging ran first) and corrected by a second set.
@Suite("What conflict resolutions publish")
struct ConflictPublishingTests {
    enum Answer: String, CaseIterable, CustomStringConvertible {
        case remoteWins, localWins, merged
        var description: String { rawValue }
    }

    @Test(
        "A resolution publishes only what it decided: nothing of a rejected local value, one set for a kept or merged one",
        arguments: Answer.allCases)
    func resolutionsPublishWhatTheyDecide(_ answer: Answer) async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let (a, b) = try await TestClient.pair(FileManagerFileSystem(rootURL: root), in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'start')")
        try await a.sync()
        try await b.sync()
        try a.execute("UPDATE notes SET title = 'from A' WHERE id = 'n1'")
        try b.execute("UPDATE notes SET title = 'from B' WHERE id = 'n1'")
        try await b.sync()
        let before = try Self.publishedTitles(root, client: "client-A")

        let offered = Locked(0)
        a.document.conflictResolver = { conflict in
            offered.withLock { $0 += 1 }
            switch answer {
            case .remoteWins: return .remoteWins
            case .localWins: return .localWins
            case .merged: return .merged(.text("from A+from B"))
            }
        }
        let report = try await a.sync()
        #expect(offered.current == 1, "one conflict, offered once")
        let published = Array(try Self.publishedTitles(root, client: "client-A").dropFirst(before.count))
        switch answer {
        case .remoteWins:
            #expect(!published.contains("from A"), "the rejected value left the device: \(published)")
            #expect(report.changeSetsSent <= 1 && published.allSatisfy { $0 == "from B" }, "\(published)")
        case .localWins:
            #expect(report.changeSetsSent == 1 && published == ["from A"], "kept once: \(published)")
        case .merged:
            #expect(
                report.changeSetsSent == 1 && published == ["from A+from B"],
                "merged once, the local value never: \(published)")
        }
        try await b.sync()
        try await a.sync()
        let expected = ["remoteWins": "from B", "localWins": "from A", "merged": "from A+from B"][answer.rawValue]
        #expect(try a.value("SELECT title FROM notes") == expected)
        #expect(try NotesSchema.dump(a.store) == NotesSchema.dump(b.store))
    }

    /// Every title value in `client`'s published change sets, in sequence order.
    private static func publishedTitles(_ root: URL, client: String) throws -> [String] {
        let folder = root.appendingPathComponent("com.example.notes/Documents/DOC/SyncChanges/\(client)")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .compactMap { name in RemoteLayout.parseChangeSetFileName(name).map { ($0.sequence, name) } }
            .sorted { $0.0 < $1.0 }
        var titles: [String] = []
        for (_, name) in names {
            try ChangeSetReader.forEachChange(at: folder.appendingPathComponent(name), path: name) { change in
                for column in change.columns where column.column == "title" {
                    if case .text(let title) = column.value { titles.append(title) }
                }
            }
        }
        return titles
    }
}
