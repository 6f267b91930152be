@_spi(ModelAdapter) import FolderSync
import Foundation

/// Folders, plain reads and writes, missing items and removal.
extension ConformanceContext {
    func checkCreateDirectory() async throws {
        let deep = path("a", "b", "c")
        try await fileSystem.createDirectory(at: deep)
        try await fileSystem.createDirectory(at: deep)
        try await fileSystem.createDirectory(at: path("a"))
        for item in [path("a"), path("a", "b"), deep] {
            let found = try await fileSystem.item(at: item)
            try expect(
                found?.kind == .directory,
                "\(item) should be a folder after createDirectory, found \(String(describing: found))")
        }
        let listed = try await fileSystem.contentsOfDirectory(at: path("a"))
        try expect(
            listed.map(\.name) == ["b"] && listed.first?.kind == .directory,
            "listing a should show folder b, got \(listed)")
        try expect(try await fileSystem.contentsOfDirectory(at: deep).isEmpty, "a new folder should list empty")
    }

    func checkWriteReadList() async throws {
        let file = path("file.bin")
        let first = Self.bytes(1000, seed: 1)
        try await fileSystem.write(first, to: file)
        try expect(try await fileSystem.read(file) == first, "read should return the written bytes")
        let item = try await fileSystem.item(at: file)
        try expect(
            item?.kind == .file && item?.name == "file.bin", "stat of a written file: \(String(describing: item))")
        try expect(
            item?.size == nil || item?.size == 1000, "stat size should be 1000, got \(String(describing: item?.size))")

        let second = Self.bytes(10, seed: 2)
        try await fileSystem.write(second, to: file)
        try expect(try await fileSystem.read(file) == second, "a second write should replace the bytes")
        try await fileSystem.write(Data(), to: path("empty"))
        try expect(try await fileSystem.read(path("empty")).isEmpty, "an empty file should read empty")
        try await fileSystem.createDirectory(at: path("sub"))

        let listing = try await fileSystem.contentsOfDirectory(at: folder)
        let summary = listing.map { "\($0.name):\($0.kind)" }.sorted()
        try expect(summary == ["empty:file", "file.bin:file", "sub:directory"], "listing after writes: \(summary)")
        let listedFile = listing.first { $0.name == "file.bin" }
        try expect(
            listedFile?.size == nil || listedFile?.size == 10,
            "listed size should be 10, got \(String(describing: listedFile?.size))")
        let names = try await fileSystem.namesOfDirectory(at: folder).map { "\($0.name):\($0.kind)" }.sorted()
        try expect(names == summary, "names of the folder should be its listing's: \(names)")
    }

    func checkMissingItems() async throws {
        let missing = path("missing")
        try expect(try await fileSystem.item(at: missing) == nil, "stat of a missing item should be nil")
        try expect(
            try await fileSystem.item(at: path("missing", "child")) == nil, "stat inside a missing folder should be nil"
        )
        try await expectError(.remoteItemNotFound, "read of a missing file") { _ = try await fileSystem.read(missing) }
        try await expectError(.remoteItemNotFound, "listing of a missing folder") {
            _ = try await fileSystem.contentsOfDirectory(at: missing)
        }
        try await expectError(.remoteItemNotFound, "names of a missing folder") {
            _ = try await fileSystem.namesOfDirectory(at: missing)
        }
        try await expectError(.remoteItemNotFound, "move of a missing file") {
            try await fileSystem.move(from: missing, to: path("elsewhere"), replacing: false)
        }
        try expect(try await fileSystem.readIfPresent(missing) == nil, "readIfPresent of a missing file should be nil")
        let local = FileManager.default.temporaryDirectory.appendingPathComponent("conformance-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: local) }
        try await expectError(.remoteItemNotFound, "download of a missing file") {
            try await fileSystem.download(missing, toLocalFile: local)
        }
        try expect(!FileManager.default.fileExists(atPath: local.path), "a failed download should leave no local file")
    }

    func checkRemove() async throws {
        try await fileSystem.createDirectory(at: path("tree", "inner"))
        try await fileSystem.write(Data("x".utf8), to: path("tree", "inner", "file"))
        try await fileSystem.write(Data("y".utf8), to: path("tree", "top"))
        try await fileSystem.write(Data("z".utf8), to: path("kept"))
        try await fileSystem.remove(path("tree"))
        try expect(try await fileSystem.item(at: path("tree")) == nil, "a removed folder should be gone")
        try expect(
            try await fileSystem.item(at: path("tree", "inner", "file")) == nil,
            "a removed folder's files should be gone")
        try await fileSystem.remove(path("tree"))
        try await fileSystem.remove(path("never-existed"))
        try await fileSystem.remove(path("kept", "not-a-child"))
        let remaining = try await names(in: folder)
        try expect(remaining == ["kept"], "only 'kept' should remain, found \(remaining)")
        try await fileSystem.remove(path("kept"))
        try expect(try await names(in: folder).isEmpty, "a removed file should be gone from the listing")
    }
}
