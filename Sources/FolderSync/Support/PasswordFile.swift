import Foundation

/// A file whose first line is a password, as the tool and the example apps take one (`--password-file`).
package enum PasswordFile {
    /// The file's first line without its line ending (LF, or CRLF as Windows editors end lines), or `nil` when the
    /// file cannot be read as UTF-8 text.
    package static func firstLine(of path: String) -> String? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        // Character.isNewline takes "\r\n", one character in Swift, as one line ending.
        let lines = text.split(maxSplits: 1, omittingEmptySubsequences: false, whereSeparator: \.isNewline)
        return lines.first.map(String.init) ?? ""
    }
}
