import FolderSync
import Foundation

/// How `notes` prints listings and reports, for people and for scripts.
enum NotesOutput {
    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self) + "\n"
    }

    static func table(_ notes: [NoteListing]) -> String {
        notes.map { note in
            var line = "\(note.id)  \(note.text.replacingOccurrences(of: "\n", with: " ⏎ "))"
            if let folder = note.folder { line += "  [\(folder)]" }
            if !note.tags.isEmpty { line += "  #" + note.tags.joined(separator: " #") }
            return line + "\n"
        }.joined()
    }

    static func describe(_ report: SyncReport) -> String {
        var text = "sent \(report.changesSent) change(s) in \(report.changeSetsSent) set(s); "
            + "applied \(report.changesApplied) change(s) from \(report.changeSetsApplied) set(s)"
        if !report.conflicts.isEmpty { text += "; \(report.conflicts.count) conflict(s)" }
        text += "\n"
        for conflict in report.conflicts {
            text += "  conflict on \(conflict.conflict.key): \(conflict.resolution)\n"
        }
        for warning in report.warnings { text += "  warning: \(warning)\n" }
        return text
    }
}

/// The JSON shape of `notes sync --json`.
struct SyncReportSummary: Codable {
    var changeSetsSent, changesSent, changeSetsApplied, changesApplied, changesIgnored, conflicts: Int
    var warnings: [String]
    var bytesSent, bytesReceived: Int64
    var remoteRequests: Int

    init(_ report: SyncReport) {
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
