import FolderSyncTesting
import Foundation
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// What the library gives a backend author: errors mapped to the codes sync acts on, and a forwarding base that
/// keeps streaming.
@Suite("A backend author's kit")
struct BackendKitTests {
    @Test("errno, POSIXError, FileManager's CocoaError and NSError map to the codes sync acts on, naming the path")
    func errorMapping() throws {
        let path = try RemotePath("a/b.plist")
        let cases: [(any Error, FolderSyncError.Code)] = [
            (POSIXError(.ENOENT), .remoteItemNotFound),
            (POSIXError(.EEXIST), .remoteItemExists),
            (POSIXError(.EACCES), .permissionDenied),
            (POSIXError(.ENOSPC), .remoteFull),
            (POSIXError(.EIO), .remoteIOFailed),
            (CocoaError(.fileReadNoSuchFile), .remoteItemNotFound),
            (CocoaError(.fileWriteFileExists), .remoteItemExists),
            (CocoaError(.fileWriteVolumeReadOnly), .permissionDenied),
            (CocoaError(.fileWriteOutOfSpace), .remoteFull),
            (NSError(domain: NSPOSIXErrorDomain, code: Int(ENOTDIR)), .remoteItemNotFound),
            (CocoaError(.fileReadCorruptFile), .remoteIOFailed),
            (URLError(.timedOut), .remoteIOFailed),
        ]
        for (error, code) in cases {
            let mapped = FolderSyncError(fileSystemError: error, operation: "read", path: path)
            #expect(mapped.code == code && mapped.path == "a/b.plist", "\(error) → \(mapped)")
            #expect(!mapped.description.contains("Error Domain="), "\(mapped)")
        }
        // What FileManager really throws for a missing file.
        do {
            _ = try FileManager.default.attributesOfItem(atPath: "/nonexistent-\(UUID().uuidString)")
            Issue.record("no error")
        } catch {
            #expect(FolderSyncError(fileSystemError: error, operation: "stat", path: path).code == .remoteItemNotFound)
        }
        let already = FolderSyncError(.corruptFile, "bad", path: "x")
        #expect(FolderSyncError(fileSystemError: already, operation: "read", path: path) == already)
        #expect(FolderSyncError(errno: EROFS, operation: "write", path: path).code == .permissionDenied)
    }

    @Test("A forwarding wrapper streams whole-store reads through its base's readPieces, announced as a download")
    func forwardingKeepsStreaming() async throws {
        final class Streaming: ForwardingFileSystem, @unchecked Sendable {
            let requests = Locked<[Request]>([])
            override func willForward(_ request: Request, path: RemotePath) async throws {
                requests.withLock { $0.append(request) }
            }
        }
        final class PiecesOnly: ForwardingFileSystem, @unchecked Sendable {
            let pieceCalls = Locked(0)
            override func readPieces(of path: RemotePath, size: Int, _ body: (Data) throws -> Void) async throws {
                pieceCalls.withLock { $0 += 1 }
                try await super.readPieces(of: path, size: size, body)
            }
            override func download(_ path: RemotePath, toLocalFile url: URL) async throws {
                Issue.record("a streaming read went through a download")
                try await super.download(path, toLocalFile: url)
            }
        }
        let memory = InMemoryFileSystem()
        let bytes = Data((0..<10_000).map { UInt8(truncatingIfNeeded: $0) })
        let big = try RemotePath("big")
        try await memory.write(bytes, to: big)
        let inner = PiecesOnly(memory)
        let outer = Streaming(inner)
        var received = Data()
        var pieces = 0
        try await outer.readPieces(of: big, size: 4_096) { piece in
            received += piece
            pieces += 1
        }
        #expect(received == bytes && pieces >= 1)
        #expect(inner.pieceCalls.current == 1, "the wrapper called its base's readPieces")
        #expect(outer.requests.current == [.download])

        let throughRead = ForwardingFileSystem(memory, transfersThroughReadAndWrite: true)
        var again = Data()
        var count = 0
        try await throughRead.readPieces(of: big, size: 4_096) {
            again += $0
            count += 1
        }
        #expect(again == bytes && count == 3, "read whole, handed on in pieces of the size asked")
    }
}
