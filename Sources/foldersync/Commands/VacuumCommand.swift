import ArgumentParser
@_spi(Tooling) import FolderSync

/// `foldersync vacuum`: the library's vacuum of each document, reported together.
struct VacuumCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vacuum",
        abstract: "Delete remote files nobody needs any more.",
        discussion: """
            A change set goes once every live client has applied it and every kept whole store contains it; whole \
            stores another one contains go, as do temporaries older than an hour and what deleted clients left. \
            What goes is moved into the document's Removed/ area, where readers heal from it and `foldersync removed` \
            lists and restores it, for --keep-removed (14d by default); removals older than that are purged. \
            Ages are judged by the shared folder's own clock (the dates it records), and a difference with this \
            computer's clock is reported. --dry-run reports the same plan and removes and writes nothing. Lists what \
            each client holds back, the clients expired and the files left alone. A document that cannot be \
            vacuumed, or a removal that fails, is reported and the others go on; the exit code is then 2. \
            \(ExpiryDuration.help)
            """)

    @OptionGroup var remote: RemoteOptions

    @Option(help: ArgumentHelp("Vacuum only this document (default: every document).", valueName: "ID"))
    var document: String?

    @Flag(help: "Say what would be deleted, delete nothing.")
    var dryRun = false

    @Option(
        help: ArgumentHelp(
            "Expire clients silent for longer than this; they reset safely when they return.",
            valueName: "DURATION"),
        transform: ExpiryDuration.parse)
    var expireClientsAfter: ExpiryDuration?

    @Option(
        help: ArgumentHelp(
            "Keep what is removed this long before a vacuum purges it (at least 1d).", valueName: "DURATION"),
        transform: ExpiryDuration.parseGracePeriod)
    var keepRemoved: ExpiryDuration?

    @OptionGroup var output: OutputOptions

    func run() async throws {
        let opened = try await remote.open()
        let documents = try await opened.documents(selecting: document)
        var progress = ProgressLine(total: documents.count)
        var results: [VacuumOutput.Document] = []
        for (index, entry) in documents.enumerated() {
            progress.show(index + 1, "document \(entry.identifier)")
            do {
                let report = try await opened.maintenance(document: entry.identifier)
                    .vacuum(
                        dryRun: dryRun, expireClientsAfter: expireClientsAfter?.seconds,
                        keepRemovedFor: keepRemoved?.seconds ?? VacuumOperation.defaultRemovedFileGracePeriod)
                results.append(.init(identifier: entry.identifier, report: report))
            } catch let error as FolderSyncError {
                results.append(.init(identifier: entry.identifier, error: error.description))
            }
        }
        progress.clear()
        let result = VacuumOutput(
            application: opened.applicationIdentifier, dryRun: dryRun,
            expireClientsAfter: expireClientsAfter?.description, documents: results)
        if output.json {
            try JSONOutput.print(result)
        } else {
            print(result.text, terminator: "")
        }
        let failed = results.filter(\.hasFailed)
        if !failed.isEmpty {
            let causes = failed.map {
                "\($0.identifier): \($0.error ?? Formatting.count($0.failures.count, "removal") + " failed")"
            }
            throw ToolFailure(
                "vacuum incomplete in \(Formatting.count(failed.count, "document")) (\(causes.joined(separator: "; "))); the next vacuum tries again"
            )
        }
    }
}
