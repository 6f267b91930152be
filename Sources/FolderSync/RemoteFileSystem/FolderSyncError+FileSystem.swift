import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// For backend authors: the codes the sync engine acts on, from the errors a file-system API throws, so that a
/// backend over a mounted folder, a FUSE file system or a POSIX API maps them as ``FileManagerFileSystem`` does.
extension FolderSyncError {
    /// The error for a failed system call on the remote, `errno` mapped to the code that names the cause: a missing
    /// file or folder is ``Code/remoteItemNotFound``, an existing one ``Code/remoteItemExists``, a refusal
    /// ``Code/permissionDenied``, a full disk ``Code/remoteFull``, a mount that stopped answering (`ENOTCONN` of a
    /// dead FUSE mount, `ESTALE` of NFS, a host down or a timeout) ``Code/remoteUnavailable``, anything else
    /// ``Code/remoteIOFailed``.
    ///
    /// - Parameters:
    ///   - code: the `errno` the call set.
    ///   - operation: what was tried, in a word or two ("read", "rename"), for the message.
    ///   - path: the remote path concerned.
    public init(errno code: Int32, operation: String, path: RemotePath) {
        self = LocalFiles.error(operation, path: path.description, errno: code, remote: true)
    }

    /// The error for what a file-system API threw on the remote: a `POSIXError`, a `CocoaError` of Foundation's
    /// `FileManager` (its file codes, or the POSIX error under it) or an `NSError` of the POSIX domain, mapped as
    /// ``init(errno:operation:path:)`` maps `errno`; any other error is ``Code/remoteIOFailed`` with it as the
    /// underlying error. A ``FolderSyncError`` is returned as it is.
    public init(fileSystemError error: any Error, operation: String, path: RemotePath) {
        if let error = error as? FolderSyncError {
            self = error
        } else if let code = Self.posixCode(of: error) {
            self.init(errno: code, operation: operation, path: path)
        } else {
            self.init(.remoteIOFailed, "\(operation) failed", path: path.description, underlying: error)
        }
    }

    /// The POSIX error code an error stands for, if any.
    private static func posixCode(of error: any Error) -> Int32? {
        if let error = error as? POSIXError { return error.code.rawValue }
        let bridged = error as NSError
        if bridged.domain == NSPOSIXErrorDomain { return Int32(truncatingIfNeeded: bridged.code) }
        guard bridged.domain == NSCocoaErrorDomain else { return nil }
        if let underlying = bridged.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain
        {
            return Int32(truncatingIfNeeded: underlying.code)
        }
        switch CocoaError.Code(rawValue: bridged.code) {
        case .fileNoSuchFile, .fileReadNoSuchFile: return ENOENT
        case .fileWriteFileExists: return EEXIST
        case .fileReadNoPermission, .fileWriteNoPermission, .fileWriteVolumeReadOnly: return EACCES
        case .fileWriteOutOfSpace: return ENOSPC
        default: return nil
        }
    }
}
