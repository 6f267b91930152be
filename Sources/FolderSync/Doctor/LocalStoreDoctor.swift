public import Foundation
import GRDB

/// Checks one device's document and helper folder: the local side of what `RemoteTreeDoctor` checks in the shared
/// folder (`foldersync store check`).
///
/// ``examine()`` reads the SQLite file through a plain connection and the helper folder, and changes neither: its
/// registers against its rows, pending marks and tombstones against its rows, staged change sets on disk against the
/// staged table, the ledger against itself and against what this device's marker claimed, local attachments present
/// and intact, the bookkeeping version. ``repair(_:)`` does only what loses nothing: it removes staged files no table
/// names and local attachment copies that are damaged (fetched again when needed). Findings use the severities and
/// names of `DoctorFinding`; their paths are `table/syncID` for rows, the file's name for the store, and paths
/// relative to the helper folder for its files.
@_spi(Tooling) public struct LocalStoreDoctor: Sendable {
    /// The document's SQLite file.
    public let storePath: String
    /// Its helper folder, when it is to be checked too.
    public let helper: LocalLayout?

    /// A doctor of the document at `storePath` and, if given, its helper folder.
    public init(storePath: String, helperDirectory: URL? = nil) {
        self.storePath = storePath
        self.helper = helperDirectory.map(LocalLayout.init(helperDirectory:))
    }

    /// Checks the document and the helper folder, changing nothing.
    ///
    /// - Throws: ``FolderSyncError/Code/localStoreFailed`` when the file cannot be opened or read as SQLite at all;
    ///   damage inside it is a finding.
    public func examine() throws -> LocalCheckReport {
        var examination = LocalExamination(store: URL(fileURLWithPath: storePath).lastPathComponent)
        do {
            let queue = try DatabaseQueue(path: storePath, configuration: GRDBStore.plainConfiguration)
            defer { try? queue.close() }
            // SQLite's own check first, outside a transaction: a damaged file can fail even the end of one.
            guard try queue.inDatabase({ try checkIntegrity($0, &examination) }) else {
                return LocalCheckReport(
                    store: storePath, helper: helper?.helperDirectory.path, bookkeepingVersion: nil,
                    findings: examination.sortedFindings)
            }
            try queue.read { db in
                guard try checkVersion(db, &examination) else { return }
                let state = try StoreState.read(db)
                try checkRows(db, state: state, &examination)
                if let helper {
                    try checkStagedSets(db, state: state, helper, &examination)
                    try checkAttachments(db, state: state, helper, &examination)
                }
                try checkLedger(db, state: state, &examination)
            }
        } catch let error as FolderSyncError {
            throw error
        } catch {
            throw FolderSyncError(.localStoreFailed, "cannot read the document", path: storePath, underlying: error)
        }
        if let helper { checkRegistration(helper, &examination) }
        return LocalCheckReport(
            store: storePath, helper: helper?.helperDirectory.path, bookkeepingVersion: examination.version,
            findings: examination.sortedFindings)
    }

    /// Does what the findings' repairs say, and only that: removes stray staged files and damaged attachment copies.
    /// Returns what it did; run ``examine()`` again for what remains.
    public func repair(_ report: LocalCheckReport) throws -> [DoctorRepairAction] {
        guard let helper else { return [] }
        var done: [DoctorRepairAction] = []
        for finding in report.findings where finding.repair == .remove {
            let url = helper.helperDirectory.appendingPathComponent(finding.path)
            guard url.standardizedFileURL.path.hasPrefix(helper.helperDirectory.path + "/") else { continue }
            do {
                try FileManager.default.removeItem(at: url)
            } catch {
                throw FolderSyncError(
                    .localStoreFailed, "cannot remove \(finding.path)", path: url.path, underlying: error)
            }
            done.append(DoctorRepairAction(action: .remove, path: finding.path))
        }
        return done
    }

    // MARK: The store

    /// SQLite's own check of the file; false (nothing else checked) when it fails.
    private func checkIntegrity(_ db: Database, _ examination: inout LocalExamination) throws -> Bool {
        let result: [String]
        do {
            result = try String.fetchAll(db, sql: "PRAGMA quick_check")
        } catch let error as DatabaseError
            where error.resultCode == .SQLITE_CORRUPT || error.resultCode == .SQLITE_NOTADB
        {
            result = [error.message ?? "\(error.resultCode)"]
        }
        guard result == ["ok"] else {
            examination.add(
                .error, .corruptStore, examination.store,
                "SQLite finds the file damaged (\(result.prefix(3).joined(separator: "; "))); "
                    + "restore it from a backup")
            return false
        }
        return true
    }

    /// The bookkeeping version; false (nothing else checked) when the document has none or a newer one.
    private func checkVersion(_ db: Database, _ examination: inout LocalExamination) throws -> Bool {
        let version: Int?
        do {
            version =
                try StoreSchema.recordedBookkeepingVersion(db, path: storePath)
                ?? StoreSchema.identifyUnversionedBookkeeping(db)
        } catch let error as FolderSyncError {
            examination.add(.error, .bookkeepingVersion, examination.store, error.message)
            return false
        }
        examination.version = version
        guard let version else {
            examination.add(
                .info, .notTracked, examination.store, "the document has no FolderSync bookkeeping: it is not synced")
            return false
        }
        let current = StoreSchema.currentBookkeepingVersion
        if version > current {
            examination.add(
                .error, .bookkeepingVersion, examination.store,
                "the bookkeeping is version \(version), newer than \(current), the newest this build reads; "
                    + "nothing else was checked (use a newer foldersync)")
            return false
        }
        if version < current {
            examination.add(
                .info, .bookkeepingVersion, examination.store,
                "the bookkeeping is version \(version); the app brings it to version \(current) when it opens it")
        }
        return true
    }
}

