import Foundation
import GRDB
import TestProcesses
import Testing

@testable import TestSupport

/// The `todo` example (Examples/Todo) run as two devices, each command a process of its own, as its `--help`
/// documents it: several tables with a to-one and a to-many relationship, the app's conflict rule, a per-table
/// delete policy, progress from events, a `@MainActor` model.
@Suite("Todo processes", .serialized)
struct TodoProcessTests {
    struct Device {
        let name: String
        let database: URL
        let remote: URL

        func run(_ arguments: [String]) async throws -> (status: Int32, output: String, errors: String) {
            try await ChildProcess("todo", ["--db", database.path, "--remote", remote.path] + arguments).finish()
        }

        @discardableResult
        func succeed(_ arguments: [String]) async throws -> String {
            let result = try await run(arguments)
            #expect(result.status == 0, "\(name) \(arguments): \(result.errors)")
            return result.output
        }

        /// A sync's report (standard output) and progress lines (standard error).
        func sync() async throws -> (report: String, progress: String) {
            let result = try await run(["sync"])
            #expect(result.status == 0, "\(name) sync: \(result.errors)")
            return (result.output, result.errors)
        }

        func lists() async throws -> [[String: Any]] {
            let data = Data(try await succeed(["show", "--json"]).utf8)
            return try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
        }

        /// Each item as `list: title p<priority> done|open @people`, a list without items as `list: (empty)`.
        func summary() async throws -> [String] {
            try await lists().flatMap { list in
                let items = list["items"] as? [[String: Any]] ?? []
                return items.isEmpty
                    ? ["\(list["name"] ?? "?"): (empty)"]
                    : items.map { item in
                        let people = (item["people"] as? [String] ?? []).map { " @" + $0 }.joined()
                        return "\(list["name"] ?? "?"): \(item["title"] ?? "?") p\(item["priority"] ?? "?") "
                            + ((item["done"] as? Bool) == true ? "done" : "open") + people
                    }
            }
        }
    }

    static func devices(in directory: TemporaryDirectory) -> (Device, Device) {
        let remote = directory.subdirectory("shared")
        return (
            Device(name: "A", database: directory.url.appendingPathComponent("a.sqlite"), remote: remote),
            Device(name: "B", database: directory.url.appendingPathComponent("b.sqlite"), remote: remote)
        )
    }

    @Test(
        "Two devices converge: lists, items and assignments; concurrent edits follow the app's rule and the delete policies"
    )
    func twoDevices() async throws {
        let directory = TemporaryDirectory()
        let (a, b) = Self.devices(in: directory)
        let milk = try await a.succeed(["add", "Buy milk", "--list", "Groceries", "--priority", "1"])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let call = try await a.succeed(["add", "Call Bob"]).trimmingCharacters(in: .whitespacesAndNewlines)
        try await a.succeed(["assign", String(milk.prefix(8)), "Ann"])  // an ID's first characters name the item
        let first = try await a.sync()
        // Two lists, two items, one person, one assignment.
        #expect(first.report.hasPrefix("sent 6 change(s)"), "\(first.report)")
        #expect(
            first.progress.contains("publishing this device's changes") && first.progress.contains("done in"),
            "\(first.progress)")
        let joined = try await b.sync()
        #expect(joined.progress.contains("applying change set 1 of 1 (6 changes)"), "\(joined.progress)")
        #expect(try await b.summary() == ["Groceries: Buy milk p1 open @Ann", "Inbox: Call Bob p0 open"])

