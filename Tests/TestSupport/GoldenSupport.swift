import Crypto
import Foundation
import GRDB
import Testing

@_spi(Tooling) @_spi(ModelAdapter) @testable import FolderSync

/// Where the golden files live, and the fixed inputs they were written with.
enum Golden {
    static let root = repositoryRoot.appendingPathComponent("RemoteLayouts/v1/golden/fixtures")

    static let clientA = "AAAAAAAA-AAAA-4AAA-8AAA-AAAAAAAAAAAA"
    static let clientB = "BBBBBBBB-BBBB-4BBB-8BBB-BBBBBBBBBBBB"
    /// The client that reads golden files in tests: neither of their writers.
    static let clientC = "CCCCCCCC-CCCC-4CCC-8CCC-CCCCCCCCCCCC"
    static let document = "DDDDDDDD-DDDD-4DDD-8DDD-DDDDDDDDDDDD"
    /// 2026-01-02T03:04:05Z, the clock of every golden file.
    static let date = Date(timeIntervalSince1970: 1_767_323_045)
    static let baseMilliseconds: UInt64 = 1_767_323_045_000

    static func timestamp(_ offset: UInt64, _ counter: UInt16 = 0) -> HybridTimestamp {
        HybridTimestamp(milliseconds: baseMilliseconds + offset, counter: counter)
    }

    /// `FOLDERSYNC_RECORD_NEW_GOLDEN=1` writes the golden files of the catalog that do not exist yet (a new format
    /// version's); it never rewrites one that exists.
    static var recordingNew: Bool { ProcessInfo.processInfo.environment["FOLDERSYNC_RECORD_NEW_GOLDEN"] == "1" }

    static func url(_ path: String) -> URL { root.appendingPathComponent(path) }

    static func data(_ path: String) throws -> Data { try Data(contentsOf: url(path)) }

    /// The tables of the golden stores: notes (delete wins), tags (last writer wins), and, from schema 2, `due`.
    static let tables = [SyncedTable("notes"), SyncedTable("tags", deletePolicy: .lastWriterWins)]

    static func openStore(
        _ url: URL, schemaVersion: Int = 1, migrate extra: @escaping (Database) throws -> Void = { _ in }
    ) throws -> GRDBStore {
        try GRDBStore(path: url.path, tables: tables, schemaVersion: schemaVersion, now: { date }) { db in
            try db.execute(
                sql:
                    "CREATE TABLE IF NOT EXISTS notes(id TEXT PRIMARY KEY NOT NULL, title TEXT, n INTEGER, x REAL, b BLOB)"
            )
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS tags(id TEXT PRIMARY KEY NOT NULL, name TEXT)")
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS app_settings(key TEXT PRIMARY KEY NOT NULL, value TEXT)")
            if schemaVersion >= 2, try !db.columns(in: "notes").contains(where: { $0.name == "due" }) {
                try db.execute(sql: "ALTER TABLE notes ADD COLUMN due INTEGER")
            }
            try extra(db)
        }
    }

    /// Copies a golden file into `directory` (tests never open the checked-in file itself) and returns the copy.
    static func copy(_ path: String, into directory: URL, as name: String? = nil) throws -> URL {
        let target = directory.appendingPathComponent(name ?? (path as NSString).lastPathComponent)
        try? FileManager.default.removeItem(at: target)
        try FileManager.default.copyItem(at: url(path), to: target)
        return target
    }
}

// MARK: The neutral dump

/// A store's synced data and bookkeeping as text, one fact per line, sorted: the form every golden
/// `*.expected.txt` is written in, by the writer of its version (so that a store of any bookkeeping version
/// can be compared with what today's code reads from it).
///
/// ```
/// row|<table>|<column>=<value>|…            every column of every synced row (n, i:<int>, r:<hex bits>, t:<text>, b:<hex>)
/// reg|<table>|<syncID>|<column>|<hlc>|<client or ->  every register
/// tomb|<table>|<syncID>|<hlc>|<client or ->          every tombstone
/// shadow|<table>|<syncID>|<column>|<value>           values kept for deleted rows of last-writer-wins tables
/// mark|<table>|<syncID>|<staged in or 0>|<name>      local store only: pending and staged marks (`#all` as each column)
///
/// A delete not settled yet (bookkeeping version 9) is written as it is once settled, as earlier versions wrote it:
/// its tombstone, no register, the mark `#deleted`.
/// ledger|<client>|<sequence>|<change set ID>         local store only
/// local|<key>|<value>                                local store only: the app's own table, left alone
/// state|nextSequence=…|publishedSequence=…|hasBootstrapped=…
/// ```
enum NeutralDump {
    static func dump(_ url: URL, full: Bool) throws -> String {
        let queue = try DatabaseQueue(path: url.path)
        defer { try? queue.close() }
        return try queue.read { try dump($0, full: full) }
    }

