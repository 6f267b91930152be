public import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one error type FolderSync throws.
///
/// Every error carries a stable ``Code`` (safe to persist and compare across
/// versions), a human-readable message, and — when the error is about a file —
/// the path of that file. Backend and SQLite errors are wrapped at the
/// boundary; credentials never appear in messages.
///
/// Match on codes the way GRDB matches result codes:
/// ```swift
/// do { try await document.synchronize() }
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
        /// The remote document's integrity key differs from the one this client knows: the remote was reset or
        /// replaced.
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
        /// FolderSync failed in a way it does not expect (a bug, or a library it uses failing); the message names
        /// the cause. Nothing was half done: the next sync starts over.
        public static let internalError = Code(rawValue: 26)
        /// The disk that holds the local store or its helper folder is full: SQLite, or a helper file, could not
        /// write. Nothing was half done; once there is space again, the next write or sync goes through.
        public static let localStoreFull = Code(rawValue: 27)
        /// Another installation syncs as this client: this device's store was copied to another computer (or copied
        /// from one) and both are used. Their change sets may share numbers; every device applies all of them. This
        /// device stops, keeps a backup, and continues as a new client with ``DocumentSyncManager/rejoin()``, which
        /// takes a new identifier (``ApplicationSyncManager/clientIdentifierChangeHandler``) and publishes its data
        /// under it; the other installation keeps the identity.
        public static let clientIdentityShared = Code(rawValue: 28)
        /// Detaching a document (``GRDBStore/stopTracking(documentAt:helperDirectory:keepingUnpublishedChanges:)``)
        /// would leave local changes that no other device has: nothing was changed.
        public static let unpublishedChanges = Code(rawValue: 29)

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
            case .internalError: "internalError"
            case .localStoreFull: "localStoreFull"
            case .clientIdentityShared: "clientIdentityShared"
            case .unpublishedChanges: "unpublishedChanges"
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
    /// The wrapped lower-level error in a short phrase (`permission denied`, `not a valid property list`), for logs
    /// and for ``description``; never the error's raw dump (domains, codes, user info).
    public let underlyingDescription: String?
    /// For resets (integrity mismatch, client or document deleted): where the local store and its unpublished
    /// changes were backed up before anything else happened. ``DocumentSyncManager/rejoin()`` re-joins.
    public internal(set) var backupPath: String?
    /// Whether this is ``Code/remoteUnavailable`` because the shared folder was reached but holds no tree of the
    /// application, though this client registered with it: a share not mounted (an empty mount point), or a folder
    /// emptied, replaced, or restored from a copy older than the application. Nothing was written; only the user can
    /// tell which. When the folder really was replaced, ``ApplicationSyncManager/remoteReplacementHandler``
    /// answering `true` makes the next sync set it up again, and every device then re-joins with its data.
    public internal(set) var isApplicationFolderMissing = false

    /// An error with `code`, a one-line `message` naming the cause, the path concerned, and the error it wraps.
    public init(_ code: Code, _ message: String, path: String? = nil, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.underlyingDescription = underlying.map(Self.phrase(describing:))
        self.backupPath = nil
    }

    /// One line: the code, the message, the path in parentheses (when there is one), the wrapped error's phrase
    /// and the backup path. Line breaks (from a file name, say) are shown as `\n`.
    public var description: String {
        var text = "\(code): \(message)"
        if let path, !path.isEmpty { text += " (\(path))" }
        if let underlyingDescription, !underlyingDescription.isEmpty { text += ": \(underlyingDescription)" }
        if let backupPath { text += "; local data backed up at \(backupPath)" }
        return text.replacingOccurrences(of: "\r", with: "\\r").replacingOccurrences(of: "\n", with: "\\n")
    }
}

extension FolderSyncError {
    /// A lower-level error in a few words, without Foundation's dump of it (`Error Domain=… Code=… UserInfo=…`,
    /// `DecodingError.dataCorrupted(Context(…))`), which names nothing a user can act on.
    static func phrase(describing error: any Error) -> String {
        switch error {
        case let error as FolderSyncError:
            return error.description
        case let error as DecodingError:
            return phrase(decoding: error)
        case is EncodingError:
            return "the value cannot be encoded"
        case let error as POSIXError:
            return String(cString: strerror(error.code.rawValue))
        default:
            break
        }
        let bridged = error as NSError
        switch bridged.domain {
        case NSCocoaErrorDomain:
            return phrase(cocoa: bridged)
        case NSPOSIXErrorDomain:
            return String(cString: strerror(Int32(truncatingIfNeeded: bridged.code)))
        case "NSURLErrorDomain":
            return "the network request failed (URL error \(bridged.code))"
        case "NSXMLParserErrorDomain":
            return "not well-formed XML (XML error \(bridged.code))"
        default:
            break
        }
        let text = String(describing: error).split(separator: "\n").first.map(String.init) ?? ""
        // A bridged NSError prints its domain, code and user info: say what kind of error it is instead.
        if text.isEmpty || text.contains("Error Domain=") || text.contains("Code=") || text.contains("UserInfo=") {
            return "an error of type \(type(of: error))"
        }
        return text.count > 300 ? String(text.prefix(300)) + "…" : text
    }

    private static func phrase(decoding error: DecodingError) -> String {
        func field(_ path: [any CodingKey]) -> String {
            path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty
                ? "not a valid property list or document" : "the value of \(field(context.codingPath)) is not valid"
        case .keyNotFound(let key, let context):
            return "the field \(field(context.codingPath + [key])) is missing"
        case .typeMismatch(_, let context):
            return context.codingPath.isEmpty
                ? "its contents do not have the expected structure"
                : "the field \(field(context.codingPath)) has the wrong type"
        case .valueNotFound(_, let context):
            return "the field \(field(context.codingPath)) has no value"
        @unknown default:
            return "its contents cannot be decoded"
        }
    }

    private static func phrase(cocoa error: NSError) -> String {
        if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(truncatingIfNeeded: underlying.code)))
        }
        switch error.code {
        case 4, 260: return "no such file"
        case 257, 513: return "permission denied"
        case 259, 3840: return "the file is damaged or not of the expected format"
        case 263: return "the file is too large"
        case 516: return "a file is in the way"
        case 640: return "no space left on the device"
        case 642: return "the volume is read-only"
        case 256: return "the file could not be read"
        case 512: return "the file could not be written"
        default: return "a file operation failed (error \(error.code))"
        }
    }
}

extension FolderSyncError {
    /// Refuses a file of a bounded kind that is larger than its bound (``RemoteFileSystem/read(_:maximumSize:)``).
    /// - Throws: ``Code/corruptFile`` naming `path`, its size and the bound.
    package static func checkSize(_ size: Int64, maximumSize: Int, path: String) throws {
        guard size > Int64(maximumSize) else { return }
        throw FolderSyncError(
            .corruptFile, "is \(size) bytes, more than the \(maximumSize) such a file can hold; not read", path: path)
    }

    /// Whether the error says a file cannot be used as it is (corrupt, or failing authentication when encrypted):
    /// what sync reads once more and what maintenance reports and skips.
    var isDamagedFile: Bool { code == .corruptFile || code == .tamperedFile }
}

/// What `read` returns, or `nil` when the file is damaged (an oversized one included): for listings, where one
/// client's damaged file must not stop the others. Other errors (the remote unreachable) still throw.
func unlessDamaged(_ read: () async throws -> Data?) async throws -> Data? {
    do {
        return try await read()
    } catch let error as FolderSyncError where error.isDamagedFile {
        return nil
    }
}

extension FolderSyncError: LocalizedError {
    public var errorDescription: String? { description }
}
