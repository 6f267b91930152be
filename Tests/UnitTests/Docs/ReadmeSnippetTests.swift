// swift-format-ignore-file
// (The snippets here are the documentation's code blocks, compared character for character.)
import Foundation
import FolderSync
@testable import TestSupport
import FolderSyncTesting
import GRDB
import Testing

// README-SNIPPET-BEGIN quick start
// (The README's `import` lines are this file's imports; the body below is compiled with the tests.)
func readmeQuickStart(documentURL: URL, sharedFolderURL: URL, savedClientID: String, helperURL: URL) async throws -> SyncReport {
// 1. Open your SQLite document through FolderSync, with your migrator, as a pool (views read while syncs write).
//    Writes to synced tables are recorded in the same transaction.
var migrator = DatabaseMigrator()
migrator.registerMigration("notes") { db in
    try db.create(table: "notes") { t in
        t.primaryKey("id", .text)
        t.column("title", .text)
        t.column("body", .text)
    }
}
let store = try GRDBStore(path: documentURL.path, tables: [SyncedTable("notes")], connection: .pool, migrator: migrator)

// 2. Configure, then register: only a device's first launch needs the shared folder; later ones come up
//    at once from the helper folder, offline too, and the first sync checks the folder.
let app = ApplicationSyncManager(remote: FileManagerFileSystem(rootURL: sharedFolderURL))
try app.configure(.init(applicationIdentifier: "com.example.notes", clientIdentifier: savedClientID,
                        clientDescription: "Ann's laptop"))
let document = try DocumentSyncManager(
    applicationSyncManager: app,
    configuration: .init(documentIdentifier: "notes", documentDescription: "Notes", helperDirectory: helperURL),
    store: store)
document.remoteDocumentCreationHandler = { _ in true }   // the first device creates the remote document
try await document.registerConfigured()

// 3. Show the notes: an observation sees your writes and every change a sync applies.
let notes = ValueObservation.tracking { db in try String.fetchAll(db, sql: "SELECT title FROM notes ORDER BY title") }
let screen = Task { for try await titles in notes.values(in: store.database) { print(titles) } }

// 4. Write as usual, then sync. Conflicting edits of one column go to your resolver (or the last writer wins).
try await store.database.write { try $0.execute(sql: "INSERT INTO notes VALUES (?, ?, ?)", arguments: [UUID().uuidString, "Hi", ""]) }
document.conflictResolver = { conflict in .merged(conflict.remoteValue) }
let report = try await document.synchronize()       // SyncReport: sent, applied, conflicts, rowChanges (which rows)
document.startWatchingRemote()                      // sync automatically when other devices publish
// README-SNIPPET-END
document.stopWatchingRemote()
screen.cancel()
return report
}

