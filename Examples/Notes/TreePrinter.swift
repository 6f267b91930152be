import Foundation

/// Draws a folder as an indented tree, folders first, names sorted.
enum TreePrinter {
    static func render(root: URL) -> String {
        var output = ""
        func walk(_ url: URL, depth: Int) {
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).sorted()
            for name in names {
                let child = url.appendingPathComponent(name)
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: child.path, isDirectory: &isDirectory) else { continue }
                output += String(repeating: "  ", count: depth) + name + (isDirectory.boolValue ? "/" : "") + "\n"
                if isDirectory.boolValue { walk(child, depth: depth + 1) }
            }
        }
        walk(root, depth: 1)
        return output
    }
}
