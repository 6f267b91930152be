import Foundation

/// The documented exit codes.
enum ToolExit {
    /// Success; for `doctor`, a healthy tree.
    static let success: Int32 = 0
    /// `doctor` found problems.
    static let problemsFound: Int32 = 1
    /// Could not check or could not finish: usage error, unreadable or corrupt input, I/O failure,
    /// a refused or declined confirmation, a vacuum that could not remove everything it planned.
    static let couldNotCheck: Int32 = 2
}

/// A failure the tool explains in one line, with its exit code.
struct ToolFailure: Error {
    let message: String
    var exitCode: Int32 = ToolExit.couldNotCheck

    init(_ message: String) { self.message = message }
}

/// One line on standard error, prefixed with the tool's name.
func printError(_ message: String) {
    let line = "foldersync: " + TerminalText.escaped(message) + "\n"
    FileHandle.standardError.write(Data(line.utf8))
}
