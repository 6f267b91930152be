import ArgumentParser

/// `foldersync vacuum`: not implemented yet.
struct VacuumCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vacuum",
        abstract: "Delete remote files nobody needs any more (not implemented yet).",
        discussion: "DURATION is a whole number and a unit: s, m (minutes), h, d or w, as in 90d, 12h or 30m.")

    @OptionGroup var remote: RemoteOptions

    @Option(help: ArgumentHelp("Vacuum only this document (default: every document).", valueName: "ID"))
    var document: String?

    @Flag(help: "Say what would be deleted, delete nothing.")
    var dryRun = false

    @Option(help: ArgumentHelp("Expire clients silent for longer than this; they reset safely when they return.",
                               valueName: "DURATION"),
            transform: ExpiryDuration.parse)
    var expireClientsAfter: ExpiryDuration?

    @OptionGroup var output: OutputOptions

    func run() async throws { throw ToolFailure.notImplemented("vacuum") }
}
