@_spi(ModelAdapter) public import FolderSync
import Foundation

/// The checks every ``/FolderSync/RemoteFileSystem`` must pass, for backend authors to run against their own backend.
///
/// Each check works in a fresh folder of its own (created under the file
/// system's root, removed afterwards), so one file system can serve them all
/// and a shared server can be used. Run it from any test framework:
///
/// ```swift
/// @Test func myBackendConforms() async throws {
///     let failures = try await RemoteFileSystemConformance { try MyFileSystem(…) }.run()
///     #expect(failures.isEmpty, "\(failures)")
/// }
/// ```
///
/// What is checked, one entry of ``checkNames`` each: folder creation
/// (parents, idempotence), write/read/stat/list, errors for missing items,
/// recursive idempotent removal, atomic replacement under concurrent readers,
/// publish-if-absent (and two racing publishers: exactly one wins), moves of
/// files and folders, large files through `upload`/`download`, and names with
/// spaces, punctuation and Unicode. A multi-client synchronization run over
/// the backend is the natural next test; FolderSync's own tests do it with
/// real stores.
public struct RemoteFileSystemConformance: Sendable {
    /// Makes the file system under test; called once per check.
    public typealias Factory = @Sendable () async throws -> any RemoteFileSystem

    let makeFileSystem: Factory
    /// The size of the file the large-file check moves through `upload` and `download`.
    public var largeFileSize: Int
    /// How many times two publishers race for one name.
    public var publishRaceRounds: Int
    /// How many replacements the atomic-replace check makes while a reader reads.
    public var replaceRounds: Int

    /// A suite whose repeated checks run the given number of rounds.
    /// - Parameters:
    ///   - largeFileSize: The size in bytes of the large-file check's file; 20 MiB by default.
    ///   - publishRaceRounds: How many times two publishers race for one name.
    ///   - replaceRounds: How many replacements the atomic-replace check makes while a reader reads.
    ///   - makeFileSystem: Called once per check; may return the same file system every time.
    public init(
        largeFileSize: Int = 20 << 20, publishRaceRounds: Int = 8, replaceRounds: Int = 12,
        makeFileSystem: @escaping Factory
    ) {
        self.makeFileSystem = makeFileSystem
        self.largeFileSize = largeFileSize
        self.publishRaceRounds = publishRaceRounds
        self.replaceRounds = replaceRounds
    }

    typealias Check = @Sendable (ConformanceContext) async throws -> Void

    var checks: [(String, Check)] {
        [
            ("createDirectory", { try await $0.checkCreateDirectory() }),
            ("writeReadList", { try await $0.checkWriteReadList() }),
            ("missingItems", { try await $0.checkMissingItems() }),
            ("remove", { try await $0.checkRemove() }),
            ("atomicReplace", { [replaceRounds] in try await $0.checkAtomicReplace(rounds: replaceRounds) }),
            ("publishIfAbsent", { try await $0.checkPublishIfAbsent() }),
            ("publishRace", { [publishRaceRounds] in try await $0.checkPublishRace(rounds: publishRaceRounds) }),
            ("moveFilesAndFolders", { try await $0.checkMoves() }),
            ("largeFiles", { [largeFileSize] in try await $0.checkLargeFile(size: largeFileSize) }),
            ("portableNames", { try await $0.checkNames() }),
        ]
    }

    /// The names of the checks, in the order they run.
    public var checkNames: [String] { checks.map(\.0) }

    /// Runs the checks (all, or those named in `only`) one after the other and returns every failure; empty means
    /// conformant.
    ///
    /// Throws only `CancellationError`; anything a check throws is reported as a failure of that check.
    public func run(only: Set<String>? = nil) async throws -> [ConformanceFailure] {
        var failures: [ConformanceFailure] = []
        for (name, check) in checks where only?.contains(name) ?? true {
            try Task.checkCancellation()
            do {
                let fileSystem = try await makeFileSystem()
                let folder = RemotePath.root.appending("conformance-\(name)-\(UUID().uuidString.prefix(8))")
                try await fileSystem.createDirectory(at: folder)
                let context = ConformanceContext(check: name, fileSystem: fileSystem, folder: folder)
                do {
                    try await check(context)
                } catch {
                    try? await fileSystem.remove(folder)
                    throw error
                }
                try await fileSystem.remove(folder)
            } catch let failure as ConformanceFailure {
                failures.append(failure)
            } catch {
                failures.append(ConformanceFailure(check: name, message: "unexpected error: \(error)"))
            }
        }
        return failures
    }
}
