import ArgumentParser

/// `foldersync`: the operator's tool for a shared folder, run from a terminal or cron with no app running.
struct Foldersync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "foldersync",
        abstract: "Inspect, check and maintain a FolderSync shared folder.",
        discussion: """
            Exit codes: 0 success (doctor: healthy), 1 problems found (doctor), 2 could not check or \
            could not finish (usage error, I/O error, refused confirmation, incomplete vacuum). \
            Errors are one line on standard error.
            """,
        subcommands: [
            LayoutCommand.self, InspectCommand.self, DoctorCommand.self,
            DocumentsCommand.self, ClientsCommand.self, VacuumCommand.self, RemovedCommand.self, ExportCommand.self,
            RecreateCommand.self, StoreCommand.self,
        ])
}
