import ArgumentParser

/// `foldersync documents …`.
struct DocumentsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "documents",
        abstract: "Work with the application's documents.",
        subcommands: [List.self])

    /// `foldersync documents list`: not implemented yet.
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the documents: identifier, description, clients, size (not implemented yet).")

        @OptionGroup var remote: RemoteOptions
        @OptionGroup var output: OutputOptions

        func run() async throws { throw ToolFailure.notImplemented("documents list") }
    }
}
