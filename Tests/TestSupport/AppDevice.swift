import FolderSync
import Foundation
import GRDB
import Logging
import Testing

/// A device of a GRDB app, set up through the public API only: its store (a queue or a pool, opened with a
/// migrator), its managers on a shared local folder.
struct AppDevice {
    let store: GRDBStore
    let app: ApplicationSyncManager
    let document: DocumentSyncManager

    /// The notes schema as an app's migrator declares it: `notes` synced, `settings` local to the device.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("notes") { db in
            try db.create(table: "notes") { t in
                t.primaryKey("id", .text)
                t.column("body", .text).notNull().defaults(to: "")
            }
            try db.create(table: "settings") { t in
                t.primaryKey("key", .text)
                t.column("value", .text)
            }
        }
        return migrator
    }

    /// Opens `name`'s store in `directory` and registers it with the document on `shared`.
    static func make(
        _ name: String, in directory: TemporaryDirectory, shared: URL, connection: GRDBStore.Connection,
        migrator: DatabaseMigrator = Self.migrator, schemaVersion: Int = 1,
        policy: (inout SyncPolicy) -> Void = { _ in }
    ) async throws -> AppDevice {
        let folder = directory.subdirectory(name)
        let store = try GRDBStore(
            path: folder.appendingPathComponent("notes.sqlite").path, tables: [SyncedTable("notes")],
            schemaVersion: schemaVersion, connection: connection, migrator: migrator)
        return try await register(
            name, store: store, helper: folder.appendingPathComponent("helper"), shared: shared, policy: policy)
    }

    /// Registers `store` as the client `name` of the document on `shared`.
    static func register(
        _ name: String, store: GRDBStore, helper: URL, shared: URL, remote: (any RemoteFileSystem)? = nil,
        policy: (inout SyncPolicy) -> Void = { _ in }
    ) async throws -> AppDevice {
        var environment = SyncEnvironment.live
        environment.logger.logLevel = .error
        let app = ApplicationSyncManager(
            remote: remote ?? FileManagerFileSystem(rootURL: shared), environment: environment)
        try await app.register(
            .init(
                applicationIdentifier: "com.example.notes", clientIdentifier: "client-\(name)",
                clientDescription: name))
        let document = try DocumentSyncManager(
            applicationSyncManager: app,
            configuration: .init(documentIdentifier: "notes", documentDescription: "Notes", helperDirectory: helper),
            store: store)
        var changed = document.policy
        changed.wholeStoreUploadAfterChangeSets = nil
        changed.wholeStoreUploadAfterBytes = nil
        policy(&changed)
        document.policy = changed
        document.remoteDocumentCreationHandler = { _ in true }
        try await document.registerConfigured()
        return AppDevice(store: store, app: app, document: document)
    }

    func write(_ sql: String, _ arguments: StatementArguments = []) throws {
        try store.database.write { try $0.execute(sql: sql, arguments: arguments) }
    }

    /// Every note as `id=body`, by ID.
    func notes() throws -> [String] {
        try store.database.read { db in
            try Row.fetchAll(db, sql: "SELECT id, body FROM notes ORDER BY id").map {
                "\($0["id"] as String)=\($0["body"] as String)"
            }
        }
    }

    @discardableResult
    func sync() async throws -> SyncReport { try await document.synchronize() }
}

/// A transaction observer of one table, as an app's own: counts the transactions that changed it, and reads the
/// table's row count as each commits (in the commit that made the change, on the writer's connection).
final class TableObserver: TransactionObserver, @unchecked Sendable {
    private let table: String
    private let lock = NSLock()
    private var changed = false
    private var commits: [Int] = []

    init(_ table: String) { self.table = table }

    /// The row count at each commit that changed the table, in order.
    var rowCountsAtCommits: [Int] { lock.withLock { commits } }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { eventKind.tableName == table }

    func databaseDidChange() { lock.withLock { changed = true } }

    func databaseDidChange(with event: DatabaseEvent) { lock.withLock { changed = true } }

    func databaseDidCommit(_ db: Database) {
        guard lock.withLock({ changed }) else { return }
        let count = (try? Int.fetchOne(db, sql: "SELECT count(*) FROM \(table.quotedDatabaseIdentifier)")) ?? -1
        lock.withLock {
            changed = false
            commits.append(count)
        }
    }

    func databaseDidRollback(_ db: Database) { lock.withLock { changed = false } }
}

/// The values a `ValueObservation` delivered, awaited one by one with a deadline that only fails the test.
final class ObservedValues<Value: Sendable & Equatable>: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Value] = []
    private var error: (any Error)?
    private var waiters: [(predicate: (Value) -> Bool, continuation: CheckedContinuation<Value?, Never>)] = []
    private var cancellable: AnyDatabaseCancellable?

    init(_ observation: ValueObservation<ValueReducers.Fetch<Value>>, in writer: any DatabaseWriter) {
        cancellable = observation.start(
            in: writer, scheduling: .async(onQueue: DispatchQueue(label: "observed values")),
            onError: { [weak self] error in self?.receive(error: error) },
            onChange: { [weak self] value in self?.receive(value) })
    }

    deinit { cancellable?.cancel() }

    /// Every value delivered so far, the first (the initial fetch) included.
    var delivered: [Value] { lock.withLock { values } }

    private func receive(_ value: Value) {
        let ready = lock.withLock { () -> [CheckedContinuation<Value?, Never>] in
            values.append(value)
            let (met, waiting) = (waiters.filter { $0.predicate(value) }, waiters.filter { !$0.predicate(value) })
            waiters = waiting
            return met.map(\.continuation)
        }
        for continuation in ready { continuation.resume(returning: value) }
    }

    private func receive(error: any Error) {
        let waiting = lock.withLock { () -> [CheckedContinuation<Value?, Never>] in
            self.error = error
            defer { waiters = [] }
            return waiters.map(\.continuation)
        }
        for continuation in waiting { continuation.resume(returning: nil) }
    }

    /// The first value delivered that satisfies `predicate` (already delivered or still to come); fails the test
    /// when none arrives within `timeout`.
    func value(where predicate: @escaping @Sendable (Value) -> Bool, timeout: Duration = .seconds(30)) async throws
        -> Value
    {
        let found = await withTaskGroup(of: Value?.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let now = self.lock.withLock { () -> Value?? in
                        if let match = self.values.first(where: predicate) { return .some(match) }
                        if self.error != nil { return .some(nil) }
                        self.waiters.append((predicate, continuation))
                        return nil
                    }
                    if let now { continuation.resume(returning: now) }
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)  // a deadline for a test that failed, never a synchronisation
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            if first == nil {
                // The deadline passed: the waiting child is let go, so that the group can end.
                let waiting = lock.withLock { () -> [CheckedContinuation<Value?, Never>] in
                    defer { waiters = [] }
                    return waiters.map(\.continuation)
                }
                for continuation in waiting { continuation.resume(returning: nil) }
            }
            return first
        }
        guard let found else { throw ObservationTimeout(delivered: "\(delivered)", error: lock.withLock { error }) }
        return found
    }
}

struct ObservationTimeout: Error, CustomStringConvertible {
    var delivered: String
    var error: (any Error)?
    var description: String {
        "no expected value arrived; delivered: \(delivered)" + (error.map { "; error: \($0)" } ?? "")
    }
}
