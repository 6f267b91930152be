import ArgumentParser
@_spi(Tooling) import FolderSync

extension ClientsCommand {
    /// `foldersync clients delete`: the library's client deletion, after a confirmation that cron must give as `--yes`.
    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a client from a document; it resets safely at its next sync.",
            discussion: """
                Writes the client's DeletedClients marker, then moves its recent sync and its whole store into the \
                document's removed area, where `foldersync removed` lists them until a vacuum purges them (the store \
                stays in place when no other whole store holds the change sets already vacuumed that it holds). Its \
                change sets stay until vacuum finds that no client needs them. On a terminal it asks first; otherwise \
                --yes is required (exit 2 without it). Deleting a client that is already deleted does nothing and succeeds.
                """)

        @Argument(help: ArgumentHelp("The client identifier to delete.", valueName: "CLIENT"))
        var client: String

        @OptionGroup var remote: RemoteOptions

        @Option(help: ArgumentHelp("The document to delete the client from.", valueName: "ID"))
        var document: String

        @Flag(help: "Do not ask for confirmation.")
        var yes = false

        @OptionGroup var output: OutputOptions

        func run() async throws {
            // Before anything is read: an unattended run must say --yes, whatever the folder holds.
            guard yes || Terminal.standardInputIsTerminal else {
                throw ToolFailure(
                    "clients delete: standard input is not a terminal, so it cannot ask; pass --yes to delete \(client) without confirmation"
                )
            }
            let opened = try await remote.open()
            _ = try await opened.documents(selecting: document)
            let maintenance = try opened.maintenance(document: document)
            let clients = try await maintenance.registeredClients()
            guard let entry = clients.first(where: { $0.identifier == client }) else {
                let found = clients.isEmpty ? "" : " (found: \(clients.map(\.identifier).joined(separator: ", ")))"
                throw ToolFailure("client \(client) is not registered with document \(document)" + found)
            }
            let layout = maintenance.layout
            var result = ClientDeletionOutput(
                application: opened.applicationIdentifier, document: document, client: client,
                alreadyDeleted: entry.isDeleted, removed: [], kept: [])
            if !entry.isDeleted {
                if !yes {
                    let who = [
                        entry.clientDescription,
                        "last synced \(Formatting.dateAndAge(entry.lastSeenDate ?? entry.lastSyncDate))",
                    ]
                    .compactMap { $0 }.joined(separator: ", ")
                    guard Terminal.confirm("Delete client \(client) (\(who)) from document \(document)?") else {
                        throw ToolFailure("cancelled; nothing was deleted")
                    }
                }
                let report = try await maintenance.deleteClient(client)
                var kept: [ClientDeletionOutput.Kept] = []
                if report.keptWholeStore {
                    kept.append(
                        .init(
                            path: layout.wholeStoreDirectory(document, client: client).description,
                            reason: "no other whole store holds the change sets already vacuumed that it holds; "
                                + "vacuum removes it once another whole store contains everything it does"))
                }
                let changeSets = layout.syncChangesDirectory(document, client: client)
                if try await opened.fileSystem.exists(changeSets) {
                    kept.append(
                        .init(
                            path: changeSets.description,
                            reason: "its change sets; vacuum removes them once every client has applied them"))
                }
                result = ClientDeletionOutput(
                    application: result.application, document: document, client: client, alreadyDeleted: false,
                    removed: report.removed.map(\.description),
                    removalFolder: report.removalFolder?.description, kept: kept)
            }
            if output.json {
                try JSONOutput.print(result)
            } else {
                print(result.text, terminator: "")
            }
        }
    }
}
