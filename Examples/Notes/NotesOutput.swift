import FolderSync
import Foundation

/// How `notes` prints listings and reports, for people and for scripts.
enum NotesOutput {
    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self) + "\n"
    }

    /// The one place `notes` makes text written by other devices safe to print: a line break is shown as ` ⏎ `,
    /// every other control character (terminal escape sequences, NUL, DEL, C1 controls, Unicode line separators and
    /// direction overrides) as `\u{1B}`, so a note cannot drive the terminal or forge a line of the listing.
    static func escaped(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x0A: result += " ⏎ "
            case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069:
                result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    static func table(_ notes: [NoteListing]) -> String {
        notes.map { note in
            var line = "\(escaped(note.id))  \(escaped(note.text))"
            if let folder = note.folder { line += "  [\(escaped(folder))]" }
            if !note.tags.isEmpty { line += "  #" + note.tags.map(escaped).joined(separator: " #") }
            return line + "\n"
        }.joined()
    }

    static func describe(_ report: SyncReport) -> String {
        var text =
            "sent \(report.changesSent) change(s) in \(report.changeSetsSent) set(s); "
            + "applied \(report.changesApplied) change(s) from \(report.changeSetsApplied) set(s)"
        if !report.conflicts.isEmpty { text += "; \(report.conflicts.count) conflict(s)" }
        text += "\n"
        for conflict in report.conflicts {
            text +=
                "  conflict on \(escaped(conflict.conflict.key.description)): \(escaped(conflict.resolution.description))\n"
        }
        // Each warning once, however many steps of the sync noticed it.
        var seen: Set<String> = []
        for warning in report.warnings.map(\.description) where seen.insert(warning).inserted {
            text += "  warning: \(escaped(warning))\n"
        }
        return text
    }

    /// What other devices changed in the notes, a line per device: `3 notes changed on phone: Groceries (new),
    /// Ideas (edited), 1 deleted`. `names` are the devices' names by client identifier, `titles` the notes' by ID.
    static func changedNotes(_ changes: [RowChanges], names: [String: String], titles: [String: String]) -> [String] {
        changes.filter { $0.table == "notes" && $0.count > 0 }.map { change in
            func title(_ id: String) -> String {
                let title = titles[id].map { $0.isEmpty ? "(untitled)" : $0 } ?? id
                return escaped(title.count > 40 ? title.prefix(39) + "…" : title)
            }
            var parts =
                change.inserted.map { title($0) + " (new)" }
                + change.updated.keys.sorted().map { title($0) + " (edited)" }
            if change.deleteCount > 0 { parts.append("\(change.deleteCount) deleted") }
            if !change.listsEveryRow { parts.append("and more") }
            let device = escaped(names[change.client] ?? change.client)
            return "\(change.count) note\(change.count == 1 ? "" : "s") changed on \(device): "
                + parts.joined(separator: ", ")
        }
    }

    /// One line on standard error: `notes: ` and the message, escaped.
    static func printError(_ message: String) {
        FileHandle.standardError.write(Data(("notes: " + escaped(message) + "\n").utf8))
    }

    /// Asks on standard error and reads one line from standard input; only `y` or `yes` (any case) is a yes.
    static func confirm(_ question: String) -> Bool {
        FileHandle.standardError.write(Data((escaped(question) + " [y/N] ").utf8))
        guard let answer = readLine(strippingNewline: true) else { return false }
        return ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased())
    }
}

/// The JSON shape of `notes sync --json`.
struct SyncReportSummary: Codable {
    /// The rows of one table one device changed here (``RowChanges``), with the device's name when known.
    struct ChangedRows: Codable {
        var table, client: String
        var device: String?
        var insertCount, updateCount, deleteCount: Int
        var inserted: [String]
        var updated: [String: [String]]
        var deleted: [String]
        var listsEveryRow: Bool
    }

    var changeSetsSent, changesSent, changeSetsApplied, changesApplied, changesIgnored, conflicts: Int
    var warnings: [String]
    var bytesSent, bytesReceived: Int64
    var remoteRequests: Int
    var rowChanges: [ChangedRows]

    init(_ report: SyncReport, names: [String: String] = [:]) {
        rowChanges = report.rowChanges.map { change in
            ChangedRows(
                table: change.table, client: change.client, device: names[change.client],
                insertCount: change.insertCount,
                updateCount: change.updateCount, deleteCount: change.deleteCount, inserted: change.inserted,
                updated: change.updated, deleted: change.deleted, listsEveryRow: change.listsEveryRow)
        }
        changeSetsSent = report.changeSetsSent
        changesSent = report.changesSent
        changeSetsApplied = report.changeSetsApplied
        changesApplied = report.changesApplied
        changesIgnored = report.changesIgnored
        conflicts = report.conflicts.count
        warnings = report.warnings.map(\.description)
        bytesSent = report.bytesSent
        bytesReceived = report.bytesReceived
        remoteRequests = report.remoteRequests
    }
}
