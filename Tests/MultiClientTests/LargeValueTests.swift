import Foundation
import GRDB
import TestProcesses
import Testing

@testable import FolderSync
@testable import TestSupport

/// Large values in an app's own columns, read without loading them whole.
@Suite("Large values")
struct LargeValueTests {
    @Test("valuePrefix reads the first bytes and the size of a TEXT or BLOB value; a table without rowid is read whole")
    func prefixAndSize() async throws {
        let directory = TemporaryDirectory()
        let store = try GRDBStore(
            path: directory.url.appendingPathComponent("d.sqlite").path, tables: [SyncedTable("files")]
        ) { db in
            try db.execute(
                sql: "CREATE TABLE IF NOT EXISTS files(id TEXT PRIMARY KEY NOT NULL, text TEXT, data BLOB, n INTEGER)")
            try db.execute(
                sql: "CREATE TABLE IF NOT EXISTS compact(id TEXT PRIMARY KEY NOT NULL, data BLOB) WITHOUT ROWID")
        }
        let text = "first line\n" + String(repeating: "é", count: 2_000_000)
        let data = Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try await store.database.write { db in
            try db.execute(sql: "INSERT INTO files(id, text, data, n) VALUES ('f', ?, ?, 1)", arguments: [text, data])
            try db.execute(sql: "INSERT INTO compact(id, data) VALUES ('c', ?)", arguments: [data])
        }
        try await store.database.read { db in
            let textPrefix = try #require(
                try GRDBStore.valuePrefix(db, table: "files", column: "text", key: "f", maxBytes: 10))
            #expect(textPrefix.prefix == Data("first line".utf8) && textPrefix.byteCount == text.utf8.count)
            let blob = try #require(
                try GRDBStore.valuePrefix(db, table: "files", column: "data", key: "f", maxBytes: 1 << 30))
            #expect(blob.prefix == data && blob.byteCount == data.count)
            #expect(
                try GRDBStore.valuePrefix(db, table: "files", column: "n", key: "f", maxBytes: 4) == nil, "an integer")
            #expect(
                try GRDBStore.valuePrefix(db, table: "files", column: "text", key: "none", maxBytes: 4) == nil,
                "no such row")
            let compact = try #require(
                try GRDBStore.valuePrefix(db, table: "compact", column: "data", key: "c", maxBytes: 3))
            #expect(compact.prefix == data.prefix(3) && compact.byteCount == data.count)
        }
    }

    @Test("notes list shows a large note as its first line and its size; --json keeps it whole")
    func notesListShowsTheFirstLine() async throws {
        let directory = TemporaryDirectory()
        let device = NotesToolTests.Device(
            database: directory.url.appendingPathComponent("a.sqlite"), remote: directory.subdirectory("shared"))
        let body = "Shopping list\n" + String(repeating: "eggs, milk, bread\n", count: 5_000)
        let id = try await device.succeed(["add", body]).trimmingCharacters(in: .whitespacesAndNewlines)
        try await device.succeed(["add", "short\nnote"])
        let listing = try await device.succeed(["list"])
        #expect(listing.contains("\(id)  Shopping list … (\(body.utf8.count) bytes)"), "\(listing.prefix(300))")
        #expect(listing.contains("short ⏎ note"))
        let json = try await device.succeed(["list", "--json"])
        #expect(json.contains("eggs, milk, bread\\neggs"))
    }
}
