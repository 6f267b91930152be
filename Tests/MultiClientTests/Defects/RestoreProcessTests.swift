import Foundation
import Testing

@testable import TestSupport

/// Safety defects found by reading the code (issue 24, items 1 and 7; issue 25, item 5), as users meet them: a
/// device restored from a backup, a shared folder restored from its own backup, a marker rolled back. Driven
/// through the `notes` and `foldersync` binaries, one process per command, as the repros were.
@Suite("Restores through real processes", .serialized)
struct RestoreProcessTests {
    typealias Device = NotesProcessTests.Device

    private func copy(_ source: URL, to destination: URL) throws {
        try? FileManager.default.removeItem(at: destination)
        try FileManager.default.copyItem(at: source, to: destination)
    }

    /// Puts the copy made by `copy` back in place, as a restore from Time Machine or a VM snapshot does.
    private func restore(_ copy: URL, to original: URL) throws {
        try? FileManager.default.removeItem(at: original)
        try FileManager.default.copyItem(at: copy, to: original)
    }

    private func doctor(_ remote: URL) async throws -> String {
        let result = try await FoldersyncTool.run(["doctor", "--remote", remote.path])
        return result.output + result.errors
    }

    @Test(
        "A device restored from a backup (with or without its helper folder) continues after what it published: no write is lost, replicas converge, doctor is healthy",
        arguments: [true, false])
    func restoredDevice(withHelperFolder: Bool) async throws {
        let directory = TemporaryDirectory()
        let devices = NotesProcessTests.devices(3, in: directory)
        let (a, b, c) = (devices[0], devices[1], devices[2])
        _ = try await a.succeed(["add", "a1"])
        _ = try await a.succeed(["sync"])
        _ = try await b.succeed(["sync"])
        let helper = URL(fileURLWithPath: a.database.path + ".foldersync")
        let saved = directory.url.appendingPathComponent("saved")
        try FileManager.default.createDirectory(at: saved, withIntermediateDirectories: true)
        try copy(a.database, to: saved.appendingPathComponent("a.sqlite"))
        if withHelperFolder { try copy(helper, to: saved.appendingPathComponent("helper")) }

        _ = try await a.succeed(["add", "a2"])
        _ = try await a.succeed(["sync"])
        _ = try await b.succeed(["sync"])
        try restore(saved.appendingPathComponent("a.sqlite"), to: a.database)
        if withHelperFolder {
            try restore(saved.appendingPathComponent("helper"), to: helper)
        } else {
            try? FileManager.default.removeItem(at: helper)
        }

        _ = try await a.succeed(["add", "a3"])
        let first = try await a.succeed(["sync", "--json"])
        #expect(first.contains("restoredStore"), "the restored device did not say so: \(first)")
        for _ in 0..<2 { for device in [a, b] { _ = try await device.succeed(["sync"]) } }
        _ = try await c.succeed(["sync"])
        for device in [a, b, c] {
            #expect(try await device.texts() == ["a1", "a2", "a3"], "\(device.name)")
        }
        let verdict = try await doctor(a.remote)
        #expect(verdict.contains("Healthy") && !verdict.contains("duplicateSequence"), "\(verdict)")
    }

    @Test(
        "A shared folder restored from its own backup heals: each author publishes a whole store for its sets that are gone, and a new device gets every write"
    )
    func restoredFolder() async throws {
        let directory = TemporaryDirectory()
        let devices = NotesProcessTests.devices(4, in: directory)
        let (a, b, c, late) = (devices[0], devices[1], devices[2], devices[3])
        _ = try await a.succeed(["add", "a1"])
        _ = try await b.succeed(["add", "b1"])
        for device in [a, b, a, b] { _ = try await device.succeed(["sync"]) }
        let saved = directory.url.appendingPathComponent("saved-shared")
        try copy(a.remote, to: saved)

        _ = try await a.succeed(["add", "a2"])
        _ = try await b.succeed(["add", "b2"])
        for device in [a, b, a, b] { _ = try await device.succeed(["sync"]) }
        try restore(saved, to: a.remote)
        // A device that joins before the authors notice gets only what the backup held, then catches up.
        _ = try await c.succeed(["sync"])
        #expect(try await c.texts() == ["a1", "b1"])
        for device in [a, b] {
            let report = try await device.succeed(["sync", "--json"])
            #expect(report.contains("staleRecentSync"), "\(device.name) did not notice: \(report)")
        }
        for device in [a, b, c, late] { _ = try await device.succeed(["sync"]) }
        for device in [a, b, c, late] {
            #expect(try await device.texts() == ["a1", "a2", "b1", "b2"], "\(device.name)")
        }
        let verdict = try await doctor(a.remote)
        #expect(verdict.contains("Healthy"), "\(verdict)")
    }

    @Test(
        "A recent sync rolled back to an older, valid copy is ignored by readers (they keep the highest) and rewritten by its author"
    )
    func rolledBackMarker() async throws {
        let directory = TemporaryDirectory()
        let devices = NotesProcessTests.devices(2, in: directory)
        let (a, b) = (devices[0], devices[1])
        _ = try await a.succeed(["add", "a1"])
        for device in [a, b] { _ = try await device.succeed(["sync"]) }
        let markers = a.remote.appendingPathComponent("com.example.notes/Documents/notes/RecentSyncs")
        let names = try FileManager.default.contentsOfDirectory(atPath: markers.path)
        let old = try #require(
            try names.map { markers.appendingPathComponent($0) }.first { url in
                // A's marker: the one that announces a change set.
                try String(contentsOf: url, encoding: .utf8).contains(".syncchg")
            })
        let older = try Data(contentsOf: old)
        _ = try await a.succeed(["add", "a2"])
        for device in [a, b] { _ = try await device.succeed(["sync"]) }
        try older.write(to: old)
        _ = try await a.succeed(["add", "a3"])
        _ = try await a.succeed(["sync"])  // A reads its marker back, rewrites it
        try older.write(to: old)  // and the provider rolls it back again
        let report = try await b.succeed(["sync", "--json"])
        #expect(report.contains("staleRecentSync"), "\(report)")
        #expect(try await b.texts() == ["a1", "a2", "a3"])
    }
}
