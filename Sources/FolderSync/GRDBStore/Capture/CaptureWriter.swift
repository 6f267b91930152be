import Foundation
import GRDB
import GRDBSQLite

/// The bookkeeping a captured write makes, run from inside the app's statement by the one function each
/// change-capture trigger calls (``StoreSchema/captureFunction(_:)`` of `insert`, `update`, `delete`).
///
/// Why not SQL in the triggers, as before: SQLite compiles a table's trigger programs into every statement prepared
/// on it, and an app preparing its statements again for each write (GRDB's `execute(sql:)`) paid that compilation at
/// every write, which cost more than the write itself (most for an update, whose trigger names every column).
/// A trigger that calls one function compiles in a few microseconds; the
/// function runs statements prepared once per connection (GRDB's cache of the connection, which finalizes them
/// when it closes). SQLite supports statements run from inside a function of the same connection; they are part of
/// the app's statement and transaction: a capture that fails takes back the app's whole statement, the rows it
/// wrote before included, and leaves the app's change count and last row ID alone (`CaptureWriterTests`).
///
/// The BLOBs written are those of bookkeeping version 9: registers in version 2 (``RowRegisters/encoded``), a new
/// row's marks `#created #all`, a deleted row's of a delete-wins table `#deleted #at=T` (``PendingMarks``). One
/// instance per connection: SQLite calls a connection's functions one at a time.
final class CaptureWriter {
    /// The connection the functions belong to; it outlives them (SQLite destroys them as it closes), and a strong
    /// reference would keep it open through its own function.
    private unowned(unsafe) let db: Database
    private let buffers: CaptureBuffers
    /// False while remote changes are applied, so that they are not echoed back.
    private let capturing: Locked<Bool>
    private let clock: StoreClock
    private let now: @Sendable () -> Date
    // Scratch space reused from row to row. Only this connection's functions touch it, one call at a time: no
    // exclusivity check per access (they were a tenth of the Swift side of a captured row).
    @exclusivity(unchecked) private var names: [UnsafeRawBufferPointer] = []
    private let statements = Query.allCases.map { _ in WeakStatement() }
    /// The pending marks of a new row.
    private let createdWithEveryColumn = [UInt8](
        PendingMarks([StoreSchema.createdMarker, StoreSchema.allColumnsMarker]).encoded)
    /// The marks of the last deleted row of a delete-wins table: ``PendingMarks/deletion(at:)``.
    @exclusivity(unchecked) private var deletion: [UInt8] = []

    init(
        _ db: Database, buffers: CaptureBuffers, capturing: Locked<Bool>, clock: StoreClock,
        now: @escaping @Sendable () -> Date
    ) {
        self.db = db
        self.buffers = buffers
        self.capturing = capturing
        self.clock = clock
        self.now = now
    }

    /// The insert capture(table, sync ID, last writer wins, column…): a new row, every column written now.
    func insert(_ arguments: FunctionArguments) throws {
        guard capturing.current else { return }
        let (table, syncID) = (arguments.values![0], arguments.values![1])
        let lastWriterWins = sqlite3_value_int(arguments.values![2]) != 0
        names.removeAll(keepingCapacity: true)
        for index in 3..<max(3, arguments.count) { if let name = arguments.text(index) { names.append(name) } }
        if lastWriterWins {
            // The row is back: the values its delete kept are forgotten.
            try run(.deleteShadow, table, syncID)
            // Last writer wins keeps a deleted row's registers: a row inserted again has them.
            try stamp(table, syncID, names[...], expectingNone: false)
        } else {
            // Delete wins refuses a deleted row's sync ID; the registers of a row it replaces (INSERT OR REPLACE) are
            // rewritten.
            try stampNewRow(table, syncID)
        }
        // Marked created, every column with it; under last writer wins a delete not yet staged is forgotten.
        try rewrite(Self.pending, table, syncID, expectingNone: true) { existing, result in
            guard let existing else { return createdWithEveryColumn.withUnsafeBytes(result) }
            var marks = try PendingMarks(Data(existing))
            // A delete not settled yet has no tombstone: its marks say the sync ID is a deleted row's.
            if !lastWriterWins, marks.deletionTimestamp != nil { throw CaptureRefusal.reusedSyncID }
            if lastWriterWins { marks.remove(StoreSchema.deletedMarker) }
            marks.insert(StoreSchema.createdMarker)
            marks.insert(StoreSchema.allColumnsMarker)
            marks.encoded.withUnsafeBytes(result)
        }
    }

