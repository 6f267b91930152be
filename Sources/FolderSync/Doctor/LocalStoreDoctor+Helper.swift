import Foundation
import GRDB

/// The helper folder against the store: staged change sets, attachments, the registration; and the ledger.
extension LocalStoreDoctor {
    /// Each staged change the table names has its set on disk, verified; a file no staged change names (published
    /// already, or staged by a sync that never committed it) is removable: the sync never reads it.
    func checkStagedSets(
        _ db: Database, state: StoreState, _ helper: LocalLayout,
        _ examination: inout LocalExamination
    ) throws {
        let folder = helper.stagedSyncChangesDirectory
        let relative = folder.lastPathComponent
        let progress = state.sync.progress
        var onDisk: [Int64: String] = [:]
        for name in ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted() {
            guard let sequence = RemoteLayout.changeSetSequence(ofFileName: name),
                sequence > progress.publishedSequence, sequence < progress.nextSequence
            else {
                examination.add(
                    .warning, .strayStagedFile, "\(relative)/\(name)",
                    "no staged change names this file (published already, or never committed); "
                        + "the sync ignores it",
                    repair: .remove)
                continue
            }
            onDisk[sequence] = name
            do {
                _ = try ChangeSetReader.verify(at: folder.appendingPathComponent(name), path: "\(relative)/\(name)")
            } catch let error as FolderSyncError {
                examination.add(
                    .error, .corruptChangeSet, "\(relative)/\(name)",
                    "a staged change set that cannot be published: \(error.message)")
            }
        }
        let named = try Int64.fetchAll(
            db, sql: "SELECT DISTINCT staged_in FROM \(StoreSchema.stagedChangesTable) ORDER BY 1")
        for sequence in named where onDisk[sequence] == nil {
            examination.add(
                .error, .stagedSetMissing, "\(relative)/\(String(format: "%012lld", sequence))-…",
                "changes staged in set \(sequence) wait for a file the helper folder lacks: "
                    + "they cannot be published")
        }
    }

    /// Each attachment a synced column references: present in the helper folder, and holding what its name says.
    func checkAttachments(
        _ db: Database, state: StoreState, _ helper: LocalLayout,
        _ examination: inout LocalExamination
    ) throws {
        let local = helper.attachmentStore
        let relative = helper.attachmentsDirectory.lastPathComponent
        let magic = Data(AttachmentReference.magic)
        var seen = Set<String>()
        for table in state.tables {
            for column in table.columns {
                let quoted = column.quotedDatabaseIdentifier
                let key = table.syncIDColumn.quotedDatabaseIdentifier
                let rows = try Row.fetchCursor(
                    db,
                    sql: """
                        SELECT CAST(\(key) AS TEXT), \(quoted) FROM \(table.name.quotedDatabaseIdentifier)
                        WHERE typeof(\(quoted)) = 'blob' AND substr(\(quoted), 1, ?) = ?
                        """, arguments: [magic.count, magic])
                while let row = try rows.next() {
                    guard let reference = AttachmentReference(databaseValue: row[1]),
                        seen.insert(reference.sha256).inserted
                    else { continue }
                    let path = "\(relative)/\(reference.sha256)"
                    let cell = "\(table.name)/\(row[0] as String).\(column)"
                    if !local.contains(reference) {
                        // A value the column holds only once its bytes are here; a file the app asks for when it needs
                        // it.
                        examination.add(
                            reference.isInlineValue ? .warning : .info, .attachmentMissing, path,
                            reference.isInlineValue
                                ? "\(cell) holds a reference until its value arrives "
                                    + "(DocumentSyncManager.requestDownload(for:) fetches it)"
                                : "\(cell): not downloaded yet; fetched when the app asks for it")
                    } else if !local.isIntact(reference) {
                        examination.add(
                            .error, .corruptAttachment, path,
                            "the local copy does not hold the attached contents; removing it has it fetched again",
                            repair: .remove)
                    }
                }
            }
        }
    }

    /// The ledger's runs agree with its entries, and this device's marker claimed no more than the store holds.
    func checkLedger(_ db: Database, state: StoreState, _ examination: inout LocalExamination) throws {
        guard try db.tableExists(StoreSchema.appliedRunsTable) else { return }
        var entries = AppliedChangeSets()
        let rows = try Row.fetchCursor(db, sql: "SELECT client, sequence FROM \(StoreSchema.appliedChangeSetsTable)")
        while let row = try rows.next() { entries.insert(row[1], of: row[0]) }
        let runs = Dictionary(
            uniqueKeysWithValues: try Row.fetchAll(
                db,
                sql: """
                    SELECT client, through FROM \(StoreSchema.appliedRunsTable)
                    """
            ).map { ($0[0] as String, $0[1] as Int64) })
        let path = "\(examination.store) (\(StoreSchema.appliedRunsTable))"
        for client in Set(runs.keys).union(entries.contiguous.keys).union(entries.beyond.keys).sorted() {
            let run = runs[client] ?? 0
            let applied = entries.highestContiguousSequence(of: client)
            if run != applied {
                examination.add(
                    .error, .ledgerMismatch, path,
                    "client \(client): the ledger holds sets 1…\(applied) without a gap, "
                        + "its run says 1…\(run)")
            }
        }
        let remote = state.sync.remote
        let progress = state.sync.progress
        for (client, claimed) in remote.announcedAcknowledgement.sorted(by: { $0.key < $1.key }) {
            let held = entries.highestContiguousSequence(of: client)
            guard claimed > held else { continue }
            examination.add(
                .warning, .claimBeyondStore, examination.store,
                "this device's marker said it applied client \(client)'s sets 1…\(claimed), the store holds "
                    + "1…\(held) (put back from an earlier copy?); the next sync says it again")
        }
        if remote.announcedSequence > progress.publishedSequence {
            examination.add(
                .warning, .claimBeyondStore, examination.store,
                "this device's marker said it published sets 1…\(remote.announcedSequence), the store knows "
                    + "1…\(progress.publishedSequence) (put back from an earlier copy?); "
                    + "the next sync continues after them")
        }
    }

    /// The registration the helper folder remembers decodes; a reset waiting for `rejoin()` is worth knowing.
    func checkRegistration(_ helper: LocalLayout, _ examination: inout LocalExamination) {
        do {
            _ = try helper.rememberedRegistration()
        } catch {
            examination.add(
                .error, .unreadableRegistration, helper.registrationFile.lastPathComponent,
                "the remembered registration cannot be read: "
                    + "the app registers again with the shared folder")
        }
        if FileManager.default.fileExists(atPath: helper.resetFile.path) {
            examination.add(
                .info, .resetPending, helper.resetFile.lastPathComponent,
                "the document stopped on a reset; the app's rejoin() recovers without losing local data")
        }
    }
}
