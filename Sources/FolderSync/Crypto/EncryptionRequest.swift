/// A question registration pauses on for encryption (TICoreDataSync's "paused to ask whether to use encryption"
/// and "paused to request the password").
public struct EncryptionRequest: Sendable, Hashable {
    /// Why registration asks.
    public enum Reason: Sendable, Hashable {
        /// This client creates the application's remote tree: answer ``EncryptionAnswer/password(_:)`` to encrypt it
        /// with that password, or ``EncryptionAnswer/noEncryption``. The choice cannot be changed later.
        case newApplication
        /// The application is encrypted and this client holds no key for it: ask the user for the password.
        case passwordNeeded
        /// The last password answered was wrong: ask again, or cancel.
        case wrongPassword
        /// The saved key no longer matches: another client changed the password. Ask for the new one.
        case passwordChanged
    }

    /// The application whose registration asks, so an app with several can tell the user which password it needs.
    public let applicationIdentifier: String
    /// Why registration asks: a new application, a first password, a wrong one, or a changed one.
    public let reason: Reason
    /// 1 for the first question of a registration, then 2, 3… while passwords are wrong.
    public let attempt: Int

    /// A request as registration makes it; tests and custom registration steps build their own.
    public init(applicationIdentifier: String, reason: Reason, attempt: Int) {
        self.applicationIdentifier = applicationIdentifier
        self.reason = reason
        self.attempt = attempt
    }
}

/// The app's answer to an ``EncryptionRequest``.
public enum EncryptionAnswer: Sendable, Hashable {
    /// The password: for a new application, encrypt it with this password; otherwise, try it.
    case password(String)
    /// For a new application: do not encrypt. To any other question it cancels.
    case noEncryption
    /// Stop registering: ``FolderSyncError/Code/registrationCancelled``, or
    /// ``FolderSyncError/Code/wrongPassword`` after a wrong password.
    case cancel
}

extension EncryptionAnswer {
    /// The answer when nobody is asked (no handler, no delegate): a new application is not encrypted, and any
    /// other question cancels.
    @Sendable public static func unattended(_ request: EncryptionRequest) async -> EncryptionAnswer {
        request.reason == .newApplication ? .noEncryption : .cancel
    }
}
