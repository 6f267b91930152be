@_spi(ModelAdapter) import FolderSync
import Foundation

/// What one check works with: the file system, its own folder, and assertions that throw ``ConformanceFailure``.
struct ConformanceContext: Sendable {
    let check: String
    let fileSystem: any RemoteFileSystem
    let folder: RemotePath

    func path(_ components: String...) -> RemotePath {
        components.reduce(folder) { $0.appending($1) }
    }

    func fail(_ message: String) -> ConformanceFailure {
        ConformanceFailure(check: check, message: message)
    }

    func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        if !condition { throw fail(message()) }
    }

    /// Runs `body` and requires it to throw a ``/FolderSync/FolderSyncError`` with `code`.
    func expectError(_ code: FolderSyncError.Code, _ what: String, _ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch let error as FolderSyncError {
            try expect(error.code == code, "\(what): expected \(code), got \(error)")
            return
        } catch {
            throw fail("\(what): expected FolderSyncError \(code), got \(type(of: error)): \(error)")
        }
        throw fail("\(what): expected \(code), but it succeeded")
    }

    /// The names in a listing, sorted.
    func names(in path: RemotePath) async throws -> [String] {
        try await fileSystem.contentsOfDirectory(at: path).map(\.name).sorted()
    }

    /// `count` bytes of a recognisable pattern, different for each `seed`.
    static func bytes(_ count: Int, seed: UInt8) -> Data {
        var bytes = [UInt8](repeating: 0, count: count)
        for index in 0..<count { bytes[index] = UInt8(truncatingIfNeeded: index &* 31 &+ Int(seed) &* 7 &+ index >> 8) }
        return Data(bytes)
    }
}
