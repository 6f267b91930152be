@_spi(ModelAdapter) import FolderSync
import Foundation

/// Atomic replacement, publish-if-absent and moves: the coordination FolderSync relies on.
extension ConformanceContext {
    /// A reader running while a writer replaces a file must see one whole version every time.
    func checkAtomicReplace(rounds: Int) async throws {
        let file = path("replaced")
        let versions = (0..<3).map { Self.bytes(256 * 1024 + $0 * 1000, seed: UInt8($0 + 10)) }
        try await fileSystem.write(versions[0], to: file)
        let fileSystem = self.fileSystem
        let torn = try await withThrowingTaskGroup(of: [String].self) { group in
            group.addTask {
                for round in 1...rounds { try await fileSystem.write(versions[round % versions.count], to: file) }
                return []
            }
            group.addTask {
                var problems: [String] = []
                for _ in 0..<(rounds * 2) {
                    do {
                        let data = try await fileSystem.read(file)
                        if !versions.contains(data) {
                            problems.append("read \(data.count) bytes matching no written version")
                        }
                    } catch {
                        problems.append("read failed during a replace: \(error)")
                    }
                }
                return problems
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        try expect(torn.isEmpty, "readers saw a torn or missing file: \(torn.prefix(3))")
        try expect(versions.contains(try await fileSystem.read(file)), "the file should end as one whole version")
        let left = try await names(in: folder)
        try expect(left == ["replaced"], "replacing should leave no temporary behind, found \(left)")
    }

    func checkPublishIfAbsent() async throws {
        let target = path("published")
        try expect(
            try await fileSystem.publishIfAbsent(Data("first".utf8), to: target), "publishing to a free name should win"
        )
        try expect(
            !(try await fileSystem.publishIfAbsent(Data("second".utf8), to: target)),
            "publishing over an existing file should lose")
        try expect(
            try await fileSystem.read(target) == Data("first".utf8), "a losing publisher must not change the file")
        try expect(try await names(in: folder) == ["published"], "a losing publisher should clean up its temporary")

        try await fileSystem.write(Data("other".utf8), to: path("source"))
        try await expectError(.remoteItemExists, "move without replacing onto an existing file") {
            try await fileSystem.move(from: path("source"), to: target, replacing: false)
        }
        try expect(
            try await fileSystem.read(path("source")) == Data("other".utf8), "a refused move must keep its source")
        try expect(try await fileSystem.read(target) == Data("first".utf8), "a refused move must keep the destination")
    }

    /// Two publishers race for each name: exactly one wins, and the file holds the winner's bytes.
    func checkPublishRace(rounds: Int) async throws {
        let fileSystem = self.fileSystem
        for round in 0..<rounds {
            let target = path("race-\(round)")
            let contents = [Data("left-\(round)".utf8), Data("right-\(round)".utf8)]
            let results = try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
                for index in 0..<2 {
                    group.addTask { (index, try await fileSystem.publishIfAbsent(contents[index], to: target)) }
                }
                return try await group.reduce(into: [Int: Bool]()) { $0[$1.0] = $1.1 }
            }
            let winners = results.filter(\.value).map(\.key)
            try expect(winners.count == 1, "round \(round): \(winners.count) publishers won, expected exactly one")
            let stored = try await fileSystem.read(target)
            try expect(stored == contents[winners[0]], "round \(round): the file should hold the winner's bytes")
        }
        let left = try await names(in: folder).filter(TemporaryName.isTemporary)
        try expect(left.isEmpty, "racing publishers left temporaries: \(left)")
    }

    func checkMoves() async throws {
        try await fileSystem.write(Data("a".utf8), to: path("a"))
        try await fileSystem.write(Data("b".utf8), to: path("b"))
        try await fileSystem.move(from: path("a"), to: path("b"), replacing: true)
        try expect(
            try await fileSystem.read(path("b")) == Data("a".utf8),
            "a replacing move should put the source's bytes in place")
        try expect(try await fileSystem.item(at: path("a")) == nil, "a moved file should leave its old name")

        try await fileSystem.move(from: path("b"), to: path("c"), replacing: false)
        let afterMove = try await names(in: folder)
        try expect(afterMove == ["c"], "a move to a free name: \(afterMove)")

        try await fileSystem.createDirectory(at: path("folder", "inner"))
        try await fileSystem.write(Data("deep".utf8), to: path("folder", "inner", "file"))
        try await fileSystem.move(from: path("folder"), to: path("renamed"), replacing: false)
        try expect(try await fileSystem.item(at: path("folder")) == nil, "a moved folder should leave its old name")
        try expect(
            try await fileSystem.read(path("renamed", "inner", "file")) == Data("deep".utf8),
            "a moved folder keeps its contents")

        try await fileSystem.createDirectory(at: path("occupied"))
        try await expectError(.remoteItemExists, "move of a folder without replacing onto an existing folder") {
            try await fileSystem.move(from: path("renamed"), to: path("occupied"), replacing: false)
        }
        try expect(
            try await fileSystem.item(at: path("renamed", "inner", "file")) != nil,
            "a refused folder move keeps its source")

        try await fileSystem.createDirectory(at: path("target-folder"))
        try await fileSystem.move(from: path("c"), to: path("target-folder", "c"), replacing: false)
        try expect(try await names(in: path("target-folder")) == ["c"], "a file moves into another folder")
    }
}
