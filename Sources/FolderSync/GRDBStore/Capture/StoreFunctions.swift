import Foundation
import GRDB
import GRDBSQLite

/// The SQL functions the store's own connection defines, which its change-capture triggers call.
///
/// Only that connection defines them: a write through another connection fails rather than going unrecorded, with
/// "no such function: FolderSync tracks this table …", the capture function's name
/// (``StoreSchema/captureFunction(_:)``). The triggers keep each synced row's registers (``RowRegisters``) and
/// pending marks (``PendingMarks``) as one BLOB each, so the packing lives here, in Swift, once.
///
/// The connection does not trust its schema (`trusted_schema = OFF`, ``SQLiteHardening``): a trigger or view may
/// call only functions tagged innocuous. These are registered through SQLite's C API with `SQLITE_INNOCUOUS`
/// (GRDB's `DatabaseFunction` cannot tag them), since FolderSync's own triggers call them. The capture functions
/// write the bookkeeping of the row they are given; nothing but a trigger or a view can call them from the schema
/// (SQLite refuses a function that is not deterministic in an index, a CHECK constraint or a generated column), and
/// a snapshot holding a trigger, or a view the app does not declare, is refused before it is installed
/// (``SnapshotCheck``).
enum StoreFunctions {
    static func install(
        _ db: Database, capturing: Locked<Bool>, clock: StoreClock,
        now: @escaping @Sendable () -> Date
    ) throws {
        // False while remote changes are applied, so that they are not echoed back. Today's triggers do not call it
        // (the capture functions ask themselves); the insert triggers of stores written before bookkeeping version 6
        // do, until the store is opened and its triggers made again (the app's migration runs first).
        try addInPlace(db, "foldersync_capturing", argumentCount: 0, pure: false) { context, _ in
            sqlite3_result_int(context, capturing.current ? 1 : 0)
        }
        // foldersync_rejoined(stamps, column…): the registers with each named column made this client's write,
        // keeping the time it was written (a column without one is written now). A re-join publishes every value
        // again, each with its own time, so that re-joins merge by when values were written, not by who came last.
        try add(db, "foldersync_rejoined", argumentCount: nil, pure: false) { values in
            var registers = try RowRegisters(blob(values.first))
            for value in values.dropFirst() {
                guard let name = String.fromDatabaseValue(value) else { continue }
                registers.set(
                    name, timestamp: try registers[name]?.timestamp ?? clock.tick(now: now()).rawValue, client: nil)
            }
            return registers.encoded
        }
        // The bookkeeping of one captured row (``CaptureWriter``), the one call each change-capture trigger makes:
        // under today's names, and under those of the triggers a store of an earlier version keeps until it is opened.
        let writer = CaptureWriter(db, buffers: CaptureBuffers(), capturing: capturing, clock: clock, now: now)
        for (kind, capture) in [("insert", writer.insert), ("update", writer.update), ("delete", writer.delete)]
            as [(String, (FunctionArguments) throws -> Void)]
        {
            for name in [StoreSchema.captureFunction(kind), StoreSchema.legacyCaptureFunction(kind)] {
                try addInPlace(db, name, argumentCount: nil, pure: false) { context, arguments in
                    try capture(arguments)
                }
            }
        }
        try addInPlace(db, "foldersync_rewritten", argumentCount: 1, pure: false) { context, arguments in
            try writer.rewritten(arguments) { setBlob(context, $0) }
        }
        try addPure(db)
    }

    /// The functions that depend on nothing but their arguments; a snapshot's connection needs them too.
    static func addPure(_ db: Database) throws {
        // foldersync_marked(marks, name): whether `name` is marked.
        try add(db, "foldersync_marked", argumentCount: 2, pure: true) { values in
            guard let name = String.fromDatabaseValue(values[1]) else { return false }
            return try PendingMarks(blob(values[0])).contains(name)
        }
        // foldersync_owned(stamps, client): the registers with this client's named `client`, in the encoding snapshots
        // carry (``RowRegisters/snapshotEncoded``: version 1, as before bookkeeping version 6).
        try add(db, "foldersync_owned", argumentCount: 2, pure: true) { values in
            guard let client = String.fromDatabaseValue(values[1]) else { return values[0] }
            return try RowRegisters(blob(values[0])).owned(by: client).snapshotEncoded
        }
    }

    // MARK: Registration through the C API

    private final class InPlaceBody {
        let run: (OpaquePointer?, FunctionArguments) throws -> Void
        init(_ run: @escaping (OpaquePointer?, FunctionArguments) throws -> Void) { self.run = run }
    }

