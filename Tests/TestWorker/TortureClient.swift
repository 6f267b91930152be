import FolderSync
import FolderSyncTesting
import Foundation
import GRDB
import Logging

/// One run of one torture client: resolve the journal, then seeded steps (write, sync, whole-store upload and
/// download, vacuum) until the kill switch fires or the steps run out.
///
/// Rows: `client-rN` are written only by their client (inserted, updated, deleted: the checker knows their exact
/// final value), `shared-K` by every client (the checker knows the set of values they may end with), and
/// `client-txn` marks each transaction so that a kill between commit and journal is resolved at the next run.
struct TortureClient {
    static let application = "com.example.torture"
    static let document = "TORTURE"
    static let sharedRows = 8

    let root: URL
    let client: String
    let directory: URL
    var database: URL { directory.appendingPathComponent("\(client).sqlite") }
    var journalURL: URL { directory.appendingPathComponent("\(client).journal") }

    static func openStore(_ url: URL) throws -> GRDBStore {
        try GRDBStore(path: url.path, tables: [SyncedTable("items")]) { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS items(id TEXT PRIMARY KEY NOT NULL, value TEXT)")
        }
    }

    /// Runs `steps` seeded steps (only syncs when `settle`), dying at the `killAfter + 1`-th kill point.
    /// `outage`: the folder is away, and every step that needs it must say `remoteUnavailable`.
    /// Returns the kill points passed.
    func run(seed: UInt64, steps: Int, killAfter: Int?, settle: Bool, outage: Bool) async throws -> Int {
        let killSwitch = KillSwitch(point: nil, after: killAfter ?? .max)
        let store = try Self.openStore(database)
        var journal = try TortureJournal(client: client, url: journalURL)
        if let open = journal.open {
            try journal.resolve(
                committed: try Self.value(of: journal.markerRow, in: store) == journal.markerValue(open.number))
        }
        killSwitch.action = "register"
        try journal.note("# run \(seed) kill after \(killAfter.map(String.init) ?? "none")")
        let document: DocumentSyncManager
        do {
            document = try await register(
                store: KillingStore(base: store, killSwitch: killSwitch), killSwitch: killSwitch)
        } catch let error as FolderSyncError where outage && error.code == .remoteUnavailable {
            // A client whose first registration never finished (killed in an earlier round) registers with the remote
            // at launch: with the folder away it must say so, and make nothing there.
            try journal.note("# the folder is away: \(error.message)")
            return killSwitch.passed
        }
        var random = SeededGenerator(seed: seed)
        for _ in 0..<steps {
            let roll = settle ? 50 : random.int(0...99)
            killSwitch.action =
                switch roll {
                case 0..<45: "write"
                case 45..<80: "sync"
                case 80..<87: "upload whole store"
                case 87..<92: "download whole store"
                default: "vacuum"
                }
            try journal.note("# \(killSwitch.action)")
            do {
                try await step(
                    roll, document: document, journal: &journal, store: store, random: &random, killSwitch: killSwitch)
            } catch let error as FolderSyncError where outage && error.code == .remoteUnavailable {
                try journal.note("# the folder is away: \(error.message)")
            }
        }
        return killSwitch.passed
    }

    private func step(
        _ roll: Int, document: DocumentSyncManager, journal: inout TortureJournal, store: GRDBStore,
        random: inout SeededGenerator, killSwitch: KillSwitch
    ) async throws {
        switch roll {
        case 0..<45: try write(&journal, store: store, random: &random, killSwitch: killSwitch)
        case 45..<80: try await document.synchronize()
        case 80..<87: try await document.uploadWholeStore()
        case 87..<92:
            do {
                try await document.downloadWholeStore()
            } catch let error as FolderSyncError
                where error.code == .corruptFile && error.path?.hasSuffix(RemoteLayout.wholeStoreFileName) == true
            {
                // Another client's upload was killed between publishing its store and its manifest: asked for a
                // store now, the app is told the remote has none it can use (a typed error naming the file), and
                // the next sync or upload mends it. Syncs report this as a warning; they never fail on it.
                try journal.note("# whole store being replaced: \(error.message)")
            }
        default: _ = try await document.vacuum()
        }
    }

    private static func value(of row: String, in store: GRDBStore) throws -> String? {
        try store.database.read { db in
            try String.fetchOne(db, sql: "SELECT value FROM items WHERE id = ?", arguments: [row])
        }
    }

    private func register(store: KillingStore, killSwitch: KillSwitch) async throws -> DocumentSyncManager {
        var environment = SyncEnvironment.live
        environment.logger.logLevel = .error
        let remote = KillingFileSystem(FileManagerFileSystem(rootURL: root), killSwitch: killSwitch)
        let app = ApplicationSyncManager(remote: remote, environment: environment)
        // The offline launch: the remote is needed only by a first registration.
        try app.configure(
            .init(applicationIdentifier: Self.application, clientIdentifier: client, clientDescription: "torture"))
        let configuration = DocumentSyncManager.Configuration(
            documentIdentifier: Self.document, documentDescription: "torture",
            helperDirectory: directory.appendingPathComponent("\(client).helper"))
        let document = try KillingDocumentSyncManager(
            applicationSyncManager: app, configuration: configuration,
            store: store, killSwitch: killSwitch)
        document.remoteDocumentCreationHandler = { _ in true }
        document.massDeletionHandler = { _ in true }
        document.policy.wholeStoreUploadAfterChangeSets = 6
        try await document.registerConfigured()
        return document
    }

    /// One transaction of 1 to 8 seeded writes plus the marker, journaled before and after the commit.
    private func write(
        _ journal: inout TortureJournal, store: GRDBStore, random: inout SeededGenerator,
        killSwitch: KillSwitch
    ) throws {
        var live = journal.liveOwnRows
        var next = journal.rowsNumbered
        let number = journal.transactions + 1
        var operations: [TortureJournal.Operation] = [
            .write(row: journal.markerRow, value: journal.markerValue(number))
        ]
        var touched: Set<String> = [journal.markerRow]
        for index in 1...random.int(1...8) {
            let value = "\(client).\(number).\(index)"
            let roll = random.int(0...99)
            if roll < 40 || live.isEmpty {
                let row = journal.ownRow(next)
                next += 1
                operations.append(.write(row: row, value: value))
                live.append(row)
            } else if roll < 65, let row = random.pick(live), !touched.contains(row) {
                operations.append(.write(row: row, value: value))
            } else if roll < 75, let row = random.pick(live), !touched.contains(row) {
                operations.append(.delete(row: row))
                live.removeAll { $0 == row }
            } else {
                let row = TortureJournal.sharedPrefix + String(random.int(0...(Self.sharedRows - 1)))
                guard !touched.contains(row) else { continue }
                operations.append(.write(row: row, value: value))
            }
            touched.formUnion(operations.map(\.row))
        }
        let begun = try journal.begin(operations)
        precondition(begun == number)
        try store.database.write { db in
            for operation in operations {
                switch operation {
                case .write(let row, let value):
                    try db.execute(
                        sql:
                            "INSERT INTO items(id, value) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET value = excluded.value",
                        arguments: [row, value])
                case .delete(let row):
                    try db.execute(sql: "DELETE FROM items WHERE id = ?", arguments: [row])
                }
            }
        }
        killSwitch.reach("committed")  // in the database, not yet in the journal
        try journal.resolve(committed: true)
    }
}

extension TortureJournal.Operation {
    var row: String {
        switch self {
        case .write(let row, _), .delete(let row): row
        }
    }
}