    static func dump(_ db: Database, full: Bool) throws -> String {
        var lines: [String] = []
        // A whole store keeps no pending table.
        let deletions =
            try db.tableExists(StoreSchema.pendingChangesTable) ? try StoreSchema.unsettledDeletions(db) : []
        let unsettled = Dictionary(uniqueKeysWithValues: deletions.map { ("\($0.table)|\($0.syncID)", $0) })
        for deletion in unsettled.values {
            lines.append("tomb|\(deletion.table)|\(deletion.syncID)|\(deletion.timestamp)|-")
        }
        for table in ["notes", "tags"] {
            let names = try db.columns(in: table).map(\.name)
            for row in try Row.fetchAll(db, sql: "SELECT * FROM \(table)") {
                lines.append(
                    "row|\(table)|" + names.map { "\($0)=" + value(row[$0] as DatabaseValue) }.joined(separator: "|"))
            }
        }
        // Registers in the shape of the file's bookkeeping version (a snapshot of an earlier writer has its shape).
        if try db.columns(in: "foldersync_clocks").contains(where: { $0.name == "col" }) {
            for row in try Row.fetchAll(db, sql: "SELECT tbl, sync_id, col, hlc, client FROM foldersync_clocks") {
                lines.append(
                    "reg|\(row[0] as String)|\(row[1] as String)|\(row[2] as String)|\(UInt64(bitPattern: row[3] as Int64))|\((row[4] as String?) ?? "-")"
                )
            }
        } else {
            let withoutHead = try StoreSchema.identifyUnversionedBookkeeping(db) == 2
            for row in try Row.fetchAll(db, sql: "SELECT tbl, sync_id, stamps FROM foldersync_clocks")
            where unsettled["\(row[0] as String)|\(row[1] as String)"] == nil {
                let registers =
                    withoutHead ? try LegacyRegisters.decodeWithoutHead(row[2]) : try RowRegisters(row[2] as Data?)
                for register in registers.registers {
                    lines.append(
                        "reg|\(row[0] as String)|\(row[1] as String)|\(register.column)|\(register.timestamp)|\(register.client ?? "-")"
                    )
                }
            }
        }
        for row in try Row.fetchAll(db, sql: "SELECT tbl, sync_id, hlc, client FROM foldersync_tombstones") {
            lines.append(
                "tomb|\(row[0] as String)|\(row[1] as String)|\(UInt64(bitPattern: row[2] as Int64))|\((row[3] as String?) ?? "-")"
            )
        }
        for row in try Row.fetchAll(db, sql: "SELECT tbl, sync_id, col, value FROM foldersync_shadow") {
            lines.append(
                "shadow|\(row[0] as String)|\(row[1] as String)|\(row[2] as String)|" + value(row[3] as DatabaseValue))
        }
        guard full else { return lines.sorted().joined(separator: "\n") + "\n" }
        for source in [StoreSchema.pendingChangesTable, StoreSchema.stagedChangesTable] {
            for row in try Row.fetchAll(db, sql: "SELECT tbl, sync_id, staged_in, marks FROM \(source)") {
                // Marks of every column (bookkeeping version 6) are those of each column, as earlier versions wrote
                // them.
                let columns = try db.columns(in: row[0] as String).map(\.name).filter { $0 != "id" }
                var marks = try PendingMarks(row[3] as Data?)
                if marks.deletionTimestamp != nil { marks = PendingMarks([StoreSchema.deletedMarker]) }
                for name in marks.expanded(columns: columns).names {
                    lines.append("mark|\(row[0] as String)|\(row[1] as String)|\(row[2] as Int64)|\(name)")
                }
            }
        }
        for row in try Row.fetchAll(
            db, sql: "SELECT client, sequence, change_set_id FROM \(StoreSchema.appliedChangeSetsTable)")
        {
            lines.append("ledger|\(row[0] as String)|\(row[1] as Int64)|\(row[2] as String)")
        }
        for row in try Row.fetchAll(db, sql: "SELECT key, value FROM app_settings") {
            lines.append("local|\(row[0] as String)|" + value(row[1] as DatabaseValue))
        }
        if let data = try Data.fetchOne(db, sql: "SELECT value FROM foldersync_meta WHERE key = 'state'") {
            let state = try JSONDecoder().decode(LocalSyncState.self, from: data)
            lines.append(
                "state|nextSequence=\(state.progress.nextSequence)|publishedSequence=\(state.progress.publishedSequence)|hasBootstrapped=\(state.progress.hasBootstrapped)"
            )
        }
        return lines.sorted().joined(separator: "\n") + "\n"
    }

    /// Only the `row|` lines of a dump: what an app sees.
    static func rows(_ dump: String) -> [String] {
        dump.split(separator: "\n").map(String.init).filter { $0.hasPrefix("row|") }
    }

    static func value(_ v: DatabaseValue) -> String {
        switch v.storage {
        case .null: "n"
        case .int64(let i): "i:\(i)"
        case .double(let d): "r:" + String(d.bitPattern, radix: 16)
        case .string(let s): "t:" + escape(s)
        case .blob(let b): "b:" + b.map { String(format: "%02x", $0) }.joined()
        }
    }

    static func value(_ v: SyncValue) -> String { value(v.databaseValue) }

    static func escape(_ s: String) -> String {
        var result = ""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "%": result += "%25"
            case "|": result += "%7C"
            case "\n": result += "%0A"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// The `row|` line of a row of `notes` or `tags` whose columns hold `values` (missing ones are NULL).
    static func row(_ table: String, _ id: String, _ values: [String: SyncValue]) -> String {
        let names = table == "notes" ? ["title", "n", "x", "b"] : ["name"]
        return "row|\(table)|id=t:\(escape(id))|"
            + names.map { "\($0)=" + value(values[$0] ?? .null) }.joined(separator: "|")
    }
}

/// The SHA-256 of a whole file, WAL and shared-memory files included, and which of them exist.
func storeFingerprint(_ url: URL) throws -> [String: Data?] {
    var result: [String: Data?] = [:]
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let path = url.path + suffix
        result[suffix] =
            FileManager.default.fileExists(atPath: path)
            ? Data(SHA256.hash(data: try Data(contentsOf: URL(fileURLWithPath: path)))) : nil
    }
    return result
}
