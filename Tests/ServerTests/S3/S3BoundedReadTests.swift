@_spi(Tooling) import FolderSync
import FolderSyncWebDAV
import Foundation
import Testing

@testable import S3Backend
@testable import TestSupport

/// Bounded reads on the S3 example: one GET refused by its `Content-Length`, no HEAD first.
@Suite("S3 bounded reads")
struct S3BoundedReadTests {
    @Test(
        "An object larger than the bound is refused with corruptFile naming it, in one request; a small one is read in one"
    )
    func boundedRead() async throws {
        let fileSystem = try S3TestServers.fileSystem()
        let large = try RemotePath("bounded-\(UUID().uuidString.prefix(8))/deviceInfo.plist")
        try await fileSystem.write(Data(count: 3 << 20), to: large)
        let before = fileSystem.statistics.requests
        do {
            _ = try await fileSystem.read(large, maximumSize: 1 << 20)
            Issue.record("a 3 MiB object was read under a 1 MiB bound")
        } catch let error as FolderSyncError {
            #expect(error.code == .corruptFile && error.path == large.description, "\(error)")
        }
        #expect(fileSystem.statistics.requests - before == 1)

        let small = large.parent.appending("small.plist")
        try await fileSystem.write(Data("small".utf8), to: small)
        let beforeSmall = fileSystem.statistics.requests
        #expect(try await fileSystem.read(small, maximumSize: 1 << 20) == Data("small".utf8))
        #expect(fileSystem.statistics.requests - beforeSmall == 1)
        for path in [large, small] { try await fileSystem.remove(path) }
    }
}
