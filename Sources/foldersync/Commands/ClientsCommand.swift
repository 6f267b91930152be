import ArgumentParser

/// `foldersync clients …`.
struct ClientsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clients",
        abstract: "Work with the registered clients.",
        subcommands: [List.self, Delete.self])
}
