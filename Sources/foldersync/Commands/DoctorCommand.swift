import ArgumentParser
@_spi(Tooling) import FolderSync

/// `foldersync doctor`: the library's `RemoteTreeDoctor`, printed.
struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check a shared folder against the layout and the sync invariants; optionally repair what is safe.",
        discussion: """
            Lists each finding with its severity (error, warning, info), check and path. --repair moves \
            temporaries older than one hour and corrupt files into the removed area of their document \
            (Documents/<id>/Removed/) or of the application (<appID>/Removed/), puts back change sets a removed \
            area keeps for a gap, and writes the integrity key of a document whose creation stopped half way; it \
            never deletes data, and it reports what it did and what remains. \
            Exit codes: 0 healthy, 1 problems found (after --repair: problems remain), 2 could not check.
            """)

    @OptionGroup var remote: RemoteOptions

    @Option(help: ArgumentHelp("Check only this document (and the application-level files).", valueName: "ID"))
    var document: String?

    @Flag(
        help:
            "Move abandoned temporaries and corrupt files aside, fill gaps from the removed areas, complete half-created documents, then check again."
    )
    var repair = false

    @OptionGroup var output: OutputOptions

    func run() async throws {
        let opened = try await remote.open()
        if let document { try await opened.requireDocumentFolder(document) }
        let doctor = try RemoteTreeDoctor(
            fileSystem: opened.fileSystem, applicationIdentifier: opened.applicationIdentifier)
        let report = try await doctor.examine(document: document)
        var result = DoctorOutput(report: report)
        if repair {
            result.repairs = try await doctor.repair(report)
            let after = try await doctor.examine(document: document)
            result.remaining = after.findings
            result.healthy = after.isHealthy
        }
        if output.json {
            try JSONOutput.print(result)
        } else {
            print(result.text(repairable: report.isRepairable), terminator: "")
        }
        if !result.healthy { throw ExitCode(ToolExit.problemsFound) }
    }
}