    /// The update capture(table, sync ID, sync ID changed, column, changed, …): the columns whose value changed
    /// written now.
    ///
    /// The triggers of the version before (`e578d01`) refused a changed sync ID in SQL and called this without the
    /// third argument; a store keeps them until it is opened, so the app's migration, which runs first, writes
    /// through them. Their third argument is a column's name (text), where today's is a number.
    func update(_ arguments: FunctionArguments) throws {
        let firstColumn = arguments.count > 2 && sqlite3_value_type(arguments.values![2]) == SQLITE_TEXT ? 2 : 3
        guard firstColumn == 2 || sqlite3_value_int(arguments.values![2]) == 0 else {
            throw CaptureRefusal.changedSyncID
        }
        guard capturing.current else { return }
        let (table, syncID) = (arguments.values![0], arguments.values![1])
        names.removeAll(keepingCapacity: true)
        for index in stride(from: firstColumn, to: arguments.count - 1, by: 2)
        where sqlite3_value_int(arguments.values![index + 1]) != 0 {
            if let name = arguments.text(index) { names.append(name) }
        }
        guard !names.isEmpty else { return }
        try rewrite(Self.pending, table, syncID, expectingNone: false) { existing, result in
            try buffers.mark(existing ?? UnsafeRawBufferPointer(start: nil, count: 0), names: names[...], result)
        }
        try stamp(table, syncID, names[...], expectingNone: false)
    }

    /// The delete capture(table, sync ID, last writer wins, column, old value, …): the row is gone.
    func delete(_ arguments: FunctionArguments) throws {
        guard capturing.current else { return }
        let (table, syncID) = (arguments.values![0], arguments.values![1])
        let lastWriterWins = sqlite3_value_int(arguments.values![2]) != 0
        // Delete wins: one write, the row's marks replaced by the delete and its time (writes to the row not yet
        // staged die with it); its tombstone and the removal of its registers wait until it is settled, outside the
        // app's transaction (``GRDBStore/settleDeletions(_:)``): each write more cost half a plain delete.
        guard lastWriterWins else {
            let statement = try prepared(.writeMarks, table)
            bind(statement, syncID)
            deletion.removeAll(keepingCapacity: true)
            PendingMarks.appendDeletion(at: try clock.tick(now: now()).rawValue, to: &deletion)
            deletion.withUnsafeBytes { bind(statement, blob: $0) }
            return try execute(statement)
        }
        // Last writer wins keeps a deleted row's values and registers, so that a newer update can bring it back
        // whole, and its writes not yet staged travel with the delete.
        for index in stride(from: 3, to: arguments.count - 1, by: 2) {
            try run(.writeShadow, table, syncID, arguments.values![index], arguments.values![index + 1])
        }
        try rewrite(Self.pending, table, syncID, expectingNone: false) { existing, result in
            var marks = try PendingMarks(existing.map { Data($0) })
            marks.remove(StoreSchema.createdMarker)
            marks.insert(StoreSchema.deletedMarker)
            marks.encoded.withUnsafeBytes(result)
        }
        let statement = try prepared(.writeTombstone, table)
        bind(statement, syncID)
        sqlite3_bind_int64(statement, 3, Int64(bitPattern: try clock.tick(now: now()).rawValue))
        try execute(statement)
    }

    // MARK: The statements

    /// Every statement a capture runs: a row's table name and sync ID are `?1` and `?2`.
    private enum Query: Int, CaseIterable {
        case insertMarks, rewriteMarks, writeMarks, insertStamps, insertStampsUnlessDeleted, rewriteStamps
        case findTombstone, writeTombstone, deleteShadow, writeShadow

        /// A bookkeeping table whose row per synced row holds one BLOB: the table, its key's columns, their values
        /// (`?1`, `?2`, …), the BLOB's column.
        private typealias Target = (table: String, key: String, values: String, column: String)

