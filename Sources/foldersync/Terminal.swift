import Foundation

/// What the tool asks of the terminal: whether one is there, a yes/no question, a progress line.
enum Terminal {
    /// Confirmation is asked only on a terminal; cron and scripts must say `--yes`.
    static var standardInputIsTerminal: Bool { isatty(STDIN_FILENO) == 1 }

    /// Progress goes to standard error only when a person watches it.
    static var standardErrorIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    /// Asks on standard error and reads one line; only `y` or `yes` (any case) is a yes.
    /// Reads a password from the terminal without echoing it.
    static func askPassword(_ prompt: String) -> String? {
        guard let pointer = getpass(prompt) else { return nil }
        return String(cString: pointer)
    }

    static func confirm(_ question: String) -> Bool {
        writeError(question + " [y/N] ")
        guard let answer = readLine(strippingNewline: true) else { return false }
        return ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased())
    }

    static func writeError(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}

/// `\r[n/m] document …` on standard error while a command works through many documents.
///
/// Silent when standard error is not a terminal, so logs and tests see no control characters.
struct ProgressLine {
    let total: Int
    let isEnabled: Bool
    private var width = 0

    init(total: Int, isEnabled: Bool = Terminal.standardErrorIsTerminal) {
        self.total = total
        self.isEnabled = isEnabled
    }

    mutating func show(_ index: Int, _ text: String) {
        guard isEnabled else { return }
        let line = "[\(index)/\(total)] \(text)"
        let padding = String(repeating: " ", count: max(0, width - line.count))
        width = line.count
        Terminal.writeError("\r" + line + padding)
    }

    /// Erases the line, so the report that follows starts on a clean line.
    mutating func clear() {
        guard isEnabled, width > 0 else { return }
        Terminal.writeError("\r" + String(repeating: " ", count: width) + "\r")
        width = 0
    }
}
