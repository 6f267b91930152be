@_spi(ModelAdapter) import FolderSync
import Foundation

/// Large files through the streaming calls, and names that need escaping.
extension ConformanceContext {
    func checkLargeFile(size: Int) async throws {
        let local = FileManager.default.temporaryDirectory.appendingPathComponent(
            "conformance-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: local, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: local) }
        let original = Self.bytes(size, seed: 42)
        let source = local.appendingPathComponent("source.bin")
        try original.write(to: source)

        let remote = path("large.bin")
        try await fileSystem.upload(fromLocalFile: source, to: remote)
        let item = try await fileSystem.item(at: remote)
        try expect(
            item?.size == nil || item?.size == Int64(size),
            "uploaded size: \(String(describing: item?.size)), expected \(size)")

        let copy = local.appendingPathComponent("copy.bin")
        try Data("stale".utf8).write(to: copy)
        try await fileSystem.download(remote, toLocalFile: copy)
        let downloaded = try Data(contentsOf: copy)
        try expect(downloaded.count == size, "downloaded \(downloaded.count) bytes, expected \(size)")
        try expect(downloaded == original, "the downloaded bytes differ from the uploaded ones")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: local.path).sorted()
        try expect(leftovers == ["copy.bin", "source.bin"], "download left local files behind: \(leftovers)")
        let remoteNames = try await names(in: folder)
        try expect(remoteNames == ["large.bin"], "upload left remote files behind: \(remoteNames)")
    }

    /// Names FolderSync's identifiers may take (see its identifier rules: no `?`, `:`, `*`, `"`, `<`, `>`, `|`,
    /// `\`, no trailing dot or space): spaces, punctuation that URLs reserve, accents, other scripts, emoji.
    static let portableNames = [
        "with space", "café crème", "日本語 ファイル", "emoji 🎉", "100% sure", "hash#and%3F",
        "plus+and&ampersand", "semi;colon=equals", "quote's", "[brackets]", "tilde~dash-under_dot.x",
        ".foldersync-tmp-0123456789abcdef-x",
    ]

    func checkNames() async throws {
        for (index, name) in Self.portableNames.enumerated() {
            let child = path(name)
            try await fileSystem.createDirectory(at: child)
            let data = Data("contents \(index)".utf8)
            try await fileSystem.write(data, to: child.appending(name))
            try expect(
                try await fileSystem.read(child.appending(name)) == data, "\(String(reflecting: name)) should read back"
            )
            try expect(
                try await fileSystem.item(at: child.appending(name))?.name == name,
                "stat of \(String(reflecting: name))")
            let listed = try await names(in: child)
            try expect(
                listed == [name],
                "listing of \(String(reflecting: name)) shows \(listed.map { String(reflecting: $0) })")
        }
        let listed = try await names(in: folder)
        try expect(
            listed == Self.portableNames.sorted(), "folder names round-trip: \(listed.map { String(reflecting: $0) })")
        let moved = path("moved 🎉 é")
        try await fileSystem.move(from: path("emoji 🎉"), to: moved, replacing: false)
        try expect(
            try await fileSystem.item(at: moved.appending("emoji 🎉")) != nil, "a move to a Unicode name keeps contents")
        try await fileSystem.remove(path("with space"))
        try expect(try await fileSystem.item(at: path("with space")) == nil, "removing a name with a space")
    }
}