        var sql: String {
            let pending: Target = (
                table: StoreSchema.pendingChangesTable, key: "tbl, sync_id, staged_in", values: "?1, ?2, 0",
                column: "marks"
            )
            let clocks: Target = (
                table: StoreSchema.clocksTable, key: "tbl, sync_id", values: "?1, ?2", column: "stamps"
            )
            switch self {
            // The row not yet staged is the one with staged_in 0.
            case .insertMarks: return Self.insertIfAbsent(pending)
            case .rewriteMarks:
                return
                    "UPDATE \(pending.table) SET marks = foldersync_rewritten(marks) WHERE tbl = ?1 AND sync_id = ?2 AND staged_in = 0"
            case .writeMarks: return Self.upsert(pending)
            case .insertStamps: return Self.insertIfAbsent(clocks)
            case .insertStampsUnlessDeleted:
                // A SELECT with a WHERE clause before the upsert clause (SQLite's parsing needs one).
                return """
                    INSERT INTO \(clocks.table)(\(clocks.key), \(clocks.column)) SELECT ?1, ?2, ?3
                        WHERE NOT EXISTS (SELECT 1 FROM \(StoreSchema.tombstonesTable) WHERE tbl = ?1 AND sync_id = ?2)
                        ON CONFLICT(\(clocks.key)) DO NOTHING
                    """
            case .findTombstone: return "SELECT 1 FROM \(StoreSchema.tombstonesTable) WHERE tbl = ?1 AND sync_id = ?2"
            case .rewriteStamps:
                return
                    "UPDATE \(clocks.table) SET stamps = foldersync_rewritten(stamps) WHERE tbl = ?1 AND sync_id = ?2"
            case .writeTombstone:
                return """
                    INSERT INTO \(StoreSchema.tombstonesTable)(tbl, sync_id, hlc, client) VALUES (?1, ?2, ?3, NULL)
                        ON CONFLICT(tbl, sync_id) DO UPDATE SET hlc = excluded.hlc, client = excluded.client
                    """
            case .deleteShadow: return "DELETE FROM \(StoreSchema.shadowTable) WHERE tbl = ?1 AND sync_id = ?2"
            case .writeShadow:
                return """
                    INSERT INTO \(StoreSchema.shadowTable)(tbl, sync_id, col, value) VALUES (?1, ?2, ?3, ?4)
                        ON CONFLICT(tbl, sync_id, col) DO UPDATE SET value = excluded.value
                    """
            }
        }

        /// Writes the BLOB `?3` when the row has none; does nothing otherwise.
        private static func insertIfAbsent(_ t: Target) -> String {
            "INSERT INTO \(t.table)(\(t.key), \(t.column)) VALUES (\(t.values), ?3) ON CONFLICT(\(t.key)) DO NOTHING"
        }

        /// Writes the BLOB `?3`. Upserts, not INSERT OR REPLACE: an app's statement with its own conflict clause
        /// overrides the conflict policy of the statements run inside it, not their upserts.
        private static func upsert(_ t: Target) -> String {
            "INSERT INTO \(t.table)(\(t.key), \(t.column)) VALUES (\(t.values), ?3) ON CONFLICT(\(t.key)) DO UPDATE SET \(t.column) = excluded.\(t.column)"
        }
    }

    /// One BLOB of a synced row's bookkeeping: how it is written when the row has none, and rewritten in place.
    private struct Blob {
        let insertIfAbsent: Query, rewrite: Query
    }

    private static let pending = Blob(insertIfAbsent: .insertMarks, rewrite: .rewriteMarks)
    private static let registers = Blob(insertIfAbsent: .insertStamps, rewrite: .rewriteStamps)
    /// A new row's registers under delete wins: not inserted for a deleted row's sync ID either.
    private static let newRowRegisters = Blob(insertIfAbsent: .insertStampsUnlessDeleted, rewrite: .rewriteStamps)