/// What ``LocalStoreDoctor/examine()`` found.
@_spi(Tooling) public struct LocalCheckReport: Hashable, Sendable, Codable {
    /// The document's SQLite file.
    public var store: String
    /// The helper folder checked, if one was.
    public var helper: String?
    /// The document's bookkeeping version (`nil`: it has none, or it could not be told).
    public var bookkeepingVersion: Int?
    /// Sorted by path, then check.
    public var findings: [DoctorFinding]

    /// No finding is a problem.
    public var isHealthy: Bool { !findings.contains(where: \.isProblem) }
}

/// The findings of one examination, and what they are about.
struct LocalExamination {
    /// The store's file name, the path of findings about the file as a whole.
    let store: String
    var version: Int?
    private(set) var findings: [DoctorFinding] = []

    init(store: String) { self.store = store }

    mutating func add(
        _ severity: DoctorFinding.Severity, _ check: DoctorFinding.Check, _ path: String, _ message: String,
        repair: DoctorFinding.Repair? = nil
    ) {
        findings.append(DoctorFinding(severity, check, path: path, message, repair: repair))
    }

    var sortedFindings: [DoctorFinding] {
        findings.sorted { ($0.path, $0.check.rawValue, $0.message) < ($1.path, $1.check.rawValue, $1.message) }
    }
}

/// The sync state and tracked tables of the store examined.
struct StoreState {
    /// Per tracked table: its sync-ID column, its other columns, and whether its deletes win.
    struct Table {
        var name: String
        var syncIDColumn: String
        var columns: [String]
        var lastWriterWins: Bool
    }

    var tables: [Table]
    var sync: LocalSyncState

    /// The tables that have a change-capture trigger, read from the triggers themselves (their SQL says the policy).
    static func read(_ db: Database) throws -> StoreState {
        var tables: [Table] = []
        for row in try Row.fetchAll(
            db,
            sql: """
                SELECT tbl_name, sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'foldersync\\_%\\_delete' ESCAPE '\\'
                ORDER BY tbl_name
                """)
        {
            let name: String = row[0]
            let sql: String = row[1]
            guard try db.tableExists(name), let key = try db.primaryKey(name).columns.first else { continue }
            // The delete trigger passes the policy as its third argument: `…(<table>, OLD.<id>, 1…` under last writer
            // wins.
            let lastWriterWins = sql.contains("OLD.\(key.quotedDatabaseIdentifier), 1")
            tables.append(
                Table(
                    name: name, syncIDColumn: key, columns: try db.columns(in: name).map(\.name).filter { $0 != key },
                    lastWriterWins: lastWriterWins))
        }
        let data = try Data.fetchOne(db, sql: "SELECT value FROM \(StoreSchema.metaTable) WHERE key = 'state'")
        return StoreState(tables: tables, sync: try data.map(LocalSyncState.decodeJSON) ?? LocalSyncState())
    }
}

extension DoctorFinding.Check {
    /// SQLite's own check fails: the file is damaged.
    public static let corruptStore = Self(rawValue: "corruptStore")
    /// The document has no FolderSync bookkeeping (information only).
    public static let notTracked = Self(rawValue: "notTracked")
    /// The bookkeeping's version: newer than this build reads (error), or older (information: upgraded on open).
    public static let bookkeepingVersion = Self(rawValue: "bookkeepingVersion")
    /// A synced row with no registers: written without FolderSync, so no other device gets it.
    public static let rowWithoutRegisters = Self(rawValue: "rowWithoutRegisters")
    /// Registers of a row that is gone without a tombstone: deleted without FolderSync, so other devices keep it.
    public static let registersWithoutRow = Self(rawValue: "registersWithoutRow")
    /// A row's registers or pending marks that do not decode: its sync stops on it.
    public static let unreadableBookkeeping = Self(rawValue: "unreadableBookkeeping")
    /// A pending or staged change of a row that is gone without a tombstone: it carries nothing.
    public static let changeWithoutRow = Self(rawValue: "changeWithoutRow")
    /// A pending delete with no tombstone: the delete never leaves the device.
    public static let deleteWithoutTombstone = Self(rawValue: "deleteWithoutTombstone")
    /// A tombstone of a row that is there (delete wins; or last writer wins with the delete newer than every write):
    /// the row was written back without FolderSync, and other devices keep it deleted.
    public static let tombstoneOfLiveRow = Self(rawValue: "tombstoneOfLiveRow")
    /// A change set the staged table names that the helper folder lacks: those changes cannot be published.
    public static let stagedSetMissing = Self(rawValue: "stagedSetMissing")
    /// A file in the helper folder's staged change sets that no staged change names (published, or never committed).
    public static let strayStagedFile = Self(rawValue: "strayStagedFile")
    /// The ledger's per-client runs disagree with its entries.
    public static let ledgerMismatch = Self(rawValue: "ledgerMismatch")
    /// This device's marker in the shared folder claimed more than the store holds (a store put back from an earlier
    /// copy): the next sync writes it again.
    public static let claimBeyondStore = Self(rawValue: "claimBeyondStore")
    /// An attachment a row references that this device does not have.
    public static let attachmentMissing = Self(rawValue: "attachmentMissing")
    /// The helper folder's registration does not decode.
    public static let unreadableRegistration = Self(rawValue: "unreadableRegistration")
    /// The document stopped on a reset and waits for the app's `rejoin()` (information only).
    public static let resetPending = Self(rawValue: "resetPending")
}
