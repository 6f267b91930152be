import Foundation

/// The results of a run: printed as a table, written as JSON.
struct BenchReport: Codable, Sendable {
    var mode: String
    var date: Date
    var machine: String
    var scenarios: [ScenarioResult]

    var checksPassed: Int { scenarios.flatMap(\.checks).filter(\.passed).count }
    var checksTotal: Int { scenarios.flatMap(\.checks).count }

    func table() -> String {
        var lines = ["FolderSync benchmarks (\(mode)), \(machine)", ""]
        for scenario in scenarios {
            lines.append(
                "\(scenario.number). \(scenario.title) [\(scenario.status)]" + (scenario.note.map { ": \($0)" } ?? ""))
            for figure in scenario.figures {
                lines.append("     " + pad(figure.name, 60) + format(figure.value, figure.unit))
            }
            for check in scenario.checks {
                lines.append(
                    "   " + (check.passed ? "ok   " : "MISS ") + pad(check.name, 58)
                        + pad(format(check.measured, check.unit), 14) + "target \(check.comparison) "
                        + format(check.target, check.unit))
            }
            lines.append("")
        }
        let failed = scenarios.filter { $0.status == "failed" }.map(\.number)
        lines.append(
            "\(checksPassed) of \(checksTotal) targets met"
                + (failed.isEmpty
                    ? ""
                    : "; scenarios that failed to run, their targets not counted: "
                        + failed.joined(separator: ", ")))
        return lines.joined(separator: "\n")
    }

    func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return try encoder.encode(self)
    }

    private func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }

    private func format(_ value: Double, _ unit: String) -> String {
        switch unit {
        case "B":
            if value >= 1_048_576 { return String(format: "%.1f MiB", value / 1_048_576) }
            if value >= 1024 { return String(format: "%.1f KiB", value / 1024) }
            return String(format: "%.0f B", value)
        case "×": return String(format: "%.2f×", value)
        case "": return String(format: "%.0f", value)
        case "s": return String(format: "%.3f s", value)
        default: return String(format: value >= 100 ? "%.0f %@" : "%.1f %@", value, unit)
        }
    }
}
