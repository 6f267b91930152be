import Crypto
import Foundation
import GRDB
import Testing

@_spi(Tooling) @_spi(ModelAdapter) @testable import FolderSync
@testable import TestSupport

/// `foldersync store check`, run as a binary against a device's document and helper folder that a real sync wrote,
/// then damaged on purpose, one kind of damage at a time.
@Suite("foldersync store check")
struct FoldersyncStoreCheckTests {
    struct Output: Decodable {
        var store: String
        var helper: String?
        var bookkeepingVersion: Int?
        var healthy: Bool
        var findings: [DoctorFinding]
        var repairs: [DoctorRepairAction]?
        var remaining: [DoctorFinding]?
    }

    /// A device after real syncs: A's rows published and applied by B, one attachment, one note deleted.
    struct Device {
        let directory: TemporaryDirectory
        let a: TestClient
        var path: URL { directory.url.appendingPathComponent("A/notes.sqlite") }
        var helper: URL { directory.url.appendingPathComponent("A/helper") }

        static func synced() async throws -> Device {
            let directory = TemporaryDirectory()
            let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
            let (a, b) = try await TestClient.pair(remote, in: directory)
            try a.execute(
                "INSERT INTO notes(id, title, body) VALUES ('n1', 'one', ?)", [Data(repeating: 7, count: 100_000)])
            try a.execute("INSERT INTO notes(id, title) VALUES ('n2', 'two')")
            try b.execute("INSERT INTO notes(id, title) VALUES ('b1', 'from B')")
            try await converge(a, b)
            try a.execute("DELETE FROM notes WHERE id = 'n2'")
            try await converge(a, b)
            return Device(directory: directory, a: a)
        }

        /// Writes through a connection without FolderSync's capture: its functions are there, and do nothing.
        func writeUncaptured(_ sql: String, _ arguments: StatementArguments = []) throws {
            var configuration = Configuration()
            configuration.prepareDatabase { db in
                for kind in StoreSchema.captureTriggerKinds {
                    db.add(
                        function: DatabaseFunction(StoreSchema.captureFunction(kind), argumentCount: nil, pure: false) {
                            _ in nil
                        })
                }
            }
            let queue = try DatabaseQueue(path: path.path, configuration: configuration)
            try queue.write { try $0.execute(sql: sql, arguments: arguments) }
            try queue.close()
        }

        func check(_ extra: [String] = []) async throws -> (FoldersyncTool.Result, Output) {
            let result = try await FoldersyncTool.run(
                ["store", "check", path.path, "--helper", helper.path, "--json"] + extra)
            #expect(result.errors.isEmpty, "\(result.errors)")
            return (result, try FoldersyncTool.json(Output.self, result))
        }
    }

    @Test("A device's store and helper folder written by real syncs are healthy: exit 0, no findings")
    func healthy() async throws {
        let device = try await Device.synced()
        let (result, output) = try await device.check()
        #expect(result.status == 0)
        #expect(output.healthy && output.findings.isEmpty, "\(output.findings)")
        #expect(output.bookkeepingVersion == StoreSchema.currentBookkeepingVersion)
        let text = try await FoldersyncTool.run(["store", "check", device.path.path])
        #expect(text.status == 0 && text.output.hasSuffix("Healthy.\n"), "\(text.output)")
    }

    /// One kind of local damage: how it is made, and the finding it must give.
    struct Damage: CustomTestStringConvertible, Sendable {
        let check: DoctorFinding.Check
        let severity: DoctorFinding.Severity
        let path: String
        let make: @Sendable (Device) async throws -> Void
        var testDescription: String { check.rawValue + (severity == .info ? " (info)" : "") }
    }

