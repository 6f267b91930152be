import ArgumentParser
@_spi(Tooling) import FolderSync
import Foundation

/// `foldersync removed …`: the documents' removed areas, where vacuum, client deletion and repair put what they remove.
struct RemovedCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "removed",
        abstract:
            "List and restore what vacuum, client and document deletion and repair removed (kept for a grace period).",
        discussion: """
            Nothing removed from a shared folder is gone at once: it stays in the document's Removed/ area until a \
            vacuum purges it (after 14 days by default, see vacuum --keep-removed). Devices that meet a gap apply \
            what they need from there on their own; these commands let an operator see and undo removals.
            """,
        subcommands: [List.self, Restore.self])

    /// `foldersync removed list`.
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List what each document's removed area keeps: who removed what, when, why, and its size.",
            discussion: """
                Reads the shared folder and writes nothing. Dates of removals are the folder's own. A deleted document \
                is listed too, with the deletion that keeps its folder.
                """)

        @OptionGroup var remote: RemoteOptions

        @Option(help: ArgumentHelp("List only this document.", valueName: "ID"))
        var document: String?

        @OptionGroup var output: OutputOptions

        func run() async throws {
            let opened = try await remote.open()
            var documents: [RemovedOutput.Document] = []
            for entry in try await opened.removedAreaDocuments(selecting: document, includingDeleted: true) {
                let removals = try await opened.maintenance(document: entry.identifier).removals()
                documents.append(
                    .init(
                        identifier: entry.identifier, deleted: entry.deleted,
                        removals: removals.map(RemovedOutput.Removal.init)))
            }
            let result = RemovedOutput(application: opened.applicationIdentifier, documents: documents)
            if output.json {
                try JSONOutput.print(result)
            } else {
                print(result.text(), terminator: "")
            }
        }
    }

    /// `foldersync removed restore`.
    struct Restore: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Put back what the removed areas keep, where nothing is again.",
            discussion: """
                Every removal of every document, or only --document's, only --client's files (its change sets, recent \
                sync and whole store), only removals made at or after --since (an ISO 8601 date or time in UTC, \
                2026-11-29 or 2026-11-29T10:00:00Z, compared with the folder's own dates). A file goes back only where \
                nothing is again, a whole store only into an empty folder; temporaries stay. A later vacuum removes \
                again what nobody needs. --document naming a deleted document brings it back whole (unless it was \
                created again since), and devices sync it again; without --document deleted documents stay deleted.
                """)

        @OptionGroup var remote: RemoteOptions

        @Option(help: ArgumentHelp("Restore only in this document.", valueName: "ID"))
        var document: String?

        @Option(help: ArgumentHelp("Restore only this client's files.", valueName: "CLIENT"))
        var client: String?

        @Option(
            help: ArgumentHelp("Restore only removals made at or after this time (UTC).", valueName: "TIME"),
            transform: RemovedCommand.parseTime)
        var since: Date?

        @OptionGroup var output: OutputOptions

        func run() async throws {
            let opened = try await remote.open()
            var documents: [RestoreOutput.Document] = []
            for entry in try await opened.removedAreaDocuments(selecting: document, includingDeleted: false) {
                let report = try await opened.maintenance(document: entry.identifier).restoreRemoved(
                    client: client, since: since)
                documents.append(.init(identifier: entry.identifier, report: report))
            }
            let result = RestoreOutput(application: opened.applicationIdentifier, documents: documents)
            if output.json {
                try JSONOutput.print(result)
            } else {
                print(result.text, terminator: "")
            }
        }
    }

    /// `2026-11-29` (midnight UTC) or `2026-11-29T10:00:00Z`.
    static func parseTime(_ argument: String) throws -> Date {
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: argument) { return date }
        formatter.formatOptions = [.withFullDate]
        if let date = formatter.date(from: argument) { return date }
        throw ValidationError(
            "'\(argument)' is not a time: expected an ISO 8601 date or time in UTC, like 2026-11-29 or 2026-11-29T10:00:00Z"
        )
    }
}
