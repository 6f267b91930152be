import ArgumentParser
@_spi(Tooling) import FolderSync

/// `foldersync documents …`.
struct DocumentsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "documents",
        abstract: "Work with the application's documents.",
        subcommands: [List.self])

    /// `foldersync documents list`: the library's list of previously synchronized documents.
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the documents: identifier, description, clients, size, last activity.",
            discussion: """
                CLIENTS counts the registered clients that are not deleted; LAST ACTIVITY is the newest last sync \
                among them; SIZE counts every file in the document's folder. Deleted documents are not listed. \
                Reads the shared folder and writes nothing to it.
                """)

        @OptionGroup var remote: RemoteOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let opened = try await remote.open()
            let result = DocumentsOutput(
                application: opened.applicationIdentifier,
                documents: try await opened.documents().map(DocumentsOutput.Document.init))
            if output.json {
                try JSONOutput.print(result)
            } else {
                print(result.text(), terminator: "")
            }
        }
    }
}
