import Foundation

/// A real child process of a built executable, started with its standard input held so several can be released at once.
final class ChildProcess: @unchecked Sendable {
    let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let errors = Pipe()

    init(_ executable: String, _ arguments: [String]) throws {
        process.executableURL = buildProductsDirectory.appendingPathComponent(executable)
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
    }

    /// Writes a line to the child's standard input.
    func send(_ line: String) {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    /// Waits for the child to exit (off the cooperative pool) and returns its exit code and outputs.
    func finish() async -> (status: Int32, output: String, errors: String) {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let out = self.output.fileHandleForReading.readAllRetryingInterruptions()
                let err = self.errors.fileHandleForReading.readAllRetryingInterruptions()
                self.process.waitUntilExit()
                continuation.resume(returning: (self.process.terminationStatus,
                                                String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self)))
            }
        }
    }
}
