import FolderSyncTesting
import Foundation

@_spi(Tooling) @_spi(ModelAdapter) @testable import FolderSync

/// Answers registration's encryption questions from a script, and remembers what was asked.
final class EncryptionAnswers: Sendable {
    private let state: Locked<(answers: [EncryptionAnswer], asked: [EncryptionRequest.Reason])>

    init(_ answers: EncryptionAnswer...) { state = Locked((answers, [])) }

    var asked: [EncryptionRequest.Reason] { state.current.asked }

    func answer(_ request: EncryptionRequest) -> EncryptionAnswer {
        state.withLock { state in
            state.asked.append(request.reason)
            return state.answers.isEmpty ? .cancel : state.answers.removeFirst()
        }
    }
}

extension TestClient {
    /// A client of the encrypted notes application, keeping its password key in its own folder.
    static func encrypted(
        _ remote: any RemoteFileSystem, name: String, in directory: TemporaryDirectory,
        answers: EncryptionAnswers
    ) async throws -> TestClient {
        try await make(remote, name: name, in: directory) { app in
            app.encryptionHandler = { answers.answer($0) }
            app.encryptionKeyStore = FileEncryptionKeyStore(
                directory: directory.subdirectory(name).appendingPathComponent("keys"))
        }
    }
}

/// Every file under `root`: its path relative to `root`, and its bytes.
func remoteFiles(_ root: URL) throws -> [String: Data] {
    var files: [String: Data] = [:]
    for path in treeListing(of: root) where !path.hasSuffix("/") {
        files[path] = try Data(contentsOf: root.appendingPathComponent(path))
    }
    return files
}
