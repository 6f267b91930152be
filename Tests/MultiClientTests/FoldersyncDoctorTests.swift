import Foundation
import GRDB
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// `foldersync doctor`, run as a binary against trees the library wrote, then damaged on purpose.
@Suite("foldersync doctor")
struct FoldersyncDoctorTests {
    struct Output: Decodable {
        var application: String
        var documents: [String]
        var healthy: Bool
        var findings: [DoctorFinding]
        var repairs: [DoctorRepairAction]?
        var remaining: [DoctorFinding]?
    }

    static let app = "com.example.notes"
    static let document = "com.example.notes/Documents/DOC"

    /// A synced tree: A published change set 1, B change sets 1–3, and both applied everything.
    private func syncedTree(_ directory: TemporaryDirectory) async throws -> (URL, TestClient, TestClient) {
        let root = directory.subdirectory("remote")
        let (a, b) = try await TestClient.pair(FileManagerFileSystem(rootURL: root), in: directory)
        try a.execute("INSERT INTO notes(id, title) VALUES ('a1', 'from A')")
        for n in 1...3 {
            try b.execute("INSERT INTO notes(id, title) VALUES (?, 'from B')", ["b\(n)"])
            try await b.sync()
        }
        try await converge(a, b)
        return (root, a, b)
    }

    private func doctor(_ root: URL, _ extra: [String] = []) async throws -> (FoldersyncTool.Result, Output) {
        let result = try await FoldersyncTool.run(["doctor", "--remote", root.path, "--json"] + extra)
        #expect(result.errors.isEmpty, "\(result.errors)")
        return (result, try FoldersyncTool.json(Output.self, result))
    }

    private func changeSets(_ root: URL, client: String) throws -> [URL] {
        let folder = root.appendingPathComponent("\(Self.document)/SyncChanges/\(client)")
        return try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted().map {
            folder.appendingPathComponent($0)
        }
    }

    @Test("A tree written by the library is healthy: exit 0, no findings")
    func healthy() async throws {
        let directory = TemporaryDirectory()
        let (root, _, _) = try await syncedTree(directory)
        let (result, output) = try await doctor(root)
        #expect(result.status == 0)
        #expect(output.healthy && output.findings.isEmpty, "\(output.findings)")
        #expect(output.application == Self.app && output.documents == ["DOC"])
        #expect(output.repairs == nil && output.remaining == nil)
        let text = try await FoldersyncTool.run(["doctor", "--remote", root.path])
        #expect(text.status == 0 && text.output == "Checked com.example.notes (1 document).\nHealthy.\n")
    }

    @Test("doctor finds each injected fault; --repair fixes what is safe; two clients still sync through the tree")
    func faultsAndRepair() async throws {
        let directory = TemporaryDirectory()
        let (root, a, b) = try await syncedTree(directory)
        let doc = root.appendingPathComponent(Self.document)
        // 1. A truncated change set (B has already applied it).
        let truncated = try changeSets(root, client: "client-A")[0]
        let bytes = try Data(contentsOf: truncated)
        try bytes.prefix(bytes.count - 7).write(to: truncated)
        // 2. A sequence gap: B's change set 2 disappears.
        try FileManager.default.removeItem(at: try changeSets(root, client: "client-B")[1])
        // 3. A stray temporary two hours old, and one being written right now.
        let stale = doc.appendingPathComponent(
            "SyncChanges/client-A/\(TemporaryName.make(for: "000000000002-00000000-0000-4000-8000-000000000009.syncchg"))"
        )
        try Data("half".utf8).write(to: stale)
        try FileManager.default.setAttributes(
            [.modificationDate: Date().addingTimeInterval(-7200)], ofItemAtPath: stale.path)
        let fresh = doc.appendingPathComponent("RecentSyncs/\(TemporaryName.make(for: "client-B.recentsync"))")
        try Data("half".utf8).write(to: fresh)
        // 4. A second integrity key.
        try Data().write(to: doc.appendingPathComponent("IntegrityKey/00000000-0000-4000-8000-00000000dead"))
        // 5. An unknown file.
        try Data("notes".utf8).write(to: doc.appendingPathComponent("notes.txt"))
        // 6. A corrupt recent sync: it blocks everyone else's sync until it is moved aside.
        let recent = doc.appendingPathComponent("RecentSyncs/client-B.recentsync")
        try Data("garbage".utf8).write(to: recent)

        let (before, found) = try await doctor(root)
        #expect(before.status == 1 && !found.healthy)
        func finding(_ check: DoctorFinding.Check, _ path: String) -> DoctorFinding? {
            found.findings.first { $0.check == check && $0.path == path }
        }
        let relative = { (url: URL) in String(url.path.dropFirst(root.path.count + 1)) }
        #expect(finding(.corruptChangeSet, relative(truncated))?.repair == .quarantine)
        #expect(finding(.corruptChangeSet, relative(truncated))?.message.contains("truncated") == true)
        #expect(
            finding(.sequenceGap, "\(Self.document)/SyncChanges/client-B")?.message.contains(
                "sequence 2 of client client-B is missing") == true)
        #expect(finding(.temporaryFile, relative(stale))?.repair == .remove)
        #expect(finding(.temporaryFile, relative(fresh))?.severity == .info)
        #expect(finding(.temporaryFile, relative(fresh))?.repair == nil)
        #expect(finding(.integrityKeyDuplicated, "\(Self.document)/IntegrityKey")?.severity == .error)
        #expect(finding(.unknownFile, "\(Self.document)/notes.txt")?.severity == .warning)
        #expect(finding(.corruptPropertyList, relative(recent))?.repair == .quarantine)
        #expect(found.findings.count == 7, "\(found.findings.map(\.check))")

