// foldersync-bench: FolderSync's performance against floors and peers measured in the same run.
//
//   foldersync-bench [--quick] [--only 1,3] [--big-rows N] [--large-value-bytes N] [--json PATH] [--work DIR]
//   foldersync-bench worker client|large …   (a client process started by the benchmark itself)
//
// Run it through scripts/bench, which builds in release mode, installs the peers (rsync, unison, curl)
// and starts a WebDAV server for scenario 4. JSON goes to PATH, by default foldersync-bench.json
// beside the executable (in the build folder). --big-rows sets the rows of scenarios 3 and 5's document
// (5,000,000 by default, 100,000 with --quick).
import Foundation

let scenarios: [any Scenario] = [
    BulkSyncScenario(transport: .folder),
    IncrementalSyncScenario(),
    BootstrapScenario(),
    BulkSyncScenario(transport: .webDAV),
    WholeFilePeerScenario(),
    EncryptionOverheadScenario(),
    CaptureOverheadScenario(),
    VacuumScenario(),
    WANScenario(),
    ManyClientsScenario(),
    AppReadsScenario(),
    TombstoneChurnScenario(),
    LargeValueScenario(),
]

func option(_ name: String, in arguments: [String]) -> String? {
    arguments.firstIndex(of: name).flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
}

func machineDescription() -> String {
    let memory = ProcessInfo.processInfo.physicalMemory / 1_073_741_824
    return "\(ProcessInfo.processInfo.activeProcessorCount) cores, \(memory) GiB"
}

let arguments = Array(CommandLine.arguments.dropFirst())
do {
    if arguments.first == "worker" {
        switch arguments.dropFirst().first {
        case "client": try await Worker.run(Array(arguments.dropFirst(2)))
        case "large": try await LargeValueWorker.run(Array(arguments.dropFirst(2)))
        default: throw BenchError("usage: worker client|large …")
        }
        exit(0)
    }
    // Anything else (a typo, --help) stops here, before a run of several minutes starts.
    let usage =
        "usage: foldersync-bench [--quick] [--only 1,3] [--big-rows N] [--large-value-bytes N] [--json PATH] [--work DIR]"
    var rest = arguments[...]
    while let argument = rest.popFirst() {
        switch argument {
        case "--quick": continue
        case "--only", "--big-rows", "--large-value-bytes", "--json", "--work":
            guard rest.popFirst() != nil else { throw BenchError("\(argument) needs a value\n\(usage)") }
        case "--help", "-h":
            print(usage)
            exit(0)
        default: throw BenchError("unknown argument \(argument)\n\(usage)")
        }
    }
    let quick = arguments.contains("--quick")
    let executableFolder = URL(fileURLWithPath: ChildProcess.ownExecutable).deletingLastPathComponent()
    // A folder of this run's own inside --work, so that removing it never touches anything else.
    let work = URL(
        fileURLWithPath: option("--work", in: arguments) ?? executableFolder.appendingPathComponent("bench-work").path
    )
    .appendingPathComponent("run-\(ProcessInfo.processInfo.processIdentifier)")
    let jsonURL = URL(
        fileURLWithPath: option("--json", in: arguments)
            ?? executableFolder.appendingPathComponent("foldersync-bench.json").path)
    let only = option("--only", in: arguments).map { Set($0.split(separator: ",").map(String.init)) }
    try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    var sizes = quick ? Sizes.quick : Sizes.full
    if let rows = option("--big-rows", in: arguments) {
        guard let count = Int(rows), count > 0 else { throw BenchError("--big-rows needs a positive number") }
        sizes.bigDocumentRows = count
    }
    if let bytes = option("--large-value-bytes", in: arguments) {
        guard let count = Int(bytes), count > 0 else { throw BenchError("--large-value-bytes needs a positive number") }
        sizes.largeValueBytes = count
    }
    let context = BenchContext(
        sizes: sizes, workDirectory: work,
        webDAVURL: ProcessInfo.processInfo.environment["FOLDERSYNC_BENCH_WEBDAV"])
    var results: [ScenarioResult] = []
    for scenario in scenarios where only?.contains(scenario.number) ?? true {
        FileHandle.standardError.write(Data("scenario \(scenario.number): \(scenario.title)\n".utf8))
        var result: ScenarioResult
        do {
            result = try await scenario.run(context)
        } catch {
            result = ScenarioResult(status: "failed", note: "\(error)")
        }
        result.number = scenario.number
        result.title = scenario.title
        results.append(result)
    }
    try? FileManager.default.removeItem(at: work)
    let mode =
        quick
        ? "quick"
        : sizes.bigDocumentRows == Sizes.full.bigDocumentRows
            ? "full"
            : "full sizes, except scenarios 3 and 5 on \(sizes.bigDocumentRows) rows"
    let report = BenchReport(mode: mode, date: Date(), machine: machineDescription(), scenarios: results)
    print(report.table())
    try report.json().write(to: jsonURL)
    print("JSON: \(jsonURL.path)")
    exit(report.scenarios.allSatisfy(\.passed) ? 0 : 1)
} catch {
    FileHandle.standardError.write(Data("foldersync-bench: \(error)\n".utf8))
    exit(2)
}
