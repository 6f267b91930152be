public import Foundation
import GRDB

/// Detaching: the document becomes a plain SQLite file again (see <doc:StoppingSyncAndCheckingADevice>).
///
/// One transaction removes the capture triggers and every bookkeeping table (`foldersync_…`); the app's rows and
/// tables are left exactly as they are, so the `sqlite3` shell, a database browser or an older version of the app
/// can write them. The helper folder goes after it, but for the user's data in it (reset backups, attachment files
/// that rows reference). Opening the file with ``GRDBStore`` again later is a first registration: every row it holds
/// then is recorded as a new local change, and travels with the first sync.
extension GRDBStore {
    /// The local changes of this store that no other device has received yet.
    public func unpublishedChanges() throws -> UnpublishedChanges {
        try wrap("reading unpublished changes") {
            try readOne(Self.unpublishedChanges)
        }
    }

    /// The unpublished local changes of the document at `path`, read without opening it as a store (no capture, no
    /// write): what ``stopTracking(documentAt:helperDirectory:keepingUnpublishedChanges:)`` would report.
    /// - Throws: ``FolderSyncError/Code/localStoreFailed`` when SQLite cannot read the file.
    public static func unpublishedChanges(inDocumentAt path: String) throws -> UnpublishedChanges {
        do {
            let queue = try DatabaseQueue(path: path, configuration: plainConfiguration)
            defer { try? queue.close() }
            return try queue.read(unpublishedChanges)
        } catch let error as FolderSyncError {
            throw error
        } catch {
            throw FolderSyncError(
                .localStoreFailed, "cannot read the document's unpublished changes", path: path,
                underlying: error)
        }
    }

    /// Removes change capture and the sync bookkeeping from the document at `path`, and its helper folder: the file
    /// becomes a plain SQLite file that any connection can write. For a user without the app (`foldersync store
    /// detach`) or an app with no ``DocumentSyncManager``; a manager's
    /// ``DocumentSyncManager/stopSyncing(removingTracking:publishingFirst:)`` also publishes first and leaves the
    /// shared folder.
    ///
    /// Waits for a sync of the document that holds the helper folder's lock. Removes the helper folder's registration
    /// first, then the bookkeeping in one transaction, then the rest of the folder: a detach stopped on the way is run
    /// again to finish, and an app that opens the document meanwhile registers it as a new device would.
    ///
    /// - Parameters:
    ///   - path: the document's SQLite file.
    ///   - helperDirectory: the document's helper folder on this device, if any (``LocalLayout``).
    ///   - keepingUnpublishedChanges: detach even when some local change never reached another device: the rows
    ///     keep it, and it never leaves the device. Without it, such changes stop the detach.
    /// - Throws: ``FolderSyncError/Code/unpublishedChanges`` naming them, changing nothing;
    ///   ``FolderSyncError/Code/unsupportedFormatVersion`` for bookkeeping of a newer FolderSync;
    ///   ``FolderSyncError/Code/localStoreFailed`` when SQLite or the helper folder fails.
    @discardableResult
    public static func stopTracking(
        documentAt path: String, helperDirectory: URL? = nil,
        keepingUnpublishedChanges: Bool = false
    ) async throws -> DetachReport {
        let layout = helperDirectory.map(LocalLayout.init(helperDirectory:))
        var lock: FileLock?
        if let layout, FileManager.default.fileExists(atPath: layout.helperDirectory.path) {
            lock = try await FileLock.acquire(layout.syncLockFile)
        }
        defer { lock?.release() }
        do {
            try StoreSchema.refuseNewerBookkeeping(atPath: path)
            let queue = try DatabaseQueue(path: path, configuration: plainConfiguration)
            defer { try? queue.close() }
            return try removeTracking(
                queue, path: path, layout: layout, keepingUnpublishedChanges: keepingUnpublishedChanges)
        } catch let error as FolderSyncError {
            throw error
        } catch {
            throw FolderSyncError(.localStoreFailed, "cannot detach the document", path: path, underlying: error)
        }
    }

    /// Removes change capture and the sync bookkeeping from this store's document, and the helper folder at
    /// `helperDirectory` if given; the store then syncs no more, and ``database`` is a plain connection to a plain
    /// SQLite file, which the app keeps using. See
    /// ``stopTracking(documentAt:helperDirectory:keepingUnpublishedChanges:)``.
    @discardableResult
    public func stopTracking(helperDirectory: URL? = nil, keepingUnpublishedChanges: Bool = false) throws
        -> DetachReport
    {
        try wrap("detaching the document") {
            try? clock.waitUntilSeeded()  // its read of the bookkeeping ends before the bookkeeping goes
            return try Self.removeTracking(
                database, path: database.path,
                layout: helperDirectory.map(LocalLayout.init(helperDirectory:)),
                keepingUnpublishedChanges: keepingUnpublishedChanges)
        }
    }

