import Foundation

/// A fresh folder per test, removed when the value is released. Swift Testing runs tests in parallel.
final class TemporaryDirectory: @unchecked Sendable {
    let url: URL
    private let removesItself: Bool

    /// An existing folder (a mount point made by the test), used as it is and left in place.
    init(at url: URL) {
        self.url = url
        removesItself = false
    }

    init(_ name: String = #function) {
        let base = URL(fileURLWithPath: NSTemporaryDirectory())
        let safe = name.filter { $0.isLetter || $0.isNumber }
        url = base.appendingPathComponent("FolderSyncTests-\(safe)-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        removesItself = true
    }

    func subdirectory(_ name: String) -> URL {
        let child = url.appendingPathComponent(name, isDirectory: true)
        try! FileManager.default.createDirectory(at: child, withIntermediateDirectories: true)
        return child
    }

    deinit { if removesItself { try? FileManager.default.removeItem(at: url) } }
}

/// The repository's root, for tests that compare against files in it (`RemoteLayouts/v1/…`).
let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// The folder holding the built executables (next to the test bundle).
let buildProductsDirectory: URL = {
    var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    while url.pathComponents.count > 1
        && !FileManager.default.fileExists(atPath: url.appendingPathComponent("foldersync-test-worker").path)
    {
        url.deleteLastPathComponent()
    }
    return url
}()
