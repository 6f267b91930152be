import Crypto
import CryptoExtras
import Foundation

/// Deriving the password key, checking it and unwrapping the data key with it.
extension EncryptionKeyInfo {
    static let pbkdf2 = "PBKDF2-SHA256"
    static let aesGCM = "AES-256-GCM"
    /// The PBKDF2 rounds FolderSync writes, and the fewest it accepts (fewer: ``FolderSyncError/Code/tamperedFile``).
    static let minimumIterations = 600_000
    /// The most PBKDF2 rounds a key file may ask for: about 3.5 s of derivation here (600,000 take ~0.2 s). A key
    /// file asking for more is refused before anything is derived (``FolderSyncError/Code/corruptFile``): whoever
    /// can write the shared folder could otherwise make every joining device hang (2³¹ rounds: hours) or crash
    /// (rounds beyond 2³²). Raising the rounds FolderSync writes stays possible up to this bound.
    static let maximumIterations = 10_000_000
    private static let verifierLabel = Data("FolderSync password verifier v1".utf8)
    private static let wrappingLabel = Data("FolderSync data key v1".utf8)

    /// Wraps `dataKey` under a password key derived from `password` with a new salt; returns the file and that key.
    static func make(wrapping dataKey: SymmetricKey, password: String, client: String, date: Date) throws -> (
        EncryptionKeyInfo, SymmetricKey
    ) {
        try make(
            wrapping: dataKey, password: password, client: client, date: date, salt: SymmetricKey(size: .bits256).bytes,
            nonce: AES.GCM.Nonce())
    }

    /// The same with a given salt and wrapping nonce instead of random ones: the same input then gives the same
    /// file. Only for tests that pin the format against golden files; never reuse a salt or a nonce.
    static func make(
        wrapping dataKey: SymmetricKey, password: String, client: String, date: Date,
        salt: Data, nonce: AES.GCM.Nonce
    ) throws -> (EncryptionKeyInfo, SymmetricKey) {
        let passwordKey = try derive(password, salt: salt, iterations: minimumIterations)
        let wrapped = try AES.GCM.seal(dataKey.bytes, using: passwordKey, nonce: nonce, authenticating: wrappingLabel)
        let info = EncryptionKeyInfo(
            keyDerivation: pbkdf2, iterations: minimumIterations, salt: salt, cipher: aesGCM,
            wrappedDataKey: wrapped.combined!,
            verifier: Data(HMAC<SHA256>.authenticationCode(for: verifierLabel, using: passwordKey)),
            passwordSetByClient: client, passwordSetDate: date)
        return (info, passwordKey)
    }

    private static func derive(_ password: String, salt: Data, iterations: Int) throws -> SymmetricKey {
        try KDF.Insecure.PBKDF2.deriveKey(
            from: Data(password.utf8), salt: salt, using: .sha256, outputByteCount: 32, rounds: iterations)
    }

    /// The password key of `password` with this file's parameters (~0.2 s: PBKDF2 is slow on purpose).
    ///
    /// - Throws: ``FolderSyncError/Code/unsupportedFormatVersion`` for another KDF or cipher,
    ///   ``FolderSyncError/Code/tamperedFile`` for parameters weaker than FolderSync ever writes,
    ///   ``FolderSyncError/Code/corruptFile`` for more rounds than ``maximumIterations`` or a salt over 1 KiB.
    func passwordKey(for password: String, path: RemotePath) throws -> SymmetricKey {
        guard keyDerivation == Self.pbkdf2, cipher == Self.aesGCM else {
            throw FolderSyncError(
                .unsupportedFormatVersion, "key derivation \(keyDerivation) with cipher \(cipher) is not supported",
                path: path.description)
        }
        guard iterations <= Self.maximumIterations, salt.count <= 1024 else {
            throw FolderSyncError(
                .corruptFile,
                """
                asks for \(iterations) PBKDF2 rounds with a \(salt.count)-byte salt; FolderSync accepts \(Self.minimumIterations)…\(Self.maximumIterations) \
                rounds and at most 1,024 bytes of salt; nothing was derived
                """, path: path.description)
        }
        guard iterations >= Self.minimumIterations, salt.count >= 16 else {
            throw FolderSyncError(
                .tamperedFile, "the encryption parameters are weaker than FolderSync writes (\(iterations) rounds)",
                path: path.description)
        }
        return try Self.derive(password, salt: salt, iterations: iterations)
    }

    /// Whether `passwordKey` comes from the password this file was written with (compared in constant time).
    func accepts(_ passwordKey: SymmetricKey) -> Bool {
        HMAC<SHA256>.isValidAuthenticationCode(verifier, authenticating: Self.verifierLabel, using: passwordKey)
    }

    /// Opens the data key with a password key.
    ///
    /// - Throws: ``FolderSyncError/Code/wrongPassword`` when the verifier refuses the key;
    ///   ``FolderSyncError/Code/tamperedFile`` when it accepts it but the wrapped key does not open.
    func dataKey(with passwordKey: SymmetricKey, path: RemotePath) throws -> SymmetricKey {
        guard accepts(passwordKey) else {
            throw FolderSyncError(
                .wrongPassword, "the password does not match the application's encryption key", path: path.description)
        }
        do {
            let key = try AES.GCM.open(
                AES.GCM.SealedBox(combined: wrappedDataKey), using: passwordKey, authenticating: Self.wrappingLabel)
            guard key.count == 32 else { throw CryptoKitError.incorrectKeySize }
            return SymmetricKey(data: key)
        } catch {
            throw FolderSyncError(
                .tamperedFile, "the wrapped data key fails authentication although the password is right",
                path: path.description)
        }
    }
}

extension SymmetricKey {
    /// The key's bytes, to save or wrap it; a new key's bytes also serve as random salts.
    var bytes: Data { withUnsafeBytes { Data($0) } }
}
