import ArgumentParser
@_spi(Tooling) import FolderSync
import Foundation

extension StoreCommand {
    /// `foldersync store detach`: the library's `GRDBStore.stopTracking`, for a user without the app.
    struct Detach: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Stop syncing a document on this device: leave a plain SQLite file any program can write.",
            discussion: """
                In one transaction, removes the capture triggers and every foldersync_ table from PATH; the app's \
                tables and rows stay exactly as they are. Then removes the helper folder (--helper), but for reset \
                backups and the attachment files rows reference. With --remote, first deletes this device from the \
                document's clients in the shared folder, as the device itself would, so that it holds no vacuum back \
                (the helper folder says which device and document). Local changes no other device has stop the detach \
                (exit 2, nothing changed) unless --keep-unpublished: they then stay in the rows, on this device only. \
                Attaching the file again later with the app is a first registration that keeps every row.
                """)

        @OptionGroup var store: LocalStoreOptions

        @Flag(help: "Detach even when local changes never reached another device; they stay on this device only.")
        var keepUnpublished = false

        @Option(
            help: ArgumentHelp(
                "The shared folder, to leave it as this device (needs --helper); see "
                    + "'foldersync help doctor' for the forms and credentials.", valueName: "LOCATION"))
        var remote: String?

        @Option(
            help: ArgumentHelp(
                "A file whose first line is the encryption password of an encrypted application.",
                valueName: "PATH"))
        var passwordFile: String?

        @OptionGroup var output: OutputOptions

        func run() async throws {
            let path = try store.document()
            let unpublished = try GRDBStore.unpublishedChanges(inDocumentAt: path)
            guard keepUnpublished || unpublished.isEmpty else {
                throw ToolFailure(
                    "\(path): \(unpublished) hold local changes no other device has; sync them with the app "
                        + "first, or pass --keep-unpublished to keep them on this device only. Nothing was changed")
            }
            var left: String?
            if let remote { left = try await leave(remote) }
            let report = try await GRDBStore.stopTracking(
                documentAt: path, helperDirectory: store.helperDirectory,
                keepingUnpublishedChanges: keepUnpublished)
            let result = StoreDetachOutput(
                document: path, untrackedTables: report.untrackedTables,
                unpublishedChanges: report.unpublishedChanges.rowsByTable,
                helper: store.helper, keptHelperItems: report.keptHelperItems.map(\.path),
                leftSharedFolder: left)
            if output.json {
                try JSONOutput.print(result)
            } else {
                print(result.text, terminator: "")
            }
        }

        /// Deletes the device the helper folder names from its document, as that device (its own departure, which
        /// attaching again lifts); returns the client identifier.
        private func leave(_ location: String) async throws -> String {
            guard let helper = store.helperDirectory,
                let identity = try LocalLayout(helperDirectory: helper).rememberedRegistration()
            else {
                throw ToolFailure(
                    "--remote needs the helper folder (--helper) of a registered device, "
                        + "to know which device leaves")
            }
            var arguments = ["--remote", location, "--app", identity.application]
            if let passwordFile { arguments += ["--password-file", passwordFile] }
            let opened = try await RemoteOptions.parse(arguments).open()
            let layout = try RemoteLayout(applicationIdentifier: identity.application)
            let maintenance = try DocumentMaintenance(
                context: DocumentOperationContext(
                    fileSystem: opened.fileSystem, layout: layout, documentIdentifier: identity.document,
                    clientIdentifier: identity.client, environment: RemoteOptions.Opened.environment))
            do {
                try await maintenance.deleteClient(identity.client)
            } catch FolderSyncError.Code.remoteItemNotFound {
                // Never made a folder in the document: nothing to leave.
            }
            return identity.client
        }
    }
}

/// What `store detach` prints. JSON: `{"document", "untrackedTables", "unpublishedChanges": {table: rows},
/// "helper"?, "keptHelperItems", "leftSharedFolder"?}` (`leftSharedFolder`: the client deleted with `--remote`).
struct StoreDetachOutput: Encodable {
    let document: String
    let untrackedTables: [String]
    let unpublishedChanges: [String: Int]
    let helper: String?
    let keptHelperItems: [String]
    let leftSharedFolder: String?

    var text: String {
        let shown = TerminalText.escaped(document)
        let tables = untrackedTables.map(TerminalText.escaped).joined(separator: ", ")
        var text =
            untrackedTables.isEmpty
            ? "\(shown) had no change tracking; it is a plain SQLite file.\n"
            : "Detached \(shown): \(tables) no longer tracked; it is a plain SQLite file.\n"
        let unpublished = UnpublishedChanges(rowsByTable: unpublishedChanges)
        if !unpublished.isEmpty {
            text += "Kept on this device only, never published: \(TerminalText.escaped(unpublished.description)).\n"
        }
        if let helper {
            let kept = keptHelperItems.map(TerminalText.escaped).joined(separator: ", ")
            text +=
                keptHelperItems.isEmpty
                ? "Removed the helper folder \(TerminalText.escaped(helper)).\n"
                : "Removed the helper folder \(TerminalText.escaped(helper)) but for: \(kept).\n"
        }
        if let leftSharedFolder {
            text += "Left the shared folder: client \(leftSharedFolder) deleted from the document's clients.\n"
        } else {
            text +=
                "The shared folder still lists this device until it is deleted there ('foldersync clients delete', "
                + "or detach with --remote).\n"
        }
        return text
    }
}
