import ArgumentParser

/// `foldersync export`: not implemented yet.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write the document's merged data to a new SQLite file (not implemented yet).")

    @OptionGroup var remote: RemoteOptions

    @Option(help: ArgumentHelp("The document to export.", valueName: "ID"))
    var document: String

    @Option(help: ArgumentHelp("The SQLite file to create; it must not exist.", valueName: "PATH.sqlite"))
    var output: String

    @OptionGroup var format: OutputOptions

    func run() async throws { throw ToolFailure.notImplemented("export") }
}
