import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A finished child process: its exit status, standard output, peak memory and wall time.
struct ChildResult: Sendable {
    var status: Int32
    var output: String
    var maxResidentBytes: Int64
    var seconds: Double
}

/// Runs programs as child processes and reads their peak resident memory through `wait4`.
enum ChildProcess {
    /// The path of this executable, to start it again in worker mode.
    static let ownExecutable: String = {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }()

    /// Runs `arguments[0]` (searched in `PATH`) and waits; standard error passes through, standard output is captured.
    static func run(_ arguments: [String], quietStandardError: Bool = false) throws -> ChildResult {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent(
            "bench-child-\(UUID().uuidString).out")
        defer { try? FileManager.default.removeItem(at: output) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, output.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        if quietStandardError { posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0) }
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let started = ContinuousClock.now
        let spawned = posix_spawnp(&pid, arguments[0], &actions, nil, argv, environ)
        guard spawned == 0 else {
            throw BenchError("cannot start \(arguments[0]): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 {
            guard errno == EINTR else { throw BenchError("wait4 failed for \(arguments[0])") }
        }
        let seconds = (ContinuousClock.now - started).seconds
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        // ru_maxrss is in KiB on Linux.
        return ChildResult(
            status: status, output: text, maxResidentBytes: Int64(usage.ru_maxrss) * 1024, seconds: seconds)
    }

    /// Runs a command that must succeed; returns its result.
    @discardableResult
    static func mustRun(_ arguments: [String], quietStandardError: Bool = false) throws -> ChildResult {
        let result = try run(arguments, quietStandardError: quietStandardError)
        guard result.status == 0 else {
            throw BenchError(
                "\(arguments.prefix(3).joined(separator: " ")) … exited with status \(result.status): \(result.output.suffix(500))"
            )
        }
        return result
    }

    /// Runs this executable in worker mode and decodes the figures it prints as its last line of JSON.
    static func worker(_ arguments: [String]) throws -> WorkerOutput {
        let result = try mustRun([ownExecutable, "worker"] + arguments)
        guard let line = result.output.split(separator: "\n").last,
            var decoded = try? JSONDecoder().decode(WorkerOutput.self, from: Data(line.utf8))
        else {
            throw BenchError("worker \(arguments.first ?? "") printed no result: \(result.output.suffix(500))")
        }
        decoded.maxResidentBytes = result.maxResidentBytes
        return decoded
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
