public import Foundation

/// The one error type FolderSync throws.
///
/// Every error carries a stable ``Code`` (safe to persist and compare across
/// versions), a human-readable message, and — when the error is about a file —
/// the path of that file. Backend and SQLite errors are wrapped at the
/// boundary; credentials never appear in messages.
///
/// Match on codes the way GRDB matches result codes:
/// ```swift
/// do { try await manager.registerDocument() }
/// catch FolderSyncError.Code.integrityKeyMismatch { … }
/// ```
public struct FolderSyncError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable error code. Raw values never change meaning once released.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// An identifier would escape the tree or is not a portable file name.
        public static let invalidIdentifier = Code(rawValue: 1)
        /// A file is truncated, garbled or fails its checksum.
        public static let corruptFile = Code(rawValue: 2)
        /// A file or the remote tree uses a format newer than this build understands.
        public static let unsupportedFormatVersion = Code(rawValue: 3)
        /// The remote (or a local helper file) cannot be read or written for lack of permission.
        public static let permissionDenied = Code(rawValue: 4)
        /// A required remote file or folder does not exist.
        public static let remoteItemNotFound = Code(rawValue: 5)
        /// A remote file already exists where it was to be created exclusively.
        public static let remoteItemExists = Code(rawValue: 6)
        /// The remote has no space left, or its quota is exhausted.
        public static let remoteFull = Code(rawValue: 7)
        /// Any other input/output failure of the remote.
        public static let remoteIOFailed = Code(rawValue: 8)
        /// The remote server could not be reached or stopped answering.
        public static let connectionFailed = Code(rawValue: 9)
        /// The TLS handshake with the remote server failed.
        public static let tlsFailed = Code(rawValue: 10)
        /// The app answered "no" when registration paused to ask a question.
        public static let registrationCancelled = Code(rawValue: 11)
        /// A task needs a registered manager, and this one is not registered.
        public static let notRegistered = Code(rawValue: 12)
        /// The remote document's integrity key differs from the one this client knows: the remote was reset or replaced.
        public static let integrityKeyMismatch = Code(rawValue: 13)
        /// Another client or an operator deleted this client from the document.
        public static let clientDeleted = Code(rawValue: 14)
        /// The document was deleted from the remote.
        public static let documentDeleted = Code(rawValue: 15)
        /// The local store or a local helper file could not be read or written.
        public static let localStoreFailed = Code(rawValue: 16)
        /// The task was cancelled; everything was left consistent.
        public static let cancelled = Code(rawValue: 17)
        /// The configuration is inconsistent (for example a missing answer handler).
        public static let invalidConfiguration = Code(rawValue: 18)
        /// The password does not open the application's encryption key (checked against its verifier, so it is
        /// told apart from a damaged key file).
        public static let wrongPassword = Code(rawValue: 19)
        /// An encrypted file fails authentication: altered, damaged, moved or swapped from another path, or
        /// sealed with another key. The error names the file; nothing of it was used.
        public static let tamperedFile = Code(rawValue: 20)
        /// An attachment a row references is not on the remote ("gone"): deleted there, or never uploaded.
        public static let attachmentGone = Code(rawValue: 21)
        /// A file attached as immutable changed before it was uploaded: it no longer has the attached contents.
        public static let attachmentChanged = Code(rawValue: 22)
        /// A sync would have deleted most of a table's rows and the app declined (``DeletionFailSafe``).
        public static let massDeletionDeclined = Code(rawValue: 23)
        /// The shared folder cannot be reached: its directory is missing or an empty mount point, the server
        /// refuses connections, cannot be resolved or does not answer in time. Nothing local or remote was
        /// touched; the next sync tries again. Distinct from ``remoteItemNotFound``, a file missing inside a
        /// folder that is there.
        public static let remoteUnavailable = Code(rawValue: 24)
        /// The shared folder's encryption is not what this client knows or the app requires: it says it is not
        /// encrypted while this client holds its key, or while the app asked for encryption. Nothing was written
        /// (a folder's `FormatVersion.plist` is clear, so a storage provider could otherwise switch encryption off).
        public static let encryptionMismatch = Code(rawValue: 25)

        public var description: String {
            switch self {
            case .invalidIdentifier: "invalidIdentifier"
            case .corruptFile: "corruptFile"
            case .unsupportedFormatVersion: "unsupportedFormatVersion"
            case .permissionDenied: "permissionDenied"
            case .remoteItemNotFound: "remoteItemNotFound"
            case .remoteItemExists: "remoteItemExists"
            case .remoteFull: "remoteFull"
            case .remoteIOFailed: "remoteIOFailed"
            case .connectionFailed: "connectionFailed"
            case .tlsFailed: "tlsFailed"
            case .registrationCancelled: "registrationCancelled"
            case .notRegistered: "notRegistered"
            case .integrityKeyMismatch: "integrityKeyMismatch"
            case .clientDeleted: "clientDeleted"
            case .documentDeleted: "documentDeleted"
            case .localStoreFailed: "localStoreFailed"
            case .cancelled: "cancelled"
            case .invalidConfiguration: "invalidConfiguration"
            case .wrongPassword: "wrongPassword"
            case .tamperedFile: "tamperedFile"
            case .attachmentGone: "attachmentGone"
            case .attachmentChanged: "attachmentChanged"
            case .massDeletionDeclined: "massDeletionDeclined"
            case .remoteUnavailable: "remoteUnavailable"
            case .encryptionMismatch: "encryptionMismatch"
            default: "code\(rawValue)"
            }
        }

        /// Lets `catch FolderSyncError.Code.someCode` match a thrown error.
        public static func ~= (code: Code, error: any Error) -> Bool {
            (error as? FolderSyncError)?.code == code
        }
    }

    /// What went wrong, as a stable code.
    public let code: Code
    /// A one-line explanation naming the cause.
    public let message: String
    /// The remote or local path the error is about, when there is one.
    public let path: String?
    /// A description of the wrapped lower-level error, when there is one.
    public let underlyingDescription: String?
    /// For resets (integrity mismatch, client or document deleted): where the local store and its unpublished
    /// changes were backed up before anything else happened. ``DocumentSyncManager/rejoin()`` re-joins.
    public internal(set) var backupPath: String?

    /// An error with `code`, a one-line `message` naming the cause, the path concerned, and the error it wraps.
    public init(_ code: Code, _ message: String, path: String? = nil, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.underlyingDescription = underlying.map { String(describing: $0) }
        self.backupPath = nil
    }

    public var description: String {
        var text = "\(code): \(message)"
        if let path { text += " (\(path))" }
        if let underlyingDescription { text += ": \(underlyingDescription)" }
        if let backupPath { text += "; local data backed up at \(backupPath)" }
        return text
    }
}

extension FolderSyncError {
    /// Refuses a file of a bounded kind that is larger than its bound (``RemoteFileSystem/read(_:maximumSize:)``).
    /// - Throws: ``Code/corruptFile`` naming `path`, its size and the bound.
    package static func checkSize(_ size: Int64, maximumSize: Int, path: String) throws {
        guard size > Int64(maximumSize) else { return }
        throw FolderSyncError(.corruptFile, "is \(size) bytes, more than the \(maximumSize) such a file can hold; not read", path: path)
    }

    /// Whether the error says a file cannot be used as it is (corrupt, or failing authentication when encrypted):
    /// what sync reads once more and what maintenance reports and skips.
    var isDamagedFile: Bool { code == .corruptFile || code == .tamperedFile }
}

extension FolderSyncError: LocalizedError {
    public var errorDescription: String? { description }
}