    static let damages: [Damage] = [
        Damage(check: .rowWithoutRegisters, severity: .error, path: "notes/x1") { device in
            try device.writeUncaptured("INSERT INTO notes(id, title) VALUES ('x1', 'by the shell')")
        },
        Damage(check: .registersWithoutRow, severity: .error, path: "notes/n1") { device in
            try device.writeUncaptured("DELETE FROM notes WHERE id = 'n1'")
        },
        Damage(check: .unreadableBookkeeping, severity: .error, path: "notes/b1") { device in
            try device.writeUncaptured("UPDATE foldersync_clocks SET stamps = x'ff01' WHERE sync_id = 'b1'")
        },
        Damage(check: .changeWithoutRow, severity: .warning, path: "notes/gone") { device in
            try device.writeUncaptured(
                "INSERT INTO foldersync_pending_changes(tbl, sync_id, staged_in, marks) VALUES ('notes', 'gone', 0, ?)",
                [PendingMarks(["title"]).encoded])
        },
        Damage(check: .deleteWithoutTombstone, severity: .error, path: "notes/b1") { device in
            try device.a.execute("DELETE FROM notes WHERE id = 'b1'")
            // Settled (its marks `#deleted` alone), then its tombstone gone.
            try device.writeUncaptured(
                "UPDATE foldersync_pending_changes SET marks = x'082364656c65746564' WHERE sync_id = 'b1'")
            try device.writeUncaptured("DELETE FROM foldersync_tombstones WHERE sync_id = 'b1'")
        },
        Damage(check: .tombstoneOfLiveRow, severity: .error, path: "notes/n2") { device in
            try device.writeUncaptured("INSERT INTO notes(id, title) VALUES ('n2', 'back')")
            try device.writeUncaptured(
                "INSERT INTO foldersync_clocks SELECT tbl, 'n2', stamps FROM foldersync_clocks WHERE sync_id = 'n1'")
        },
        Damage(check: .stagedSetMissing, severity: .error, path: "StagedSyncChanges/000000000009-…") { device in
            try device.writeUncaptured(
                "INSERT INTO foldersync_staged_changes(tbl, sync_id, staged_in, marks) VALUES ('notes', 'n1', 9, ?)",
                [PendingMarks(["title"]).encoded])
        },
        Damage(
            check: .strayStagedFile, severity: .warning,
            path: "StagedSyncChanges/000000000001-00000000-0000-4000-8000-000000000001.syncchg"
        ) { device in
            try Data("published long ago".utf8).write(
                to: device.helper.appendingPathComponent(
                    "StagedSyncChanges/000000000001-00000000-0000-4000-8000-000000000001.syncchg"))
        },
        Damage(
            check: .corruptChangeSet, severity: .error,
            path: "StagedSyncChanges/000000000009-00000000-0000-4000-8000-000000000009.syncchg"
        ) { device in
            try device.a.store.database.write { db in
                var state = try device.a.store.loadState(db)
                state.progress.nextSequence = 10
                try device.a.store.save(state, db)
            }
            try Data("truncated".utf8).write(
                to: device.helper.appendingPathComponent(
                    "StagedSyncChanges/000000000009-00000000-0000-4000-8000-000000000009.syncchg"))
        },
        Damage(check: .ledgerMismatch, severity: .error, path: "notes.sqlite (foldersync_applied_runs)") { device in
            try device.writeUncaptured("UPDATE foldersync_applied_runs SET through = through + 3")
        },
        Damage(check: .claimBeyondStore, severity: .warning, path: "notes.sqlite") { device in
            var remote = try device.a.store.loadSyncState().remote
            remote.announcedAcknowledgement["client-B"] = 40
            try device.a.store.saveRemoteKnowledge(remote)
        },
        Damage(check: .attachmentMissing, severity: .warning, path: "Attachments/\(String(repeating: "ab", count: 32))")
        { device in
            let reference = AttachmentReference(
                sha256: String(repeating: "ab", count: 32), size: 5, isInlineValue: true)
            try device.writeUncaptured("UPDATE notes SET body = ? WHERE id = 'b1'", [reference.databaseValue])
        },
        Damage(
            check: .corruptAttachment, severity: .error,
            path: "Attachments/\(AttachmentReference.hex(SHA256.hash(data: Data("five!".utf8))))"
        ) { device in
            let sha = AttachmentReference.hex(SHA256.hash(data: Data("five!".utf8)))
            let reference = AttachmentReference(sha256: sha, size: 5, isInlineValue: true)
            try FileManager.default.createDirectory(
                at: device.helper.appendingPathComponent("Attachments"), withIntermediateDirectories: true)
            try Data("FIVE!".utf8).write(to: device.helper.appendingPathComponent("Attachments/\(sha)"))
            try device.writeUncaptured("UPDATE notes SET body = ? WHERE id = 'b1'", [reference.databaseValue])
        },
        Damage(check: .bookkeepingVersion, severity: .error, path: "notes.sqlite") { device in
            try device.writeUncaptured("UPDATE foldersync_meta SET value = 99 WHERE key = 'bookkeepingVersion'")
        },
        Damage(check: .unreadableRegistration, severity: .error, path: "Registration.plist") { device in
            try Data("not a plist".utf8).write(to: device.helper.appendingPathComponent("Registration.plist"))
        },
        Damage(check: .corruptStore, severity: .error, path: "notes.sqlite") { device in
            try device.a.store.close()
            // The first page of the notes table's B-tree: its header's page type overwritten.
            let page = try DatabaseQueue(path: device.path.path).read { db in
                try Int.fetchOne(db, sql: "SELECT rootpage FROM sqlite_master WHERE name = 'notes'")!
            }
            let pageSize = 4096
            let handle = try FileHandle(forUpdating: device.path)
            try handle.seek(toOffset: UInt64((page - 1) * pageSize))
            try handle.write(contentsOf: Data(repeating: 0x77, count: 64))
            try handle.close()
        },
        Damage(check: .resetPending, severity: .info, path: "Reset.plist") { device in
            try PropertyListFile.encode(
                LocalReset(code: 14, message: "deleted", path: nil, backupPath: nil, date: Date())
            )
            .write(to: device.helper.appendingPathComponent("Reset.plist"))
        },
    ]

