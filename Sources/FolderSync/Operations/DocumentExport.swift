public import Foundation
import GRDB

/// Materializes a document's merged data into a new SQLite file, from the remote alone (disaster recovery).
///
/// Starts from the whole store that covers the most, then applies every later change set with the same merge
/// rules as clients, in causal order. Reads the remote and writes nothing to it. Without any whole store, the
/// tables are made from the change sets themselves (columns without declared types). The output holds the
/// synced tables only, without FolderSync's bookkeeping.
public struct DocumentExport: Sendable {
    /// The remote the export reads (nothing is written to it), the document, and the environment. The export
    /// applies the document's change sets as a client of its own, with a fresh identifier and a scratch helper
    /// folder beside the output: the context's client and helper folder are not used.
    public let context: DocumentOperationContext
    var remote: any RemoteFileSystem { context.fileSystem }
    var layout: RemoteLayout { context.layout }
    var documentIdentifier: String { context.documentIdentifier }
    var environment: SyncEnvironment { context.environment }

    /// An export of the document `context` names, ready to ``run(to:)``.
    public init(context: DocumentOperationContext) {
        self.context = context
    }

    /// What an export did.
    public struct Result: Sendable, Hashable {
        /// The manifest of the whole store the export started from; `nil` when it started from the change sets alone.
        public var wholeStore: WholeStoreManifest?
        /// Change sets applied on top of that start.
        public var changeSetsApplied: Int
        /// Rows in each exported table, by table name.
        public var rowCounts: [String: Int]
        /// Things noticed while merging, as a sync would report them.
        public var warnings: [SyncWarning]
    }

    /// Writes the merged document to `output` (which must not exist); the file appears complete or not at all.
    public func run(to output: URL) async throws -> Result {
        guard !FileManager.default.fileExists(atPath: output.path) else {
            throw FolderSyncError(.invalidConfiguration, "the output file exists already", path: output.path)
        }
        guard
            let integrityKey = try await remote.contentsOfDirectoryIfPresent(
                at: layout.integrityKeyDirectory(documentIdentifier)
            )
            .first(where: { $0.kind == .file && !$0.name.hasPrefix(".") })?.name
        else {
            throw FolderSyncError(
                .remoteItemNotFound, "document \(documentIdentifier) has no integrity key",
                path: layout.documentDirectory(documentIdentifier).description)
        }
        let work = output.deletingLastPathComponent().appendingPathComponent(
            TemporaryName.make(for: output.lastPathComponent + ".export"), isDirectory: true)
        try LocalFiles.createDirectory(work)
        defer { try? FileManager.default.removeItem(at: work) }
        let database = work.appendingPathComponent("export.sqlite")
        let exporter = "export-" + environment.makeIdentifier()
        let localLayout = LocalLayout(helperDirectory: work.appendingPathComponent("helper", isDirectory: true))
        try LocalFiles.createDirectory(localLayout.helperDirectory)

        // Tables: from the best whole store's schema, or else from the change sets' names.
        let scratch = try GRDBStore(
            path: work.appendingPathComponent("scratch.sqlite").path, tables: [], schemaVersion: Int.max
        ) { _ in }
        var context = self.context
        context.clientIdentifier = exporter
        context.localLayout = localLayout
        var download = WholeStoreDownloadOperation.Options()
        download.checksSchemaOfCandidates = false
        let probe = WholeStoreDownloadOperation(context: context, store: scratch, options: download)
        let snapshot = work.appendingPathComponent("snapshot.sqlite")
        let manifest = try await probe.bestWholeStore(into: snapshot)
        let schema =
            manifest != nil
            ? try Self.schema(ofSnapshot: snapshot) : try await schemaFromChangeSets(localLayout: localLayout)
        let store = try GRDBStore(path: database.path, tables: schema.tables, schemaVersion: Int.max) { db in
            for statement in schema.creates { try db.execute(sql: statement) }
        }
        if let manifest { try store.restoreSnapshot(from: snapshot, covers: manifest.covers, localClient: exporter) }
        var options = SynchronizationOperation.Options(integrityKey: integrityKey)
        options.isReadOnly = true
        let sync = SynchronizationOperation(context: context, store: store, options: options)
        let report = try await sync.run()
        let counts = try await store.database.write { db in
            for name in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger'") {
                try db.execute(sql: "DROP TRIGGER \(name.quotedDatabaseIdentifier)")
            }
            for name in try String.fetchAll(
                db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'foldersync_%'")
            {
                try db.execute(sql: "DROP TABLE \(name.quotedDatabaseIdentifier)")
            }
            var counts: [String: Int] = [:]
            for table in schema.tables {
                counts[table.name] =
                    try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table.name.quotedDatabaseIdentifier)") ?? 0
            }
            return counts
        }
        try await store.database.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA journal_mode = DELETE")
            try db.execute(sql: "VACUUM INTO ?", arguments: [work.appendingPathComponent("final.sqlite").path])
        }
        try store.database.close()
        guard rename(work.appendingPathComponent("final.sqlite").path, output.path) == 0 else {
            throw LocalFiles.error("rename", path: output.path)
        }
        return Result(
            wholeStore: manifest, changeSetsApplied: report.changeSetsApplied, rowCounts: counts,
            warnings: report.warnings)
    }

    private struct Schema {
        var tables: [SyncedTable]
        var creates: [String]
    }

    /// The synced tables of a snapshot: every table but FolderSync's, with its primary key as sync ID.
    private static func schema(ofSnapshot url: URL) throws -> Schema {
        let queue = try DatabaseQueue(path: url.path)
        defer { try? queue.close() }
        return try queue.read { db in
            var schema = Schema(tables: [], creates: [])
            for row in try Row.fetchAll(
                db,
                sql: """
                    SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'foldersync_%' AND name NOT LIKE 'sqlite_%'
                    """)
            {
                let name: String = row[0]
                guard let key = try db.primaryKey(name).columns.first else { continue }
                schema.tables.append(SyncedTable(name, syncIDColumn: key))
                schema.creates.append(row[1])
            }
            return schema
        }
    }

    /// Without a whole store: every table and column the change sets name, untyped, with `id` as sync ID.
    private func schemaFromChangeSets(localLayout: LocalLayout) async throws -> Schema {
        var columns: [String: Set<String>] = [:]
        let download = localLayout.helperDirectory.appendingPathComponent("probe.syncchg")
        for client in try await remote.contentsOfDirectoryIfPresent(at: layout.syncChangesDirectory(documentIdentifier))
        where client.kind == .directory {
            let folder = layout.syncChangesDirectory(documentIdentifier, client: client.name)
            for item in try await remote.contentsOfDirectoryIfPresent(at: folder)
            where RemoteLayout.parseChangeSetFileName(item.name) != nil {
                try await remote.download(folder.appending(item.name), toLocalFile: download)
                try ChangeSetReader.forEachChange(at: download, path: folder.appending(item.name).description) {
                    change in
                    columns[change.table, default: []].formUnion(change.columns.map(\.column))
                }
            }
        }
        try? FileManager.default.removeItem(at: download)
        let names = columns.keys.sorted()
        return Schema(
            tables: names.map { SyncedTable($0) },
            creates: names.map { name in
                let rest = columns[name]!.subtracting(["id"]).sorted().map(\.quotedDatabaseIdentifier)
                return
                    "CREATE TABLE \(name.quotedDatabaseIdentifier)(id TEXT PRIMARY KEY NOT NULL\(rest.map { ", " + $0 }.joined()))"
            })
    }
}
