/// The one place `foldersync` makes text from the shared folder safe to print: names and descriptions come from
/// whoever wrote the folder, and a crafted file name must not forge a line of a report or drive the terminal.
enum TerminalText {
    /// `text` with every control character written out: line breaks and tabs as `\n`, `\r`, `\t`, the others
    /// (escape sequences, NUL, DEL, C1 controls, Unicode line and paragraph separators, direction overrides)
    /// as `\u{1B}`; a backslash stays as it is.
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where needsEscape(scalar): result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}
