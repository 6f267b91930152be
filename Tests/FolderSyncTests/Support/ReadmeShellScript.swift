import Foundation
import Testing

/// The README's shell session of one example, made to run here: the first `count` `sh` blocks of the section headed
/// `heading`, without their `swift build` lines, with `scratch` for `/tmp/` and the built tool for `.build/debug/TOOL`.
/// Returns the section too, for what a test checks in its text.
func readmeShellScript(section heading: String, blocks count: Int, tool: String, scratch: URL) throws -> (section: String, script: String) {
    let readme = try String(contentsOf: repositoryRoot.appendingPathComponent("README.md"), encoding: .utf8)
    let section = try #require(readme.components(separatedBy: heading).dropFirst().first)
    let blocks = section.components(separatedBy: "```sh\n").dropFirst().prefix(count).map { $0.components(separatedBy: "```")[0] }
    try #require(blocks.count == count, "the README's \(heading) has \(blocks.count) sh blocks, \(count) expected")
    let script = blocks.joined()
        .split(separator: "\n").filter { !$0.hasPrefix("swift build") }.joined(separator: "\n")
        // The scratch folder first: the built tool's path may itself lie below /tmp (a clone there, as CI makes).
        .replacingOccurrences(of: "/tmp/", with: scratch.path + "/")
        .replacingOccurrences(of: ".build/debug/" + tool, with: buildProductsDirectory.appendingPathComponent(tool).path)
    return (section, script)
}
