@_spi(Tooling) import FolderSync
import Foundation

/// What `doctor` prints. JSON: `{"application", "documents", "healthy", "findings", "repairs"?, "remaining"?}`;
/// `repairs` and `remaining` (the findings after repair) appear only with `--repair`.
struct DoctorOutput: Encodable {
    let application: String
    let documents: [String]
    var healthy: Bool
    let findings: [DoctorFinding]
    var repairs: [DoctorRepairAction]?
    var remaining: [DoctorFinding]?

    init(report: DoctorReport) {
        application = report.applicationIdentifier
        documents = report.documents
        healthy = report.isHealthy
        findings = report.findings
    }

    func text(repairable: Bool) -> String {
        let count = documents.count == 1 ? "1 document" : "\(documents.count) documents"
        var text = "Checked \(application) (\(count)).\n" + Self.list(findings)
        if repairs != nil, !repairable {
            text += "Nothing repaired: the tree's layout is newer than this tool's.\n"
            text += "After repair:\n" + Self.list(remaining ?? [])
        } else {
            text += Self.repairs(repairs, remaining: remaining, findings: findings)
        }
        return text
    }

    /// What a run with `--repair` did (`repairs`: each done, then the findings `remaining`), or without it, how to
    /// repair what can be; shared with `store check`.
    static func repairs(_ repairs: [DoctorRepairAction]?, remaining: [DoctorFinding]?, findings: [DoctorFinding])
        -> String
    {
        guard let repairs else {
            return findings.contains(where: { $0.repair != nil })
                ? "Run with --repair to fix the findings marked [repair: …].\n" : ""
        }
        var text = "Nothing needed repair.\n"
        if !repairs.isEmpty {
            var table = TextTable()
            for repair in repairs {
                let done =
                    switch repair.action {
                    case .remove: "removed"
                    case .quarantine: "quarantined"
                    case .restore: "restored"
                    case .writeIntegrityKey: "written"
                    }
                table.append(done, repair.path + (repair.destination.map { " -> " + $0 } ?? ""))
            }
            text = "Repairs:\n" + table.render(indent: "  ")
        }
        return text + "After repair:\n" + Self.list(remaining ?? [])
    }

    /// Each finding on two lines (severity, check, path; then the message), and a summary line.
    static func list(_ findings: [DoctorFinding]) -> String {
        var text = ""
        for finding in findings {
            let check = finding.check.rawValue.padding(toLength: 22, withPad: " ", startingAt: 0)
            let severity = finding.severity.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0)
            // A hostile file name with a line break must not forge a finding: paths and messages are escaped.
            text += "\(severity) \(check) \(TerminalText.escaped(finding.path))\n"
            text +=
                String(repeating: " ", count: 9) + TerminalText.escaped(finding.message)
                + (finding.repair.map { "  [repair: \($0.rawValue)]" } ?? "") + "\n"
        }
        let counts = DoctorFinding.Severity.allCases.reversed().compactMap { severity -> String? in
            let n = findings.filter { $0.severity == severity }.count
            return n == 0 ? nil : "\(n) \(severity.rawValue)\(n == 1 || severity == .info ? "" : "s")"
        }
        let problems = findings.contains(where: \.isProblem)
        return text
            + (problems
                ? "Problems found: " + counts.joined(separator: ", ") + ".\n"
                : "Healthy" + (counts.isEmpty ? "" : " (" + counts.joined(separator: ", ") + ")") + ".\n")
    }
}
