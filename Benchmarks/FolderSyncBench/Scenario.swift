import Foundation

/// One benchmark: measures FolderSync and its floor or peer in the same run, and judges the ratios.
///
/// A new scenario is one more conforming type added to the `scenarios` list in main.swift.
protocol Scenario: Sendable {
    /// The number for it ("1" … "6").
    var number: String { get }
    var title: String { get }
    func run(_ context: BenchContext) async throws -> ScenarioResult
}

/// What a scenario measured: figures for the table and JSON, and the checks against its targets.
struct ScenarioResult: Codable, Sendable {
    var number = ""
    var title = ""
    /// `measured` or `failed` (the run broke).
    var status = "measured"
    var note: String?
    var figures: [Figure] = []
    var checks: [Check] = []

    var passed: Bool { status == "measured" && checks.allSatisfy(\.passed) }

    mutating func figure(_ name: String, _ value: Double, _ unit: String) {
        figures.append(Figure(name: name, value: value, unit: unit))
    }

    /// Records a check that `measured` is at most `target` (or at least, with `atLeast`).
    mutating func check(_ name: String, _ measured: Double, atMost target: Double, unit: String = "×") {
        checks.append(
            Check(
                name: name, measured: measured, target: target, comparison: "<=", unit: unit, passed: measured <= target
            ))
    }

    mutating func check(_ name: String, _ measured: Double, atLeast target: Double, unit: String = "×") {
        checks.append(
            Check(
                name: name, measured: measured, target: target, comparison: ">=", unit: unit, passed: measured >= target
            ))
    }
}

struct Figure: Codable, Sendable {
    var name: String
    var value: Double
    var unit: String
}

struct Check: Codable, Sendable {
    var name: String
    var measured: Double
    var target: Double
    var comparison: String
    var unit: String
    var passed: Bool
}