    /// The detach itself, through `queue` (the store's connection, or a plain one).
    private static func removeTracking(
        _ queue: any DatabaseWriter, path: String, layout: LocalLayout?,
        keepingUnpublishedChanges: Bool
    ) throws -> DetachReport {
        var report = DetachReport()
        report.unpublishedChanges = try queue.read(unpublishedChanges)
        guard keepingUnpublishedChanges || report.unpublishedChanges.isEmpty else {
            throw FolderSyncError(
                .unpublishedChanges,
                "\(report.unpublishedChanges) hold local changes no other device has; "
                    + "sync first, or detach keeping them on this device only", path: path)
        }
        let referencesAttachments = try queue.read(holdsAttachmentReferences)
        if let layout { try? FileManager.default.removeItem(at: layout.registrationFile) }
        try queue.writeWithoutTransaction { db in
            try db.inTransaction(.immediate) {
                try StoreSchema.checkBookkeepingVersion(db, path: path)
                report.untrackedTables = try dropBookkeeping(db)
                return .commit
            }
            // The pages the bookkeeping held go back to the file system; a reader elsewhere can keep it from running.
            try? db.execute(sql: "VACUUM")
        }
        if let layout {
            let kept = [layout.backupsDirectory, referencesAttachments ? layout.attachmentsDirectory : nil].compactMap {
                $0
            }
            report.keptHelperItems = try removeHelperFolder(layout, keeping: kept)
        }
        return report
    }

    /// Drops every change-capture trigger and bookkeeping table; returns the tables that were tracked.
    private static func dropBookkeeping(_ db: Database) throws -> [String] {
        let triggers = try Row.fetchAll(
            db,
            sql: """
                SELECT name, tbl_name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'foldersync\\_%' ESCAPE '\\'
                """)
        for trigger in triggers {
            try db.execute(sql: "DROP TRIGGER \((trigger[0] as String).quotedDatabaseIdentifier)")
        }
        for table in try String.fetchAll(
            db,
            sql: """
                SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'foldersync\\_%' ESCAPE '\\'
                """)
        {
            try db.execute(sql: "DROP TABLE \(table.quotedDatabaseIdentifier)")
        }
        return Set(triggers.map { $0[1] as String }).sorted()
    }

    /// Removes the helper folder but for `keep` (folders, kept when not empty, or files); returns what it kept.
    static func removeHelperFolder(_ layout: LocalLayout, keeping keep: [URL]) throws -> [URL] {
        let folder = layout.helperDirectory
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return [] }
        let kept = keep.filter { item in
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: item.path, isDirectory: &isFolder) else { return false }
            return !isFolder.boolValue
                || !((try? FileManager.default.contentsOfDirectory(atPath: item.path)) ?? []).isEmpty
        }
        for name in names where !kept.contains(where: { $0.lastPathComponent == name }) {
            do {
                try FileManager.default.removeItem(at: folder.appendingPathComponent(name))
            } catch {
                throw FolderSyncError(
                    .localStoreFailed, "cannot remove the helper folder's \(name)", path: folder.path,
                    underlying: error)
            }
        }
        if kept.isEmpty { try? FileManager.default.removeItem(at: folder) }
        return kept
    }

    /// Per synced table, the rows with a pending or staged change (none when the file has no bookkeeping).
    static func unpublishedChanges(_ db: Database) throws -> UnpublishedChanges {
        let sources = [StoreSchema.pendingChangesTable, StoreSchema.stagedChangesTable]
            .filter { (try? db.tableExists($0)) == true }
        guard !sources.isEmpty else { return UnpublishedChanges() }
        let union = sources.map { "SELECT tbl, sync_id FROM \($0)" }.joined(separator: " UNION ALL ")
        let rows = try Row.fetchAll(db, sql: "SELECT tbl, count(DISTINCT sync_id) FROM (\(union)) GROUP BY tbl")
        return UnpublishedChanges(rowsByTable: Dictionary(uniqueKeysWithValues: rows.map { ($0[0], $0[1]) }))
    }

    /// Whether a column of a tracked table holds an attachment reference, whose file is in the helper folder.
    private static func holdsAttachmentReferences(_ db: Database) throws -> Bool {
        let tables = try String.fetchAll(
            db,
            sql: """
                SELECT DISTINCT tbl_name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'foldersync\\_%' ESCAPE '\\'
                """)
        let magic = Data(AttachmentReference.magic)
        for table in tables where try db.tableExists(table) {
            for column in try db.columns(in: table).map(\.name) {
                let quoted = column.quotedDatabaseIdentifier
                if try Bool.fetchOne(
                    db,
                    sql: """
                        SELECT EXISTS (SELECT 1 FROM \(table.quotedDatabaseIdentifier)
                            WHERE typeof(\(quoted)) = 'blob' AND substr(\(quoted), 1, ?) = ?)
                        """, arguments: [magic.count, magic]) == true
                {
                    return true
                }
            }
        }
        return false
    }

    /// A connection with none of FolderSync's functions, as any other program has: a busy store is waited for.
    static var plainConfiguration: Configuration {
        var configuration = Configuration()
        configuration.busyMode = .timeout(30)
        return configuration
    }
}

extension LocalLayout {
    /// The application, document and client this helper folder remembers registering as; `nil` when it remembers
    /// none. For `foldersync store detach`, which leaves the shared folder as the device itself would.
    /// - Throws: ``FolderSyncError/Code/corruptFile`` when the registration file does not decode.
    @_spi(Tooling) public func rememberedRegistration() throws -> (
        application: String, document: String, client: String
    )? {
        guard FileManager.default.fileExists(atPath: registrationFile.path) else { return nil }
        let saved = try PropertyListFile.decode(
            LocalRegistration.self, from: try LocalFiles.read(registrationFile),
            path: registrationFile.path)
        return (saved.applicationIdentifier, saved.documentIdentifier, saved.clientIdentifier)
    }
}
