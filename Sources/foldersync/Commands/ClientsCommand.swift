import ArgumentParser

/// `foldersync clients …`.
struct ClientsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clients",
        abstract: "Work with the registered clients.",
        subcommands: [List.self, Delete.self])

    /// `foldersync clients list`: not implemented yet.
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List registered clients, when each last synced and whether it holds vacuum back (not implemented yet).")

        @OptionGroup var remote: RemoteOptions

        @Option(help: ArgumentHelp("List only the clients of this document.", valueName: "ID"))
        var document: String?

        @OptionGroup var output: OutputOptions

        func run() async throws { throw ToolFailure.notImplemented("clients list") }
    }

    /// `foldersync clients delete`: not implemented yet.
    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a client from a document; it resets safely at its next sync (not implemented yet).")

        @Argument(help: ArgumentHelp("The client identifier to delete.", valueName: "CLIENT"))
        var client: String

        @OptionGroup var remote: RemoteOptions

        @Option(help: ArgumentHelp("The document to delete the client from.", valueName: "ID"))
        var document: String

        @Flag(help: "Do not ask for confirmation.")
        var yes = false

        @OptionGroup var output: OutputOptions

        func run() async throws { throw ToolFailure.notImplemented("clients delete") }
    }
}
