import Foundation

/// Left-aligned columns for people; the last column is not padded.
struct TextTable {
    var rows: [[String]] = []

    mutating func append(_ row: String...) { rows.append(row) }

    func render(indent: String = "") -> String {
        // Cells hold names and descriptions read from the shared folder: no control character reaches the terminal.
        let rows = rows.map { $0.map(TerminalText.escaped) }
        let columnCount = rows.map(\.count).max() ?? 0
        let widths = (0..<columnCount).map { column in rows.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0
        }
        return rows.map { row in
            let cells = row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }
            return indent + cells.joined(separator: "  ")
        }.joined(separator: "\n") + (rows.isEmpty ? "" : "\n")
    }
}
