import ArgumentParser

/// `notes`: a small notes app that syncs through a shared folder with FolderSync.
@main
struct Notes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A notes app that syncs through a shared folder with FolderSync.",
        subcommands: [Demo.self])
}
