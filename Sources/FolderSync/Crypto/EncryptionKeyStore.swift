public import Foundation

/// Where a client keeps the password key of an encrypted application, so the password is asked once, not at
/// every launch.
///
/// It holds the key derived from the password (never the password itself). Apps with a keychain supply their
/// own store; ``FileEncryptionKeyStore`` keeps it in a file only the user can read.
public protocol EncryptionKeyStore: Sendable {
    /// The password key saved for the application, or `nil`.
    func passwordKey(for applicationIdentifier: String) throws -> Data?
    /// Saves (replaces) the password key of the application.
    func savePasswordKey(_ key: Data, for applicationIdentifier: String) throws
}

/// Keeps password keys in files readable by the owner only (mode 0600), one per application, in a folder such
/// as the document's helper folder.
public struct FileEncryptionKeyStore: EncryptionKeyStore {
    /// The folder of the key files; created when the first key is saved.
    public let directory: URL

    /// A store keeping its key files in `directory` (nothing is created until a key is saved).
    public init(directory: URL) { self.directory = directory.standardizedFileURL }

    /// The file that holds an application's password key.
    public func fileURL(for applicationIdentifier: String) -> URL {
        directory.appendingPathComponent(applicationIdentifier + ".passwordkey")
    }

    public func passwordKey(for applicationIdentifier: String) throws -> Data? {
        let url = fileURL(for: applicationIdentifier)
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        return try LocalFiles.read(url)
    }

    public func savePasswordKey(_ key: Data, for applicationIdentifier: String) throws {
        try LocalFiles.createDirectory(directory)
        try LocalFiles.writeDurably(key, to: fileURL(for: applicationIdentifier), mode: 0o600)
    }
}
