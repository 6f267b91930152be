import Foundation
import TestProcesses
import Testing

/// Runs the built `foldersync` binary, as an operator would, and captures its exit code and outputs.
enum FoldersyncTool {
    struct Result {
        var status: Int32
        var output: String
        var errors: String
        /// The CPU time the tool used (user and system, all threads) and how long it ran, in seconds.
        var cpuSeconds: Double = 0
        var wallSeconds: Double = 0
    }

    /// A fixed terminal width, so help text wraps the same everywhere. Standard input is empty and not a terminal.
    /// `environment` is added to this process's.
    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> Result {
        try await run(
            executable: buildProductsDirectory.appendingPathComponent("foldersync"), arguments, input: nil,
            environment: environment)
    }

    /// Runs the tool on a pseudo-terminal made by util-linux `script`, typing `input`: standard input, output and
    /// error are all the terminal, so `output` holds everything (with `\r\n` line ends) and `errors` is empty.
    static func runOnTerminal(_ arguments: [String], input: String) async throws -> Result {
        let tool = buildProductsDirectory.appendingPathComponent("foldersync").path
        let command = ([tool] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(
            separator: " ")
        return try await run(
            executable: URL(fileURLWithPath: "/usr/bin/script"), ["-qec", command, "/dev/null"], input: input)
    }

    /// `script` is util-linux's; tests that need a terminal are skipped where it is missing.
    static var canRunOnTerminal: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/script") }

    private static func run(
        executable: URL, _ arguments: [String], input: String?,
        environment extra: [String: String] = [:]
    ) async throws -> Result {
        var environment = ProcessInfo.processInfo.environment
        environment["COLUMNS"] = "80"
        // The vacuum's verification cache goes beside the tests' folders, not into the user's home.
        environment["XDG_CACHE_HOME"] =
            FileManager.default.temporaryDirectory.appendingPathComponent("foldersync-tests-cache").path
        environment.merge(extra) { _, new in new }
        let start = ContinuousClock.now
        let process = try Subprocess.start(
            executable.path, arguments, environment: environment,
            standardInput: input == nil ? .null : .pipe)
        if let input {
            try? process.writeToStandardInput(Data(input.utf8))  // a tool that stops before reading it says why
            process.closeStandardInput()
        }
        let result = await process.finished()
        let wall = ContinuousClock.now - start
        return Result(
            status: result.status, output: result.output, errors: result.errors, cpuSeconds: result.cpuSeconds,
            wallSeconds: Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18)
    }

    /// Decodes the standard output of a `--json` run.
    static func json<T: Decodable>(_ type: T.Type, _ result: Result) throws -> T {
        try JSONDecoder().decode(type, from: Data(result.output.utf8))
    }
}

/// Compares `text` with `Tests/MultiClientTests/Snapshots/<name>.txt`; `FOLDERSYNC_RECORD_SNAPSHOTS=1` rewrites it.
func expectSnapshot(_ text: String, named name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let url = repositoryRoot.appendingPathComponent("Tests/MultiClientTests/Snapshots/\(name).txt")
    if ProcessInfo.processInfo.environment["FOLDERSYNC_RECORD_SNAPSHOTS"] == "1" {
        try text.write(to: url, atomically: true, encoding: .utf8)
    }
    let stored = try String(contentsOf: url, encoding: .utf8)
    #expect(
        text == stored,
        "\(name) differs from its snapshot; rerun with FOLDERSYNC_RECORD_SNAPSHOTS=1 if the change is deliberate",
        sourceLocation: sourceLocation)
}
