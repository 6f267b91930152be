import FolderSyncTesting
import Foundation
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// Security review (issue 25, item 1) and a defect found from outside (issue 19, item 8): whether an application
/// is encrypted is read from a clear file, so a storage provider could switch encryption off, and a password given
/// for a clear folder was ignored.
@Suite("Encryption cannot be switched off")
struct EncryptionSwitchTests {
    @Test(
        "A provider replaces FormatVersion.plist and documentInfo.plist with clear ones: a client holding the key refuses, and writes nothing"
    )
    func clearSwap() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let remote = FileManagerFileSystem(rootURL: root)
        let a = try await TestClient.encrypted(
            remote, name: "A", in: directory, answers: EncryptionAnswers(.password("pw")))
        let b = try await TestClient.encrypted(
            remote, name: "B", in: directory, answers: EncryptionAnswers(.password("pw")))
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'written under encryption')")
        try await converge(a, b)

        // The provider swaps in clear files that say the application is not encrypted.
        let layout = a.document.layout
        var format = try PropertyListFile.decode(
            FormatVersionInfo.self, from: try await remote.read(layout.formatVersionFile), path: "f")
        format.encrypted = nil
        try await remote.write(try PropertyListFile.encode(format), to: layout.formatVersionFile)
        let key = try #require(a.document.integrityKey)
        let info = DocumentInfo(
            documentIdentifier: "DOC", documentDescription: "Notes", userInfo: [:], integrityKey: key,
            createdByClient: "client-A", creationDate: Fixture.date)
        try await remote.write(try PropertyListFile.encode(info), to: layout.documentInfoFile("DOC"))
        let before = try remoteFiles(root)

        // B relaunches: its key store holds the key, so the clear folder is refused and nothing is written.
        let relaunch = EncryptionAnswers()
        await #expect {
            _ = try await TestClient.encrypted(remote, name: "B", in: directory, answers: relaunch)
        } throws: {
            ($0 as? FolderSyncError)?.code == .encryptionMismatch
        }
        #expect(try remoteFiles(root) == before, "the refused registration wrote to the folder")
        // A client without the key but asked to encrypt refuses too; one that holds neither is told by the key file.
        let asked = try await TestClient.makeExpectingFailure(remote, name: "C", in: directory) { app in
            app.requiresEncryption = true
            app.encryptionHandler = { _ in .password("pw") }
        }
        #expect(asked == .encryptionMismatch)
        let plain = try await TestClient.makeExpectingFailure(remote, name: "D", in: directory) { _ in }
        #expect(plain == .encryptionMismatch)
        #expect(try remoteFiles(root) == before)
    }

    @Test(
        "A password given for a clear folder is a typed error, not silently ignored; a new folder is encrypted with it")
    func passwordForClearFolder() async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        _ = try await TestClient.make(remote, name: "A", in: directory)
        let refused = try await TestClient.makeExpectingFailure(remote, name: "B", in: directory) { app in
            app.requiresEncryption = true
            app.encryptionHandler = { _ in .password("secret") }
        }
        #expect(refused == .encryptionMismatch)

        let other = FileManagerFileSystem(rootURL: directory.subdirectory("other"))
        let encrypted = try await TestClient.make(other, name: "E", in: directory) { app in
            app.requiresEncryption = true
            app.encryptionHandler = { _ in .password("secret") }
        }
        #expect(encrypted.app.shouldUseEncryption)
        let declined = try await TestClient.makeExpectingFailure(
            FileManagerFileSystem(rootURL: directory.subdirectory("third")), name: "F",
            in: directory
        ) { app in
            app.requiresEncryption = true
            app.encryptionHandler = { _ in .noEncryption }
        }
        #expect(declined == .encryptionMismatch)
    }
}

extension TestClient {
    /// Registers a client that must fail; returns the error's code.
    static func makeExpectingFailure(
        _ remote: any RemoteFileSystem, name: String, in directory: TemporaryDirectory,
        configure: (ApplicationSyncManager) -> Void
    ) async throws -> FolderSyncError.Code? {
        do {
            _ = try await make(remote, name: name, in: directory, configure: configure)
            return nil
        } catch let error as FolderSyncError {
            return error.code
        }
    }
}
