public import Foundation

/// `Encryption/EncryptionKey.plist`: what turns the password into the application's data key. Stored in clear.
///
/// The password goes through PBKDF2-SHA256 with ``salt`` and ``iterations`` to give the *password key*. The
/// password key opens ``wrappedDataKey`` (AES-256-GCM), the random key every file is encrypted with; changing the
/// password rewrites only this file. ``verifier`` (HMAC-SHA256 of a fixed label under the password key) tells a
/// wrong password apart from a damaged file, and reveals nothing about either key.
public struct EncryptionKeyInfo: PropertyListPayload {
    public static let kind = "encryptionKey"
    public static let formatVersion = 1
    /// The key derivation function: `PBKDF2-SHA256`.
    public var keyDerivation: String
    /// PBKDF2 rounds: 600,000 written; 600,000…10,000,000 accepted (``FolderSyncError/Code/tamperedFile`` below,
    /// ``FolderSyncError/Code/corruptFile`` above, before any derivation).
    public var iterations: Int
    /// 32 random bytes, new at every password change.
    public var salt: Data
    /// The file cipher: `AES-256-GCM`.
    public var cipher: String
    /// The data key sealed by the password key: AES-GCM nonce, ciphertext and tag.
    public var wrappedDataKey: Data
    /// HMAC-SHA256 of `FolderSync password verifier v1` under the password key.
    public var verifier: Data
    /// The client that chose the current password.
    public var passwordSetByClient: String
    /// When the current password was chosen (at creation or by the last password change).
    public var passwordSetDate: Date
}
