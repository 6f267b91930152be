import ArgumentParser
@_spi(Tooling) import FolderSync
import Foundation

/// `foldersync inspect FILE`: one remote file decoded by the library's own readers.
struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Decode a change set, whole-store manifest, recent sync or FolderSync property list.",
        discussion: """
            The file is recognized by its signature (FSCHGSET for change sets) or its property-list kind. \
            Change sets are verified first, then streamed: a header, then one line (or JSON object) per change. \
            A file that fails verification exits with code 2 and the reason.
            """)

    @Argument(help: ArgumentHelp("The file to decode.", valueName: "FILE"))
    var file: String

    @OptionGroup var output: OutputOptions

    func run() throws {
        let url = URL(fileURLWithPath: file)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw ToolFailure("\(file): no such file")
        }
        guard let handle = FileHandle(forReadingAtPath: url.path) else {
            throw ToolFailure("\(file): cannot be opened")
        }
        let signature = try handle.read(upToCount: 8) ?? Data()
        try handle.close()
        if signature == Data("FSYNCENC".utf8) {
            throw ToolFailure(
                "\(file): the file is encrypted; read it through its shared folder (doctor, export) with --password-file"
            )
        }
        if signature == Data("FSCHGSET".utf8) || url.pathExtension == RemoteLayout.changeSetExtension {
            try ChangeSetPrinter(file: file, url: url, json: output.json).print()
        } else {
            try PropertyListPrinter(file: file, data: try Data(contentsOf: url), json: output.json).print()
        }
    }
}
