import ArgumentParser
@_spi(Tooling) import FolderSync

extension ClientsCommand {
    /// `foldersync clients list`: per document, because what a client holds back, its last sync and its
    /// acknowledgement are per document; clients registered with no document follow.
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List registered clients, when each last synced and whether it holds vacuum back.",
            discussion: """
                Lists the clients of every document (or of --document), deleted ones flagged, then the clients \
                registered with the application but with no document. HOLDS VACUUM BACK counts the change sets a \
                whole store already contains that vacuum keeps only because this client has not applied them \
                ("by it alone": what deleting or expiring it would free). Reads the shared folder and writes nothing.
                """)

        @OptionGroup var remote: RemoteOptions

        @Option(help: ArgumentHelp("List only the clients of this document.", valueName: "ID"))
        var document: String?

        @OptionGroup var output: OutputOptions

        func run() async throws {
            let opened = try await remote.open()
            let documents = try await opened.documents(selecting: document)
            var progress = ProgressLine(total: documents.count)
            var listed: [ClientsOutput.Document] = []
            for (index, entry) in documents.enumerated() {
                progress.show(index + 1, "document \(entry.identifier)")
                let clients = try await opened.maintenance(document: entry.identifier).registeredClients()
                listed.append(
                    .init(
                        identifier: entry.identifier, description: entry.documentDescription,
                        clients: clients.map(ClientsOutput.Client.init)))
            }
            progress.clear()
            var unattached: [ClientsOutput.UnattachedClient] = []
            if document == nil {
                let attached = Set(listed.flatMap { $0.clients.map(\.identifier) })
                unattached = try await opened.applicationManager().registeredClients()
                    .filter { !attached.contains($0.identifier) }
                    .map {
                        .init(
                            identifier: $0.identifier, description: $0.clientDescription,
                            registrationDate: $0.registrationDate)
                    }
            }
            let result = ClientsOutput(
                application: opened.applicationIdentifier, documents: listed, clientsWithoutDocuments: unattached)
            if output.json {
                try JSONOutput.print(result)
            } else {
                print(result.text(), terminator: "")
            }
        }
    }
}