        let text = try await FoldersyncTool.run(["doctor", "--remote", root.path])
        #expect(text.status == 1)
        #expect(text.output.contains("Problems found: 4 errors, 2 warnings, 1 info."), "\(text.output)")

        let (repaired, repairOutput) = try await doctor(root, ["--repair"])
        #expect(repaired.status == 1, "what repair cannot fix remains")
        let repairs = try #require(repairOutput.repairs)
        #expect(Set(repairs.map(\.path)) == [relative(truncated), relative(stale), relative(recent)])
        #expect(
            !FileManager.default.fileExists(atPath: stale.path) && FileManager.default.fileExists(atPath: fresh.path))
        for repair in repairs where repair.action == .quarantine {
            let destination = try #require(repair.destination)
            // Into the document's removed area, under the path it had below the document.
            #expect(
                destination.hasPrefix("\(Self.document)/Removed/")
                    && destination.hasSuffix(String(repair.path.dropFirst(Self.document.count))), "\(destination)")
            #expect(
                FileManager.default.fileExists(atPath: root.appendingPathComponent(destination).path),
                "nothing is deleted")
        }
        let remaining = try #require(repairOutput.remaining)
        #expect(remaining.allSatisfy { $0.repair == nil }, "\(remaining)")
        #expect(
            Set(remaining.filter(\.isProblem).map(\.check)) == [.sequenceGap, .integrityKeyDuplicated, .unknownFile])
        // Moving A's corrupt change set 1 aside leaves no gap while A's marker carries that set: readers take it from
        // there.
        #expect(!remaining.contains { $0.check == .sequenceGap && $0.path.hasSuffix("client-A") })
        #expect(remaining.contains { $0.check == .removedArea && $0.severity == .info })
        let (_, again) = try await doctor(root)
        // The same findings (messages aside: a temporary's age in seconds grows between the two runs).
        func identity(_ findings: [DoctorFinding]) -> [String] {
            findings.map { "\($0.severity) \($0.check) \($0.path)" }
        }
        #expect(identity(again.findings) == identity(remaining))

        // The clients keep syncing through the repaired tree.
        try a.execute("INSERT INTO notes(id, title) VALUES ('a2', 'after repair')")
        try b.execute("INSERT INTO notes(id, title) VALUES ('b4', 'after repair')")
        try await converge(a, b)
        #expect(try NotesSchema.dump(a.store) == NotesSchema.dump(b.store))
        #expect(try a.value("SELECT title FROM notes WHERE id = 'b4'") == "after repair")
        #expect(try b.value("SELECT title FROM notes WHERE id = 'a2'") == "after repair")
        // The gap heals: A finds its recent sync gone (quarantined) after it published, sees its set 1 missing from the
        // folder, and uploads a whole store that covers it.
        let (_, afterSync) = try await doctor(root)
        #expect(Set(afterSync.findings.filter(\.isProblem).map(\.check)) == [.integrityKeyDuplicated, .unknownFile])
    }

    @Test("A tree of a newer layout is reported, nothing else is judged, and --repair touches nothing")
    func futureFormatVersion() async throws {
        let directory = TemporaryDirectory()
        let (root, _, _) = try await syncedTree(directory)
        let url = root.appendingPathComponent("\(Self.app)/FormatVersion.plist")
        try PropertyListFile.encode(
            FormatVersionInfo(
                layoutVersion: RemoteLayout.formatVersion + 1, createdByClient: "x",
                creationDate: Fixture.date)
        ).write(to: url)
        try Data("notes".utf8).write(to: root.appendingPathComponent("\(Self.document)/notes.txt"))
        let before = treeListing(of: root)
        let (result, output) = try await doctor(root, ["--repair"])
        #expect(result.status == 1)
        #expect(output.findings.map(\.check) == [.formatVersionTooNew])
        #expect(output.repairs == [])
        #expect(treeListing(of: root) == before)
        let text = try await FoldersyncTool.run(["doctor", "--remote", root.path, "--repair"])
        #expect(text.output.contains("Nothing repaired: the tree's layout is newer than this tool's."))
    }

    @Test(
        "Misplaced and unknown files, a missing integrity key, a header that disagrees with its name, an unregistered client"
    )
    func moreChecks() async throws {
        let directory = TemporaryDirectory()
        let (root, _, _) = try await syncedTree(directory)
        let doc = root.appendingPathComponent(Self.document)
        let setsOfB = try changeSets(root, client: "client-B")
        // B's change set 3 copied into A's folder under A's next name: its header says client-B.
        let copy = doc.appendingPathComponent(
            "SyncChanges/client-A/000000000002-00000000-0000-4000-8000-0000000000ff.syncchg")
        try FileManager.default.copyItem(at: setsOfB[2], to: copy)
        // A change set in the wrong folder.
        try FileManager.default.copyItem(
            at: setsOfB[0], to: doc.appendingPathComponent("RecentSyncs/\(setsOfB[0].lastPathComponent)"))
        // No integrity key.
        let keys = doc.appendingPathComponent("IntegrityKey")
        for name in try FileManager.default.contentsOfDirectory(atPath: keys.path) {
            try FileManager.default.removeItem(at: keys.appendingPathComponent(name))
        }
        // A client with a folder in the document but never registered.
        try FileManager.default.createDirectory(
            at: doc.appendingPathComponent("SyncCommands/client-Ghost"), withIntermediateDirectories: true)

        let (result, output) = try await doctor(root, ["--document", "DOC"])
        #expect(result.status == 1)
        let checks = output.findings.map { "\($0.check) \($0.path.dropFirst(Self.document.count + 1))" }
        #expect(checks.contains("unappliableChangeSet SyncChanges/client-A/\(copy.lastPathComponent)"), "\(checks)")
        #expect(checks.contains("misplacedFile RecentSyncs/\(setsOfB[0].lastPathComponent)"), "\(checks)")
        #expect(checks.contains("integrityKeyMissing IntegrityKey"), "\(checks)")
        #expect(
            output.findings.contains {
                $0.check == .clientNotRegistered && $0.path == "\(Self.app)/ClientDevices/client-Ghost/deviceInfo.plist"
            })
    }

    @Test("Could not check: exit 2 with one line naming the cause")
    func couldNotCheck() async throws {
        let directory = TemporaryDirectory()
        let (root, _, _) = try await syncedTree(directory)
        let empty = directory.subdirectory("empty")
        for (arguments, cause) in [
            (["--remote", empty.path], "holds no FolderSync application"),
            (["--remote", root.path, "--app", "com.example.other"], "--app com.example.other: no such application"),
            (["--remote", root.path, "--document", "NOPE"], "--document NOPE: no such document in com.example.notes"),
        ] {
            let result = try await FoldersyncTool.run(["doctor"] + arguments)
            #expect(result.status == 2, "\(arguments)")
            #expect(
                result.output.isEmpty && result.errors.contains(cause)
                    && result.errors.filter { $0 == "\n" }.count == 1, "\(result.errors)")
        }
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("com.example.other/Documents"), withIntermediateDirectories: true)
        let several = try await FoldersyncTool.run(["doctor", "--remote", root.path])
        #expect(several.status == 2)
        #expect(
            several.errors.contains(
                "several applications; choose one with --app (found: com.example.notes, com.example.other)"))
        let chosen = try await FoldersyncTool.run(["doctor", "--remote", root.path, "--app", Self.app])
        #expect(chosen.status == 0, "\(chosen.errors)")
    }
}
