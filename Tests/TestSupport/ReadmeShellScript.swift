import Foundation
import Testing

/// A shell session as a README (`file`, relative to the repository) writes it, made to run here: the first `count` `sh`
/// blocks of the section headed `heading` (of the whole file when `nil`), without their `swift build` lines and their
/// indentation, with `scratch` for `/tmp/` and the built tool for `.build/debug/TOOL`. Returns the section's text too,
/// for what a test checks in it.
func readmeShellScript(
    file: String, section heading: String? = nil, blocks count: Int, tool: String,
    scratch: URL
) throws -> (section: String, script: String) {
    let text = try String(contentsOf: repositoryRoot.appendingPathComponent(file), encoding: .utf8)
    let section =
        try heading.map { try #require(text.components(separatedBy: "\n" + $0 + "\n").dropFirst().first) } ?? text
    let blocks = section.components(separatedBy: "```sh\n").dropFirst().prefix(count).map {
        $0.components(separatedBy: "```")[0]
    }
    try #require(blocks.count == count, "\(file) has \(blocks.count) sh blocks, \(count) expected")
    let script = blocks.joined()
        .split(separator: "\n").map { $0.drop(while: { $0 == " " }) }.filter { !$0.hasPrefix("swift build") }
        .joined(separator: "\n")
        // The scratch folder first: the built tool's path may itself lie below /tmp (a clone there, as CI makes).
        .replacingOccurrences(of: "/tmp/", with: scratch.path + "/")
        .replacingOccurrences(
            of: ".build/debug/" + tool, with: buildProductsDirectory.appendingPathComponent(tool).path)
    return (section, script)
}
