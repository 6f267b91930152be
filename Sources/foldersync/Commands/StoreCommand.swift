import ArgumentParser
import Foundation

/// `foldersync store …`: one device's own document and helper folder, for a user without the app.
struct StoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Work with a device's local document: detach it from sync, check its bookkeeping.",
        subcommands: [Detach.self, Check.self])
}

/// The options that name a device's document and its helper folder.
struct LocalStoreOptions: ParsableArguments {
    @Argument(help: ArgumentHelp("The document's SQLite file.", valueName: "PATH"))
    var path: String

    @Option(
        help: ArgumentHelp(
            "The document's helper folder on this device (the app's DocumentSyncManager helper directory).",
            valueName: "DIR"))
    var helper: String?

    /// The document, refused when it is not a file.
    func document() throws -> String {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue else {
            throw ToolFailure("\(path): no such file")
        }
        return path
    }

    var helperDirectory: URL? { helper.map { URL(fileURLWithPath: $0, isDirectory: true) } }
}