    /// Writes the registers of a new row of a delete-wins table, every column written now, unless its sync ID belongs
    /// to a deleted row: one statement inserts them unless the row has registers or a tombstone; only then is the
    /// tombstone looked for again (a refusal), or the registers rewritten (an `INSERT OR REPLACE` of a row).
    private func stampNewRow(_ table: OpaquePointer?, _ syncID: OpaquePointer?) throws {
        if !names.isEmpty,
            try insert(
                Self.newRowRegisters, table, syncID,
                { existing, result in
                    try buffers.stamp(
                        existing ?? UnsafeRawBufferPointer(start: nil, count: 0), names: names[...], clock: clock,
                        now: now, result)
                })
        {
            return
        }
        let finder = try prepared(.findTombstone, table)
        bind(finder, syncID)
        defer { sqlite3_reset(finder) }
        switch sqlite3_step(finder) {
        case SQLITE_ROW: throw CaptureRefusal.reusedSyncID
        case SQLITE_DONE: break
        case let code: throw NestedStatementError(db, code)
        }
        try stamp(table, syncID, names[...], expectingNone: false)
    }

    /// Writes the row's registers with `columns` written now (none: the registers are left alone).
    private func stamp(
        _ table: OpaquePointer?, _ syncID: OpaquePointer?, _ columns: ArraySlice<UnsafeRawBufferPointer>,
        expectingNone: Bool
    ) throws {
        guard !columns.isEmpty else { return }
        try rewrite(Self.registers, table, syncID, expectingNone: expectingNone) { existing, result in
            try buffers.stamp(
                existing ?? UnsafeRawBufferPointer(start: nil, count: 0), names: columns, clock: clock, now: now, result
            )
        }
    }

    /// What a BLOB of the row becomes: gets the stored value (`nil`: none) and hands the new one on.
    typealias Change = (UnsafeRawBufferPointer?, (UnsafeRawBufferPointer) -> Void) throws -> Void

    /// The change the running rewrite statement applies, through `foldersync_rewritten` (``rewritten(_:_:)``).
    @exclusivity(unchecked) private var change: Change?

    /// Writes what `change` makes of the row's `blob`, in one statement when the guess is right: `expectingNone`,
    /// a new row's, inserted when the row has none; otherwise rewritten in place, where it is (the stored value
    /// read and replaced by one B-tree search), and inserted only when the row had none. A guess that is wrong costs
    /// a statement; for registers it also skips the timestamps of the stamp made for nothing (an `INSERT OR REPLACE`
    /// of a row under delete wins: still newer than everything before, as stamps must be).
    private func rewrite(
        _ blob: Blob, _ table: OpaquePointer?, _ syncID: OpaquePointer?, expectingNone: Bool,
        _ change: Change
    ) throws {
        if expectingNone, try insert(blob, table, syncID, change) { return }
        let rewriter = try prepared(blob.rewrite, table)
        bind(rewriter, syncID)
        try withoutActuallyEscaping(change) { change in
            self.change = change
            defer { self.change = nil }
            try execute(rewriter)
        }
        if sqlite3_changes(sqlite3_db_handle(rewriter)) > 0 || expectingNone { return }
        _ = try insert(blob, table, syncID, change)
    }

    /// Inserts what `change` makes of no value, unless the row has one: whether it did.
    private func insert(_ blob: Blob, _ table: OpaquePointer?, _ syncID: OpaquePointer?, _ change: Change) throws
        -> Bool
    {
        let inserter = try prepared(blob.insertIfAbsent, table)
        bind(inserter, syncID)
        try change(nil) { bind(inserter, blob: $0) }
        try execute(inserter)
        return sqlite3_changes(sqlite3_db_handle(inserter)) > 0
    }

    /// foldersync_rewritten(value): what the running rewrite makes of the stored value; called only by the rewrite
    /// statements, from inside ``rewrite(_:_:_:expectingNone:_:)``.
    func rewritten(_ arguments: FunctionArguments, _ result: (UnsafeRawBufferPointer) -> Void) throws {
        guard let change else {
            throw FolderSyncError(.localStoreFailed, "foldersync_rewritten runs only inside a captured write")
        }
        try change(arguments.bytes(0), result)
    }

    /// Binds the row's sync ID, `?2` (the table, `?1`, is bound by ``prepared(_:_:)``).
    private func bind(_ statement: OpaquePointer?, _ syncID: OpaquePointer?) {
        sqlite3_bind_value(statement, 2, syncID)
    }

