import ArgumentParser
@_spi(Tooling) import FolderSync

extension StoreCommand {
    /// `foldersync store check`: the library's `LocalStoreDoctor`, printed as `doctor` prints.
    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a device's document and helper folder against each other; optionally repair what is safe.",
            discussion: """
                Reads PATH and the helper folder (--helper) without changing them: rows against their registers, \
                pending changes and tombstones against rows, staged change sets on disk against the staged table, the \
                applied ledger against itself and against what this device's marker claimed, local attachments present \
                and intact, the bookkeeping version. Lists each finding with its severity (error, warning, info), check \
                and path, as doctor does. --repair removes only staged files no table names and damaged attachment \
                copies (fetched again when needed), then checks again. \
                Exit codes: 0 healthy, 1 problems found (after --repair: problems remain), 2 could not check.
                """)

        @OptionGroup var store: LocalStoreOptions

        @Flag(help: "Remove stray staged files and damaged attachment copies, then check again.")
        var repair = false

        @OptionGroup var output: OutputOptions

        func run() async throws {
            let doctor = LocalStoreDoctor(storePath: try store.document(), helperDirectory: store.helperDirectory)
            let report = try doctor.examine()
            var result = StoreCheckOutput(report: report)
            if repair {
                result.repairs = try doctor.repair(report)
                let after = try doctor.examine()
                result.remaining = after.findings
                result.healthy = after.isHealthy
            }
            if output.json {
                try JSONOutput.print(result)
            } else {
                print(result.text, terminator: "")
            }
            if !result.healthy { throw ExitCode(ToolExit.problemsFound) }
        }
    }
}

/// What `store check` prints. JSON: `{"store", "helper"?, "bookkeepingVersion"?, "healthy", "findings", "repairs"?,
/// "remaining"?}`, findings as `doctor`'s; `repairs` and `remaining` appear only with `--repair`.
struct StoreCheckOutput: Encodable {
    let store: String
    let helper: String?
    let bookkeepingVersion: Int?
    var healthy: Bool
    let findings: [DoctorFinding]
    var repairs: [DoctorRepairAction]?
    var remaining: [DoctorFinding]?

    init(report: LocalCheckReport) {
        store = report.store
        helper = report.helper
        bookkeepingVersion = report.bookkeepingVersion
        healthy = report.isHealthy
        findings = report.findings
    }

    var text: String {
        let version = bookkeepingVersion.map { " (bookkeeping version \($0))" } ?? ""
        let folder = helper.map { " and \(TerminalText.escaped($0))" } ?? ""
        return "Checked \(TerminalText.escaped(store))\(version)\(folder).\n" + DoctorOutput.list(findings)
            + DoctorOutput.repairs(repairs, remaining: remaining, findings: findings)
    }
}
