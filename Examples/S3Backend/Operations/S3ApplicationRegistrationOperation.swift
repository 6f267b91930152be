public import FolderSync
public import Foundation

/// Application registration on S3: no folder markers, and the two files of the first client written with
/// one conditional PUT each.
///
/// The standard steps would write a marker object per folder and publish `ReadMe.txt` and
/// `FormatVersion.plist` through a temporary and a move: on S3 a GET, a conditional PUT and a DELETE more
/// per file. Here `If-None-Match: *` makes the PUT itself "publish if absent".
public final class S3ApplicationRegistrationOperation: ApplicationRegistrationOperation, @unchecked Sendable {
    let s3: S3FileSystem

    /// The standard operation's configuration, with S3 steps.
    public init(s3: S3FileSystem, standard: ApplicationRegistrationOperation) {
        self.s3 = s3
        super.init(copying: standard)
    }

    /// An encrypted application's files are sealed by the operation's file system: the standard steps then.
    private var talksToBucket: Bool { !(fileSystem is EncryptedFileSystem) }

    /// Nothing to do: on S3 a folder exists as soon as a key inside it does.
    public override func createApplicationDirectories() async throws {
        if !talksToBucket { try await super.createApplicationDirectories() }
    }

    public override func writeReadMeFileIfAbsent(_ data: Data) async throws {
        guard talksToBucket else { return try await super.writeReadMeFileIfAbsent(data) }
        _ = try await s3.putIfAbsent(data, at: layout.readMeFile)
    }

    public override func publishFormatVersionFileIfAbsent(_ data: Data) async throws -> Bool {
        guard talksToBucket else { return try await super.publishFormatVersionFileIfAbsent(data) }
        return try await s3.putIfAbsent(data, at: layout.formatVersionFile)
    }

    /// Nothing to do: `deviceInfo.plist` is written next, and its key makes the folder.
    public override func createClientDeviceDirectory() async throws {
        if !talksToBucket { try await super.createClientDeviceDirectory() }
    }
}