    /// Binds the BLOB `?3`; SQLite copies the bytes (SQLITE_TRANSIENT), which live in a buffer the next call reuses.
    private func bind(_ statement: OpaquePointer?, blob bytes: UnsafeRawBufferPointer) {
        sqlite3_bind_blob(
            statement, 3, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(bytes.count), Self.transient)
    }

    /// Runs `query` for the row (`?1`, `?2`).
    private func run(_ query: Query, _ table: OpaquePointer?, _ syncID: OpaquePointer?) throws {
        let statement = try prepared(query, table)
        bind(statement, syncID)
        try execute(statement)
    }

    /// Runs `query` for the row with two more values (`?3`, `?4`).
    private func run(
        _ query: Query, _ table: OpaquePointer?, _ syncID: OpaquePointer?, _ third: OpaquePointer?,
        _ fourth: OpaquePointer?
    ) throws {
        let statement = try prepared(query, table)
        bind(statement, syncID)
        sqlite3_bind_value(statement, 3, third)
        sqlite3_bind_value(statement, 4, fourth)
        try execute(statement)
    }

    private func execute(_ statement: OpaquePointer?) throws {
        defer { sqlite3_reset(statement) }
        let code = sqlite3_step(statement)
        guard code == SQLITE_DONE || code == SQLITE_ROW else { throw NestedStatementError(db, code) }
    }

    /// The statement, prepared once per connection and kept in GRDB's cache of the connection, which finalizes it
    /// when the connection closes, with the table's name bound (`?1`). Held weakly, so that GRDB stays its only owner:
    /// finding it again by its SQL (hashing a hundred characters per statement) was a tenth of the capture functions'
    /// own time. The table's name is bound again only when it is another table's: binding takes the connection's
    /// lock, and a bulk write captures one table's rows in a row.
    private func prepared(_ query: Query, _ table: OpaquePointer?) throws -> OpaquePointer? {
        let cached = statements[query.rawValue]
        let statement: OpaquePointer?
        if let known = cached.statement {
            statement = known.sqliteStatement
        } else {
            let prepared = try db.cachedStatement(sql: query.sql)
            cached.statement = prepared
            cached.table.removeAll()
            statement = prepared.sqliteStatement
        }
        let name = UnsafeRawBufferPointer(start: sqlite3_value_text(table), count: Int(sqlite3_value_bytes(table)))
        if cached.table.isEmpty || !cached.table.elementsEqual(name) {
            sqlite3_bind_value(statement, 1, table)
            cached.table.removeAll(keepingCapacity: true)
            cached.table.append(contentsOf: name)
        }
        return statement
    }

    private final class WeakStatement {
        weak var statement: Statement?
        /// The name bound to `?1`, when one is.
        @exclusivity(unchecked) var table: [UInt8] = []
    }

    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)
}

/// A write that change capture refuses, with the message and result code (`SQLITE_CONSTRAINT_TRIGGER`) a trigger's
/// `RAISE(ABORT, …)` gave it before the triggers made one call each: SQLite takes back the app's whole statement.
struct CaptureRefusal: Error, CustomStringConvertible {
    let description: String

    /// `SQLITE_CONSTRAINT_TRIGGER` (a macro the C module does not export).
    static let code: Int32 = SQLITE_CONSTRAINT | (7 << 8)

    /// Delete wins: a deleted row's sync ID stays its own.
    static let reusedSyncID = CaptureRefusal(
        description: "FolderSync: this sync ID belongs to a deleted row and cannot be reused")
    /// A synced row's sync ID is what other devices know it by.
    static let changedSyncID = CaptureRefusal(description: "FolderSync: the sync ID of a synced row cannot change")
}

/// A statement run by a capture function failed: its result code becomes the app's statement's, so that a full
/// disk or an I/O error is reported (and rolled back) as SQLite reports it.
struct NestedStatementError: Error, CustomStringConvertible {
    let code: Int32
    let description: String

    init(_ db: Database, _ code: Int32) {
        self.code = code
        description =
            db.sqliteConnection.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
    }
}
