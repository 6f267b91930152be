import ArgumentParser
@_spi(Tooling) import FolderSync
import Foundation

/// `foldersync export`: the merged document as a new SQLite file, from the shared folder alone.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write the document's merged data to a new SQLite file.",
        discussion: """
            Starts from the whole store that covers the most change sets, then applies every later change set with \
            the clients' own merge rules. Reads the shared folder and writes nothing to it. The output holds the \
            synced tables only.
            """)

    @OptionGroup var remote: RemoteOptions

    @Option(help: ArgumentHelp("The document to export.", valueName: "ID"))
    var document: String

    @Option(help: ArgumentHelp("The SQLite file to create; it must not exist.", valueName: "PATH.sqlite"))
    var output: String

    @OptionGroup var format: OutputOptions

    /// The JSON shape of `export --json`.
    struct Summary: Encodable {
        var output: String
        var wholeStore: String?
        var changeSetsApplied: Int
        var rows: [String: Int]
        var warnings: [String]
    }

    func run() async throws {
        let url = URL(fileURLWithPath: output)
        let folder = url.deletingLastPathComponent().path
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue,
            FileManager.default.isWritableFile(atPath: folder)
        else {
            throw ToolFailure(
                "--output \(output): cannot write there (\(folder) is not a folder this user can write to)")
        }
        guard !FileManager.default.fileExists(atPath: url.path) else {
            throw ToolFailure("--output \(output): the file exists")
        }
        let opened = try await remote.open()
        _ = try await opened.documents(selecting: document)
        let environment = RemoteOptions.Opened.environment
        let layout = try RemoteLayout(applicationIdentifier: opened.applicationIdentifier)
        let context = DocumentOperationContext(
            fileSystem: opened.fileSystem, layout: layout, documentIdentifier: document,
            clientIdentifier: RemoteOptions.Opened.actorIdentifier, environment: environment)
        let result = try await DocumentExport(context: context).run(to: url)
        let summary = Summary(
            output: url.path,
            wholeStore: result.wholeStore.map { "\($0.clientIdentifier) (\($0.coveredCount) change sets)" },
            changeSetsApplied: result.changeSetsApplied, rows: result.rowCounts,
            warnings: result.warnings.map(\.description))
        if format.json {
            try JSONOutput.print(summary)
        } else {
            print("Exported document \(document) to \(url.path)")
            print("  from whole store: \(summary.wholeStore ?? "none (tables rebuilt from change sets)")")
            print("  change sets applied: \(result.changeSetsApplied)")
            for (table, count) in result.rowCounts.sorted(by: { $0.key < $1.key }) {
                print("  \(table): \(count) rows")
            }
            for warning in summary.warnings { print("  warning: " + TerminalText.escaped("\(warning)")) }
        }
    }
}