    /// Registers `body` as the SQL function `name`, tagged innocuous (and deterministic when `pure`); `body` reads
    /// its arguments where SQLite keeps them and sets the result on the context itself.
    private static func addInPlace(
        _ db: Database, _ name: String, argumentCount: Int?, pure: Bool,
        _ body: @escaping (OpaquePointer?, FunctionArguments) throws -> Void
    ) throws {
        try register(
            db, name, argumentCount: argumentCount, pure: pure,
            box: Unmanaged.passRetained(InPlaceBody(body)).toOpaque(),
            call: { context, count, arguments in
                let body = Unmanaged<InPlaceBody>.fromOpaque(sqlite3_user_data(context)!).takeUnretainedValue()
                do {
                    try body.run(context, FunctionArguments(count: Int(count), values: arguments))
                } catch {
                    sqlite3_result_error(context, "\(error)", -1)
                    if let nested = error as? NestedStatementError { sqlite3_result_error_code(context, nested.code) }
                    if error is CaptureRefusal { sqlite3_result_error_code(context, CaptureRefusal.code) }
                }
            },
            release: { pointer in
                if let pointer { Unmanaged<InPlaceBody>.fromOpaque(pointer).release() }
            })
    }

    private final class Body {
        let run: ([DatabaseValue]) throws -> (any DatabaseValueConvertible)?
        init(_ run: @escaping ([DatabaseValue]) throws -> (any DatabaseValueConvertible)?) { self.run = run }
    }

    /// Registers `body` as the SQL function `name`, tagged innocuous (and deterministic when `pure`).
    private static func add(
        _ db: Database, _ name: String, argumentCount: Int?, pure: Bool,
        _ body: @escaping ([DatabaseValue]) throws -> (any DatabaseValueConvertible)?
    ) throws {
        try register(
            db, name, argumentCount: argumentCount, pure: pure, box: Unmanaged.passRetained(Body(body)).toOpaque(),
            call: { context, count, arguments in
                let body = Unmanaged<Body>.fromOpaque(sqlite3_user_data(context)!).takeUnretainedValue()
                let values = (0..<Int(count)).map { StoreFunctions.value(arguments![$0]) }
                do {
                    StoreFunctions.setResult(context, try body.run(values)?.databaseValue ?? .null)
                } catch {
                    sqlite3_result_error(context, "\(error)", -1)
                }
            },
            release: { pointer in
                if let pointer { Unmanaged<Body>.fromOpaque(pointer).release() }
            })
    }

    private static func register(
        _ db: Database, _ name: String, argumentCount: Int?, pure: Bool, box: UnsafeMutableRawPointer,
        call: @escaping @convention(c) (OpaquePointer?, CInt, UnsafeMutablePointer<OpaquePointer?>?) -> Void,
        release: @escaping @convention(c) (UnsafeMutableRawPointer?) -> Void
    ) throws {
        let flags = SQLITE_UTF8 | SQLITE_INNOCUOUS | (pure ? SQLITE_DETERMINISTIC : 0)
        let code = sqlite3_create_function_v2(
            db.sqliteConnection, name, CInt(argumentCount ?? -1), flags, box, call, nil, nil, release)
        guard code == SQLITE_OK else {
            throw FolderSyncError(
                .localStoreFailed, "cannot define SQL function \(name): \(String(cString: sqlite3_errstr(code)))")
        }
    }

    private static func value(_ value: OpaquePointer?) -> DatabaseValue {
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: return sqlite3_value_int64(value).databaseValue
        case SQLITE_FLOAT: return sqlite3_value_double(value).databaseValue
        case SQLITE_TEXT: return String(cString: sqlite3_value_text(value)).databaseValue
        case SQLITE_BLOB:
            let count = Int(sqlite3_value_bytes(value))
            guard count > 0, let bytes = sqlite3_value_blob(value) else { return Data().databaseValue }
            return Data(bytes: bytes, count: count).databaseValue
        default: return .null
        }
    }

    private static func setResult(_ context: OpaquePointer?, _ value: DatabaseValue) {
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        switch value.storage {
        case .null: sqlite3_result_null(context)
        case .int64(let integer): sqlite3_result_int64(context, integer)
        case .double(let double): sqlite3_result_double(context, double)
        case .string(let string): sqlite3_result_text(context, string, -1, transient)
        case .blob(let data): data.withUnsafeBytes { setBlob(context, $0) }
        }
    }

    /// Sets a BLOB result (SQLite copies it).
    static func setBlob(_ context: OpaquePointer?, _ bytes: UnsafeRawBufferPointer) {
        // An empty buffer may have no address, which SQLite would take for NULL.
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return sqlite3_result_zeroblob(context, 0) }
        sqlite3_result_blob(context, base, CInt(bytes.count), unsafeBitCast(-1, to: sqlite3_destructor_type.self))
    }

    private static func blob(_ value: DatabaseValue?) -> Data? {
        value.flatMap { Data.fromDatabaseValue($0) }
    }
}
