import Crypto
import Foundation
import Logging

extension ApplicationSyncManager {
    /// Changes the password of an encrypted application.
    ///
    /// Re-wraps the data key under a key derived from `newPassword` with a new salt and rewrites
    /// `Encryption/EncryptionKey.plist`, nothing else: every file stays sealed with the same data key. This client
    /// saves the new password key; other clients keep syncing while they run, and are asked for the new password
    /// (``EncryptionRequest/Reason/passwordChanged``) at their next registration.
    /// - Throws: ``FolderSyncError/Code/wrongPassword`` when `oldPassword` is not the current password,
    ///   ``FolderSyncError/Code/notRegistered`` or ``FolderSyncError/Code/invalidConfiguration`` when this manager
    ///   is not registered with an encrypted application.
    public func changeEncryptionPassword(from oldPassword: String, to newPassword: String) async throws {
        guard state == .ableToSync, let layout, let clientIdentifier else {
            throw FolderSyncError(.notRegistered, "register the application sync manager before changing its password")
        }
        guard let encrypted = remote as? EncryptedFileSystem else {
            throw FolderSyncError(.invalidConfiguration, "application \(layout.applicationIdentifier) is not encrypted")
        }
        guard !newPassword.isEmpty else {
            throw FolderSyncError(.invalidConfiguration, "the encryption password is empty")
        }
        let path = layout.encryptionKeyFile
        let current = try PropertyListFile.decode(
            EncryptionKeyInfo.self,
            from: try await underlyingRemote.read(path, maximumSize: PropertyListFile.maximumByteCount),
            path: path.description)
        let dataKey = try current.dataKey(with: try current.passwordKey(for: oldPassword, path: path), path: path)
        guard dataKey == encrypted.dataKey else {
            throw FolderSyncError(
                .tamperedFile, "the key file holds another data key than the one this client registered with",
                path: path.description)
        }
        let (info, passwordKey) = try EncryptionKeyInfo.make(
            wrapping: dataKey, password: newPassword, client: clientIdentifier,
            date: environment.now().wholeSeconds)
        try await underlyingRemote.write(try PropertyListFile.encode(info), to: path)
        try encryptionKeyStore?.savePasswordKey(passwordKey.bytes, for: layout.applicationIdentifier)
        environment.logger.info("Changed the encryption password of \(layout.applicationIdentifier)")
    }
}
