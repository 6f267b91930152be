import FolderSyncTesting
import Foundation
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// Safety defect found by reading the code (issue 24, item 4): a re-join gave every row fresh timestamps, so the
/// last client to re-join won over newer writes, and the result depended on the order of re-joins.
@Suite("Re-joins in any order")
struct RejoinOrderTests {
    static let orders: [[Int]] = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]]

    @Test(
        "After a wipe, re-joins in any order keep each column's newest write by the writes' own clocks",
        arguments: orders)
    func anyOrder(_ order: [Int]) async throws {
        let directory = TemporaryDirectory()
        let clock = LivenessTests.TestClock()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let clients = try await ["A", "B", "C"].asyncMap {
            try await TestClient.make(remote, name: $0, in: directory, environment: clock.environment)
        }
        let (a, b, c) = (clients[0], clients[1], clients[2])
        try a.execute("INSERT INTO notes(id, title, body) VALUES ('n1', 'first', 'first')")
        try await converge(a, b, c)
        // Three writes of one column, a minute apart; B's is published, A's and C's are not.
        clock.advance(60)
        try a.execute("UPDATE notes SET title = 'A at 1' WHERE id = 'n1'")
        clock.advance(60)
        try b.execute("UPDATE notes SET title = 'B at 2' WHERE id = 'n1'")
        try await b.sync()
        clock.advance(60)
        try c.execute("UPDATE notes SET title = 'C at 3' WHERE id = 'n1'")
        // And one more column, written by A only, before the wipe.
        clock.advance(60)
        try a.execute("UPDATE notes SET body = 'A at 4' WHERE id = 'n1'")

        try await remote.remove(a.document.relativePathToThisDocumentDirectory)
        for client in clients {
            await #expect { try await client.sync() } throws: {
                ($0 as? FolderSyncError)?.code == .integrityKeyMismatch
            }
        }
        // Re-joins a minute apart, in this order; the first to re-join also writes after its re-join.
        for (position, index) in order.enumerated() {
            clock.advance(60)
            try await clients[index].document.rejoin()
            if position == 0 {
                clock.advance(60)
                try clients[index].execute("UPDATE notes SET body = 'after the re-join' WHERE id = 'n1'")
                try await clients[index].sync()
            }
        }
        try await converge(a, b, c)
        for client in clients {
            #expect(try client.value("SELECT title FROM notes WHERE id = 'n1'") == "C at 3", "order \(order)")
            #expect(try client.value("SELECT body FROM notes WHERE id = 'n1'") == "after the re-join", "order \(order)")
        }
    }
}

extension Array {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
