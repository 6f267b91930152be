import ArgumentParser
@_spi(Tooling) import FolderSync

/// `foldersync layout`: the remote tree as the library's catalog describes it; needs no remote.
struct LayoutCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "layout",
        abstract: "Print the remote layout: every folder and file of a shared tree and what it is for.",
        discussion: "With --json, prints RemoteLayouts/v1/layout.json: the same catalog the library and doctor use.")

    @OptionGroup var output: OutputOptions

    func run() throws {
        if output.json {
            JSONOutput.write(try RemoteLayout.catalogJSON())
            return
        }
        print(
            "Remote layout version \(RemoteLayout.formatVersion). Files being written are named \(TemporaryName.prefix)<random>-<name>."
        )
        var table = TextTable()
        for entry in RemoteLayout.catalog {
            let components = entry.pattern.split(separator: "/")
            let name =
                String(repeating: "  ", count: components.count - 1) + components.last!
                + (entry.kind == .directory ? "/" : "")
            var flags: [String] = []
            if entry.perClient { flags.append("per client") }
            if entry.optional { flags.append("optional") }
            if entry.kind == .file && entry.encryptedWhenEnabled { flags.append("encrypted") }
            table.append(
                name, entry.kind == .directory ? "" : entry.format,
                entry.summary + (flags.isEmpty ? "" : " [" + flags.joined(separator: ", ") + "]"))
        }
        print(table.render(), terminator: "")
    }
}
