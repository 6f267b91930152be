import Foundation
import TestProcesses
import Testing

@testable import TestSupport

/// The steps of the article "Changing a synced schema", each device run as processes of a notes app built at
/// schema versions 1 to 4 (the test worker's `schema` command): an old and a new version share one folder, the
/// old one parks the new one's change sets, and applies them once it is updated.
@Suite("Changing a synced schema (processes)", .serialized)
struct SchemaChangeProcessTests {
    /// One device: its database and helper folder, and the version of the app it runs now.
    struct Device {
        let name: String
        let directory: URL
        let shared: URL
        var version: Int

        @discardableResult
        func run(_ action: String, _ extra: [String] = []) async throws -> String {
            let result = try await ChildProcess(
                "foldersync-test-worker",
                [
                    "schema", "--version", "\(version)", "--db",
                    directory.appendingPathComponent("\(name).sqlite").path,
                    "--helper", directory.appendingPathComponent("\(name).helper").path, "--root", shared.path,
                    "--app", "com.example.schema", "--document", "notes", "--client", name, "--action", action,
                ] + extra
            ).finish()
            #expect(result.status == 0, "\(name) v\(version) \(action): \(result.errors)")
            return result.output
        }

        func write(_ id: String, _ value: String) async throws {
            try await run("write", ["--id", id, "--value", value])
        }

        /// The sync's `applied N parked M sent K`.
        @discardableResult
        func sync() async throws -> String { try await run("sync").trimmingCharacters(in: .whitespacesAndNewlines) }

        func dump() async throws -> [String] { try await run("dump").split(separator: "\n").map(String.init) }
    }

    static func devices(in directory: TemporaryDirectory) -> (Device, Device) {
        let shared = directory.subdirectory("shared")
        return (
            Device(name: "A", directory: directory.url, shared: shared, version: 1),
            Device(name: "B", directory: directory.url, shared: shared, version: 1)
        )
    }

    @Test(
        "Adding a column: the old version parks the new one's sets and its own still reach the new; once updated, it applies what it parked"
    )
    func addingAColumn() async throws {
        let directory = TemporaryDirectory()
        var (a, b) = Self.devices(in: directory)
        try await a.write("n1", "call Ann")
        #expect(try await a.sync() == "applied 0 parked 0 sent 1")
        #expect(try await b.sync() == "applied 1 parked 0 sent 0")

        b.version = 2
        try await b.run("pin", ["--id", "n1"])
        #expect(try await b.sync() == "applied 0 parked 0 sent 1")
        // A, at version 1, parks B's set of version 2; what A writes still reaches B.
        try await a.write("n2", "buy milk")
        #expect(try await a.sync() == "applied 0 parked 1 sent 1")
        #expect(try await a.dump() == [#"notes [id:"n1" body:"call Ann"]"#, #"notes [id:"n2" body:"buy milk"]"#])
        #expect(try await b.sync() == "applied 1 parked 0 sent 0")
        #expect(
            try await b.dump() == [
                #"notes [id:"n1" body:"call Ann" pinned:1]"#, #"notes [id:"n2" body:"buy milk" pinned:0]"#,
            ])

        // A updated: its migration adds the column; the set it parked is applied.
        a.version = 2
        #expect(try await a.sync() == "applied 1 parked 0 sent 0")
        #expect(try await a.dump() == b.dump())
    }

    @Test("Adding a synced table: rows of the new table reach the old version only once it is updated")
    func addingASyncedTable() async throws {
        let directory = TemporaryDirectory()
        var (a, b) = Self.devices(in: directory)
        a.version = 2
        b.version = 3
        try await a.write("n1", "call Ann")
        try await a.sync()
        try await b.sync()
        try await b.run("tag", ["--id", "n1", "--value", "phone"])
        #expect(try await b.sync() == "applied 0 parked 0 sent 1")
        #expect(try await a.sync() == "applied 0 parked 1 sent 0")
        a.version = 3
        #expect(try await a.sync() == "applied 1 parked 0 sent 0")
        #expect(try await a.dump().contains(#"tags [id:"n1/phone" note_id:"n1" name:"phone"]"#))
        #expect(try await a.dump() == b.dump())
    }

    @Test(
        "Renaming a column: a write to the old name on the old version and to the new name on the new one are one column, the newer write wins on both, and a change made before the update travels under the new name"
    )
    func renamingAColumn() async throws {
        let directory = TemporaryDirectory()
        var (a, b) = Self.devices(in: directory)
        a.version = 3
        b.version = 3
        try await a.write("n1", "call Ann")
        try await a.write("n2", "buy milk")
        try await a.sync()
        try await b.sync()

        // B, updated first, renames `body` to `text` and writes n1; A, still at version 3, writes n1 later.
        b.version = 4
        try await b.write("n1", "call Ann at 5")
        #expect(try await b.sync() == "applied 0 parked 0 sent 1")
        try await a.write("n1", "call Ann at 6")
        #expect(try await a.sync() == "applied 0 parked 1 sent 1")
        // B applies A's change to `body` as a change to `text`: the newer write.
        #expect(try await b.sync() == "applied 1 parked 0 sent 0")
        #expect(try await b.dump().first == #"notes [id:"n1" text:"call Ann at 6" pinned:0]"#)

        // A writes n2 and is updated before it syncs: its unpublished change follows the rename.
        try await a.write("n2", "buy oat milk")
        a.version = 4
        // The set it parked (B's older write of n1) loses to A's own, whose record followed the rename.
        #expect(try await a.sync() == "applied 0 parked 0 sent 1")
        #expect(try await b.sync() == "applied 1 parked 0 sent 0")
        let expected = [
            #"notes [id:"n1" text:"call Ann at 6" pinned:0]"#, #"notes [id:"n2" text:"buy oat milk" pinned:0]"#,
        ]
        #expect(try await a.dump() == expected)
        #expect(try await b.dump() == expected)
    }
}
