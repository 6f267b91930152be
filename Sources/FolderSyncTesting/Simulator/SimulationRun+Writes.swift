@_spi(ModelAdapter) import FolderSync
import Foundation

/// The app side of the simulation: random writes to the notes schema, each recorded in the journal once committed.
extension SimulationRun {
    private static let words = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
    ]

    private func word() -> SyncValue {
        .text(Self.words[random.int(0...Self.words.count - 1)] + "-\(random.int(0...99))")
    }

    private func newID(_ prefix: String, _ client: SimulatedClient) -> String {
        let number = nextRowNumber[client.index, default: 0] + 1
        nextRowNumber[client.index] = number
        return "\(prefix)-\(client.index)-\(number)"
    }

    func write(on client: SimulatedClient) throws {
        let store = client.store
        let rows = try store.allRows()
        func ids(_ table: String) -> [String] { rows.filter { $0.table == table }.map(\.syncID) }
        let folders = ids("folders")
        let notes = ids("notes")
        let tags = ids("tags")
        let links = ids("note_tags")
        let optionalFolder: SyncValue = random.chance(70) ? random.pick(folders).map(SyncValue.text) ?? .null : .null
        if configuration.attachments && random.chance(20) {
            let value = try attachmentValue(on: client)
            if let note = random.pick(notes), random.chance(60) {
                try update(client, "notes", note, ["body": value])
            } else {
                try insert(
                    client, "notes", newID("n", client), ["title": word(), "body": value, "folder_id": optionalFolder])
            }
            summary.attachmentWrites += 1
            return
        }

        if configuration.churn && random.chance(60) {
            // Churn: a note comes, a note goes (its links first, as under foreign keys).
            if let note = random.pick(notes), random.chance(50) {
                try deleteWithChildren(client, "notes", note, rows)
            } else {
                try insert(
                    client, "notes", newID("c", client), ["title": word(), "body": word(), "folder_id": optionalFolder])
            }
            return
        }
        switch random.int(0...13) {
        case 0:
            try insert(client, "folders", newID("f", client), ["name": word()])
        case 1, 2:
            try insert(
                client, "notes", newID("n", client), ["title": word(), "body": word(), "folder_id": optionalFolder])
        case 3:
            try insert(client, "tags", newID("t", client), ["name": word()])
        case 4, 5:
            guard let note = random.pick(notes) else { return }
            var values: [String: SyncValue] = [:]
            if random.chance(60) { values["title"] = word() }
            if values.isEmpty || random.chance(50) { values["body"] = word() }
            try update(client, "notes", note, values)
        case 6:
            guard let folder = random.pick(folders) else { return }
            try update(client, "folders", folder, ["name": word()])
        case 7:
            guard let tag = random.pick(tags) else { return }
            try update(client, "tags", tag, ["name": word()])
        case 8:
            guard let note = random.pick(notes) else { return }
            try update(client, "notes", note, ["folder_id": optionalFolder])
        case 9:
            guard let note = random.pick(notes), let tag = random.pick(tags) else { return }
            try insert(client, "note_tags", newID("nt", client), ["note_id": .text(note), "tag_id": .text(tag)])
        case 10:
            guard let link = random.pick(links) else { return }
            try delete(client, "note_tags", link)
        case 11:
            let table = random.pick(["notes", "notes", "folders", "tags"])!
            guard let row = random.pick(ids(table)) else { return }
            try deleteWithChildren(client, table, row, rows)
        case 12:
            let (table, syncID) = random.pick(SimulatedNotes.sharedIDs)!
            guard !rows.contains(where: { $0.table == table && $0.syncID == syncID }) else { return }
            if try store.deletionStamp(table: table, syncID: syncID, localClient: client.identifier) != nil {
                try reinsert(client, table, syncID)
            } else {
                try insert(client, table, syncID, ["name": word()])
            }
        default:
            // Rows deleted here and not brought back since (under last writer wins, a newer write may have).
            let deleted = journal.deletes.filter { delete in
                (try? store.deletionStamp(table: delete.table, syncID: delete.syncID, localClient: client.identifier))
                    != nil
                    && !rows.contains { $0.table == delete.table && $0.syncID == delete.syncID }
            }
            guard let target = random.pick(deleted) else { return }
            try reinsert(client, target.table, target.syncID)
        }
    }

    /// Deletes a row like an app under SQLite's foreign keys: first detaches or deletes the rows that refer to it.
    private func deleteWithChildren(_ client: SimulatedClient, _ table: String, _ row: String, _ rows: [CanonicalRow])
        throws
    {
        for child in rows {
            switch (table, child.table) {
            case ("folders", "notes") where child.values["folder_id"] == .text(row):
                try update(client, "notes", child.syncID, ["folder_id": .null])
            case ("notes", "note_tags") where child.values["note_id"] == .text(row),
                ("tags", "note_tags") where child.values["tag_id"] == .text(row):
                try delete(client, "note_tags", child.syncID)
            default: continue
            }
        }
        try delete(client, table, row)
    }

    /// Inserts a deleted sync ID again: refused under delete wins; under last writer wins the row comes back.
    private func reinsert(_ client: SimulatedClient, _ table: String, _ syncID: String) throws {
        guard configuration.deletePolicy == .lastWriterWins else { return try refusedReinsert(client, table, syncID) }
        let definition = SimulatedNotes.tables.first { $0.name == table }!
        // References left empty: the rows they named may be gone (foreign keys hold for the app's writes).
        try insert(
            client, table, syncID,
            Dictionary(
                uniqueKeysWithValues: definition.columns.map {
                    ($0, definition.references[$0] == nil ? word() : SyncValue.null)
                }))
        summary.reinserts += 1
    }

    /// A large value, or the reference of an attached file; one of four contents each, so rows share them.
    private func attachmentValue(on client: SimulatedClient) throws -> SyncValue {
        let variant = random.int(0...3)
        let bytes = Data((0..<(300 + 100 * variant)).map { UInt8(truncatingIfNeeded: $0 &* (variant + 7)) })
        guard random.chance(50), let document = client.document else { return .blob(bytes) }
        let file = client.folder.appendingPathComponent("attachment-\(variant).bin")
        try bytes.write(to: file)
        let reference = try document.attachFile(
            at: file, mode: random.chance(50) ? .copy : .immutable,
            metadata: ["name": "attachment-\(variant).bin"])
        return .blob(reference.databaseValue)
    }

    private func insert(_ client: SimulatedClient, _ table: String, _ syncID: String, _ values: [String: SyncValue])
        throws
    {
        let columns = SimulatedNotes.tables.first { $0.name == table }!.columns
        let full = Dictionary(uniqueKeysWithValues: columns.map { ($0, values[$0] ?? .null) })
        try client.store.insert(table: table, syncID: syncID, values: full)
        try journal.recordWrite(
            client: client.identifier, store: client.store, table: table, syncID: syncID, values: full)
        summary.writes += 1
        log("\(client.name) inserts \(CanonicalRow(table: table, syncID: syncID, values: full))")
    }

    private func update(_ client: SimulatedClient, _ table: String, _ syncID: String, _ values: [String: SyncValue])
        throws
    {
        let store = client.store
        let current = try store.allRows().first { $0.table == table && $0.syncID == syncID }?.values ?? [:]
        var previous: [String: ChangeStamp] = [:]
        for column in values.keys {
            previous[column] = try store.stamp(
                of: ColumnKey(table: table, syncID: syncID, column: column), localClient: client.identifier)
        }
        guard try store.update(table: table, syncID: syncID, values: values) else {
            throw SimulationFailure.Detail("\(client.name) could not update \(table)[\(syncID)], a row it has")
        }
        // The hybrid logical clock must stamp a new write above the write it replaces, whatever the wall clock says.
        for (column, value) in values where value != current[column] {
            let key = ColumnKey(table: table, syncID: syncID, column: column)
            if let before = previous[column], let after = try store.stamp(of: key, localClient: client.identifier),
                !(after > before)
            {
                throw SimulationFailure.Detail(
                    "\(client.name) wrote \(key) at \(after.timestamp), not after the value it replaced (\(before.timestamp)/\(before.clientIdentifier))"
                )
            }
        }
        try journal.recordWrite(
            client: client.identifier, store: client.store, table: table, syncID: syncID, values: values)
        summary.writes += 1
        log("\(client.name) updates \(CanonicalRow(table: table, syncID: syncID, values: values))")
    }

    private func delete(_ client: SimulatedClient, _ table: String, _ syncID: String) throws {
        guard try client.store.delete(table: table, syncID: syncID) else {
            throw SimulationFailure.Detail("\(client.name) could not delete \(table)[\(syncID)], a row it has")
        }
        try journal.recordDelete(client: client.identifier, store: client.store, table: table, syncID: syncID)
        summary.writes += 1
        summary.deletes += 1
        log("\(client.name) deletes \(table)[\(syncID)]")
    }

    /// Inserting a deleted sync ID must be refused and change nothing.
    private func refusedReinsert(_ client: SimulatedClient, _ table: String, _ syncID: String) throws {
        let store = client.store
        let before = try store.allRows()
        let pendingBefore = try store.adapter.hasUnpublishedChanges()
        let columns = SimulatedNotes.tables.first { $0.name == table }!.columns
        do {
            try store.insert(
                table: table, syncID: syncID,
                values: Dictionary(uniqueKeysWithValues: columns.map { ($0, SyncValue.text("again")) }))
            throw SimulationFailure.Detail("\(client.name) re-inserted the deleted \(table)[\(syncID)]")
        } catch let error as FolderSyncError where error.code == .invalidConfiguration {
            guard try store.allRows() == before, try store.adapter.hasUnpublishedChanges() == pendingBefore else {
                throw SimulationFailure.Detail(
                    "a refused re-insert of \(table)[\(syncID)] changed \(client.name)'s store")
            }
            summary.refusedReinserts += 1
            log("\(client.name) is refused re-inserting deleted \(table)[\(syncID)]")
        }
    }
}