/// Every Swift code block in README.md is compiled (above, as part of the tests) and runs.
@Suite("README")
struct ReadmeSnippetTests {
    @Test("Each Swift block of the README is, apart from its imports, the code compiled in this file")
    func snippetsCompile() throws {
        let readme = try String(contentsOf: repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let blocks = readme.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        // Built at run time, so that these lines are not taken for markers.
        let (begin, end) = ("// README-SNIPPET-" + "BEGIN", "// README-SNIPPET-" + "END")
        let compiled = source.components(separatedBy: begin).dropFirst().map { part in
            // Drop the marker line, the comment line and the function header; keep the body up to the end marker.
            part.components(separatedBy: end)[0].split(separator: "\n", omittingEmptySubsequences: false)
                .dropFirst(3).joined(separator: "\n")
        }
        #expect(!blocks.isEmpty)
        #expect(blocks.count == compiled.count, "README has \(blocks.count) Swift blocks, this file compiles \(compiled.count)")
        for (block, body) in zip(blocks, compiled) {
            let withoutImports = block.split(separator: "\n", omittingEmptySubsequences: false)
                .filter { !$0.hasPrefix("import ") }.joined(separator: "\n").trimmingCharacters(in: .newlines)
            #expect(withoutImports == body.trimmingCharacters(in: .newlines))
        }
    }

    @Test("The README's quick start runs: it registers, writes and syncs")
    func quickStartRuns() async throws {
        let directory = TemporaryDirectory()
        let report = try await readmeQuickStart(documentURL: directory.url.appendingPathComponent("notes.sqlite"),
                                                sharedFolderURL: directory.subdirectory("shared"),
                                                savedClientID: UUID().uuidString, helperURL: directory.subdirectory("helper"))
        #expect(report.changesSent == 1)
    }
}

/// Every Swift code block of the DocC articles is compiled (DocCSnippets.swift) and is what that file compiles.
@Suite("DocC articles")
struct DocCSnippetTests {
    @Test("Each Swift block of each DocC article is, apart from its imports, the code compiled in DocCSnippets.swift")
    func snippetsCompile() throws {
        let catalog = repositoryRoot.appendingPathComponent("Sources/FolderSync/FolderSync.docc")
        var blocks: [String] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: catalog.path).filter({ $0.hasSuffix(".md") }).sorted() {
            let article = try String(contentsOf: catalog.appendingPathComponent(name), encoding: .utf8)
            let articleName = String(name.dropLast(3))
            // Imports (`@_spi(ModelAdapter) import FolderSync` too) are left out; a block that is only imports shows
            // how to import, and the test target's own imports compile it.
            blocks += article.components(separatedBy: "```swift\n").dropFirst().compactMap { block in
                let code = block.components(separatedBy: "```")[0].split(separator: "\n", omittingEmptySubsequences: false)
                    .filter { $0.wholeMatch(of: /(@_spi\(\w+\) )*import \w+/) == nil }.joined(separator: "\n")
                    .trimmingCharacters(in: .newlines)
                return code.isEmpty ? nil : articleName + "\n" + code
            }
        }
        let source = try String(contentsOf: repositoryRoot.appendingPathComponent("Tests/UnitTests/Docs/DocCSnippets.swift"), encoding: .utf8)
        let (begin, end) = ("// DOCC-SNIPPET-" + "BEGIN ", "// DOCC-SNIPPET-" + "END")
        let compiled = source.components(separatedBy: begin).dropFirst().map { part in
            // The article's name on the marker line; then drop the comment line and the header line.
            let lines = part.components(separatedBy: end)[0].split(separator: "\n", omittingEmptySubsequences: false)
            return String(lines[0]) + "\n" + lines.dropFirst(3).joined(separator: "\n").trimmingCharacters(in: .newlines)
        }
        #expect(blocks.count >= 9, "the articles hold Swift blocks")
        #expect(blocks.count == compiled.count, "the articles have \(blocks.count) Swift blocks, DocCSnippets.swift compiles \(compiled.count)")
        for (block, body) in zip(blocks, compiled) {
            #expect(block == body)
        }
    }
}

/// The backend tutorial (Examples/S3Backend/README.md): its first block is compiled in DocCSnippets.swift, and every
/// line of its other blocks is a line of the example's sources, so the tutorial shows code that builds.
@Suite("S3 backend tutorial")
struct S3TutorialSnippetTests {
    @Test("The tutorial's usage block is the code compiled in DocCSnippets.swift; its excerpts are the example's lines")
    func tutorialCompiles() throws {
        let tutorial = try String(contentsOf: repositoryRoot.appendingPathComponent("Examples/S3Backend/README.md"), encoding: .utf8)
        let blocks = tutorial.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        try #require(blocks.count >= 2)
        let usage = blocks[0].split(separator: "\n").filter { !$0.hasPrefix("import ") }.joined(separator: "\n")
        let snippets = try String(contentsOf: repositoryRoot.appendingPathComponent("Tests/UnitTests/Docs/DocCSnippets.swift"),
                                  encoding: .utf8)
        let compiled = try #require(snippets.components(separatedBy: "// S3-TUTORIAL-" + "BEGIN\n").dropFirst().first)
            .components(separatedBy: "// S3-TUTORIAL-" + "END")[0].split(separator: "\n").dropFirst(2).joined(separator: "\n")
        #expect(usage == compiled)

        let sources = try FileManager.default.subpathsOfDirectory(atPath: repositoryRoot.appendingPathComponent("Examples/S3Backend").path)
            .filter { $0.hasSuffix(".swift") }
            .map { try String(contentsOf: repositoryRoot.appendingPathComponent("Examples/S3Backend/" + $0), encoding: .utf8) }
        let sourceLines = Set(sources.flatMap { $0.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) } })
        let excerpts = blocks.dropFirst().flatMap { $0.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) } }
        try #require(excerpts.count >= 5)
        for line in excerpts {
            // `open override` in the tutorial may be `public override` in a final class of the example.
            let alternatives = [line, line.replacingOccurrences(of: "open override", with: "public override")]
            #expect(alternatives.contains(where: sourceLines.contains), "not in Examples/S3Backend: \(line)")
        }
    }
}
