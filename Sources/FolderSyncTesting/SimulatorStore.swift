@_spi(ModelAdapter) public import FolderSync
public import Foundation

/// A local store the simulator can write to like an app and inspect like a test: a ``/FolderSync/ModelAdapter`` plus
/// app-side writes.
///
/// ``InMemoryModelAdapter`` conforms directly; a test wraps ``/FolderSync/GRDBStore`` (whose
/// schema lives with the app) to run the same schedules on SQLite.
public protocol SimulatorStore: AnyObject, Sendable {
    /// The adapter handed to the document sync manager.
    var adapter: any ModelAdapter { get }

    /// Inserts a row (columns not given are null), recording the change. Throws for an existing or deleted sync ID.
    func insert(table: String, syncID: String, values: [String: SyncValue]) throws
    /// Changes some columns of a row, recording the changed ones. Returns `false` when the row does not exist.
    @discardableResult
    func update(table: String, syncID: String, values: [String: SyncValue]) throws -> Bool
    /// Deletes a row for good, recording a tombstone. Returns `false` when the row does not exist.
    @discardableResult
    func delete(table: String, syncID: String) throws -> Bool
    /// Every row of every synced table, sorted: two replicas are equal when these are.
    func allRows() throws -> [CanonicalRow]
    /// The last-writer-wins stamp of one column; local writes are reported as `localClient`'s.
    func stamp(of key: ColumnKey, localClient: String) throws -> ChangeStamp?
    /// The stamp of the delete of a row, or `nil` when it was never deleted.
    func deletionStamp(table: String, syncID: String, localClient: String) throws -> ChangeStamp?
    /// The same store as a restarted process would open it: exactly what was committed, nothing in memory.
    func restarted() throws -> any SimulatorStore
}

/// One row in a form every adapter can produce, for comparing replicas.
public struct CanonicalRow: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The row's table.
    public var table: String
    /// The row's sync ID, unique in its table across every replica.
    public var syncID: String
    /// The row's synced columns by name, the sync ID excluded.
    public var values: [String: SyncValue]

    /// A row of `table` with the given sync ID and column values.
    public init(table: String, syncID: String, values: [String: SyncValue]) {
        self.table = table
        self.syncID = syncID
        self.values = values
    }

    public static func < (lhs: CanonicalRow, rhs: CanonicalRow) -> Bool {
        if lhs.table != rhs.table { return utf8Less(lhs.table, rhs.table) }
        if lhs.syncID != rhs.syncID { return utf8Less(lhs.syncID, rhs.syncID) }
        return lhs.description < rhs.description
    }

    /// `table[syncID] a=… b=…`, columns sorted by name.
    public var description: String {
        let columns = values.keys.sorted().map { "\($0)=\(values[$0].map(Self.render) ?? "?")" }
        return "\(table)[\(syncID)] " + columns.joined(separator: " ")
    }

    static func render(_ value: SyncValue) -> String {
        switch value {
        case .null: "NULL"
        case .integer(let v): "\(v)"
        case .real(let v): "\(v)r"
        case .text(let v): String(reflecting: v)
        case .blob(let v): "x'" + v.map { String(format: "%02x", $0) }.joined() + "'"
        }
    }
}

/// SQLite's `BINARY` collation (byte order of UTF-8), so in-memory orderings match `ORDER BY` on text.
func utf8Less(_ lhs: String, _ rhs: String) -> Bool {
    lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
}

/// A ``SimulatorStore`` whose adapter takes whole stores and re-joins (a ``/FolderSync/SnapshottingModelAdapter``).
///
/// The simulator's lifecycle steps need it, and need to know which deletes are still unpublished: those are
/// the deletes a re-join after a remote wipe must keep (invariant 5), while published ones belong to the
/// wiped epoch.
public protocol SnapshottingSimulatorStore: SimulatorStore {
    /// Rows whose delete is recorded locally and not yet published (staged or not).
    func unpublishedDeletions() throws -> Set<RowReference>
    /// Writes a consistent copy of the store into the new file `url`, as a backup would.
    func copy(to url: URL) throws
    /// Closes this store, puts the copy at `url` in its place, and opens it, as a restore from a backup would.
    func restored(from url: URL) throws -> any SimulatorStore
}

/// One row of one table, by sync ID.
public struct RowReference: Hashable, Sendable, CustomStringConvertible {
    /// The row's table.
    public var table: String
    /// The row's sync ID.
    public var syncID: String

    /// The row of `table` with sync ID `syncID`.
    public init(table: String, syncID: String) {
        self.table = table
        self.syncID = syncID
    }

    public var description: String { "\(table)[\(syncID)]" }
}
