import Foundation
import TestProcesses

/// A real child process of a built executable, started with its standard input held so several can be released at once.
final class ChildProcess: Sendable {
    private let process: Subprocess

    /// Starts `executable` with `arguments`; `environment` is added to this process's.
    init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        var merged = ProcessInfo.processInfo.environment
        merged.merge(environment) { _, new in new }
        process = try Subprocess.start(
            buildProductsDirectory.appendingPathComponent(executable).path, arguments,
            environment: merged, standardInput: .pipe)
    }

    /// Writes a line to the child's standard input. A child that has already exited says so through ``finish()``.
    func send(_ line: String) {
        try? process.writeToStandardInput(Data((line + "\n").utf8))
    }

    /// Waits for the child to exit (off the cooperative pool) and returns its exit code and outputs.
    func finish() async -> (status: Int32, output: String, errors: String) {
        let result = await process.finished()
        return (result.status, result.output, result.errors)
    }

    /// ``finish()``, with the CPU time the child used (user and system, seconds).
    func finishMeasured() async -> Subprocess.Result {
        await process.finished()
    }
}