    @Test(
        "store check names each kind of local damage, with its severity and path; exit 1 for a problem",
        arguments: damages)
    func findsDamage(_ damage: Damage) async throws {
        let device = try await Device.synced()
        try await damage.make(device)
        let (result, output) = try await device.check()
        #expect(
            output.findings.contains {
                $0.check == damage.check && $0.severity == damage.severity && $0.path == damage.path
            },
            "\(output.findings)")
        #expect(result.status == (damage.severity == .info ? 0 : 1))
        #expect(output.healthy == (damage.severity == .info))
        // Nothing but the damage: the checks do not report one cause twice under other names.
        #expect(output.findings.allSatisfy { $0.check == damage.check || $0.severity == .info }, "\(output.findings)")
    }

    @Test(
        "--repair removes stray staged files and damaged attachment copies only; a damaged copy is fetched again by request"
    )
    func repairIsSafe() async throws {
        let device = try await Device.synced()
        for damage in Self.damages where damage.check == .strayStagedFile || damage.check == .corruptAttachment {
            try await damage.make(device)
        }
        let (result, output) = try await device.check(["--repair"])
        #expect(result.status == 1, "a reference whose value has not arrived remains")
        #expect(
            Set(output.repairs?.map(\.path) ?? []) == Set(output.findings.filter { $0.repair == .remove }.map(\.path)))
        #expect(output.repairs?.count == 2)
        #expect(output.remaining?.map(\.check) == [.attachmentMissing])
        #expect(try device.a.value("SELECT title FROM notes WHERE id = 'n1'") == "one")
    }

    @Test(
        "A document without FolderSync is reported as not tracked, and a store of an older bookkeeping version as upgraded on open"
    )
    func untrackedAndOlder() async throws {
        let directory = TemporaryDirectory()
        let plain = directory.url.appendingPathComponent("plain.sqlite")
        try await DatabaseQueue(path: plain.path).write { try $0.execute(sql: "CREATE TABLE t(id TEXT PRIMARY KEY)") }
        let result = try await FoldersyncTool.run(["store", "check", plain.path, "--json"])
        let output = try FoldersyncTool.json(Output.self, result)
        #expect(result.status == 0 && output.findings.map(\.check) == [.notTracked] && output.bookkeepingVersion == nil)
        let older = try Golden.copy("local-stores/bookkeeping-v6.sqlite", into: directory.url)
        let upgraded = try await FoldersyncTool.run(["store", "check", older.path, "--json"])
        let report = try FoldersyncTool.json(Output.self, upgraded)
        #expect(
            report.bookkeepingVersion == 6
                && report.findings.contains { $0.check == .bookkeepingVersion && $0.severity == .info })
        let missing = try await FoldersyncTool.run([
            "store", "check", directory.url.appendingPathComponent("none.sqlite").path,
        ])
        #expect(missing.status == 2 && missing.errors.contains("no such file"))
    }
}