        // The same item edited on both devices before either syncs.
        try await a.succeed(["done", milk])
        try await b.succeed(["done", milk])
        try await b.succeed(["undone", milk])  // B's later write says open: the app's rule keeps it done
        try await a.succeed(["prioritize", milk, "3"])
        try await b.succeed(["prioritize", milk, "5"])  // the higher priority wins, whoever wrote it
        try await a.succeed(["rename", milk, "Buy milk today"])
        try await b.succeed(["rename", milk, "Buy oat milk"])  // the later title wins (last writer wins)
        // A deleted item stays deleted, even though B renames it at the same time.
        try await a.succeed(["delete", call])
        try await b.succeed(["rename", call, "Call Bob back"])
        _ = try await a.sync()
        let settled = try await b.sync()
        let id = String(milk.prefix(8))
        #expect(settled.report.contains("items \(id) done: remote value taken (the app's rule)"), "\(settled.report)")
        #expect(settled.report.contains("items \(id) priority: local value kept (the app's rule)"), "\(settled.report)")
        #expect(settled.report.contains("items \(id) title: local value kept (last writer wins)"), "\(settled.report)")
        _ = try await a.sync()
        #expect(try await a.summary() == ["Groceries: Buy oat milk p5 done @Ann", "Inbox: (empty)"])
        #expect(try await b.summary() == ["Groceries: Buy oat milk p5 done @Ann", "Inbox: (empty)"])

        // Assignments follow the newer write: assigning Ann again after A took her off brings the row back.
        try await a.succeed(["unassign", milk, "Ann"])
        _ = try await a.sync()
        _ = try await b.sync()
        #expect(try await b.summary() == ["Groceries: Buy oat milk p5 done", "Inbox: (empty)"])
        try await b.succeed(["assign", milk, "Ann"])
        _ = try await b.sync()
        _ = try await a.sync()
        #expect(try await a.summary() == ["Groceries: Buy oat milk p5 done @Ann", "Inbox: (empty)"])
        #expect(try Self.rows(of: a.database) == Self.rows(of: b.database))
    }

    @Test("Local commands work without the shared folder; sync without it is one line on stderr and exit 1")
    func withoutSharedFolder() async throws {
        let directory = TemporaryDirectory()
        let away = Device(
            name: "A", database: directory.url.appendingPathComponent("a.sqlite"),
            remote: directory.url.appendingPathComponent("not mounted"))
        let id = try await away.succeed(["add", "Water plants"]).trimmingCharacters(in: .whitespacesAndNewlines)
        try await away.succeed(["done", id])
        #expect(try await away.summary() == ["Inbox: Water plants p0 done"])
        let sync = try await away.run(["sync"])
        #expect(sync.status == 1)
        #expect(sync.errors.hasPrefix("todo: ") && sync.errors.split(separator: "\n").count == 1, "\(sync.errors)")
        let unknown = try await away.run(["done", "no-such-item"])
        #expect(unknown.status == 1 && unknown.errors == "todo: no item with ID no-such-item\n", "\(unknown.errors)")
    }

    @Test("The README's todo block runs as written; a second device then sees the item done and assigned")
    func readmeBlock() async throws {
        let directory = TemporaryDirectory()
        let (_, script) = try readmeShellScript(
            file: "Examples/Todo/README.md", blocks: 1, tool: "todo", scratch: directory.url)
        let result = try Subprocess.run("/bin/bash", ["-e", "-c", script])
        #expect(result.status == 0, "\(result.output)\n\(result.errors)")
        #expect(result.output.contains("[x]") && result.output.contains("Buy milk  p1  @Ann"), "\(result.output)")
        let laptop = Device(
            name: "laptop", database: directory.url.appendingPathComponent("laptop.sqlite"),
            remote: directory.url.appendingPathComponent("shared"))
        _ = try await laptop.sync()
        #expect(try await laptop.summary() == ["Groceries: Buy milk p1 done @Ann"])
    }

    /// Every row of every synced table, in order: what two converged devices hold alike.
    static func rows(of database: URL) throws -> [Row] {
        try DatabaseQueue(path: database.path).read { db in
            try ["lists", "items", "people", "assignments"].flatMap { table in
                try Row.fetchAll(db, sql: "SELECT * FROM \(table) ORDER BY id")
            }
        }
    }
}
