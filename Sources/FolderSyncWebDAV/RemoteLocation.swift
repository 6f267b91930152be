public import FolderSync
public import Foundation

/// Turns a location typed by a person (`--remote`) into a remote file system, the same way in every tool.
///
/// - a path or a `file://` URL: a ``/FolderSync/FileManagerFileSystem`` on that folder, which must exist;
/// - an `http://` or `https://` URL: a ``WebDAVFileSystem``, with credentials
///   from `FOLDERSYNC_WEBDAV_USER` / `FOLDERSYNC_WEBDAV_PASSWORD` (or from the
///   URL's user information, which is then removed).
public enum RemoteLocation {
    /// Whether `location` names a WebDAV share rather than a folder.
    public static func isWebDAV(_ location: String) -> Bool {
        let lowered = location.lowercased()
        return lowered.hasPrefix("http://") || lowered.hasPrefix("https://")
    }

    /// The file system `location` names (see ``RemoteLocation``).
    /// - Parameters:
    ///   - location: A folder path, a `file://` URL, or an `http://` or `https://` URL.
    ///   - environment: Where WebDAV credentials are read from; the process's environment by default.
    /// - Throws: ``/FolderSync/FolderSyncError`` with `invalidConfiguration` for an unsupported or invalid URL,
    ///   `remoteItemNotFound` when a local folder does not exist. Messages never show a password.
    public static func fileSystem(for location: String,
                                  environment: [String: String] = ProcessInfo.processInfo.environment) throws -> any RemoteFileSystem {
        if isWebDAV(location) {
            guard let url = URL(string: location) else {
                throw FolderSyncError(.invalidConfiguration, "not a valid URL", path: redacted(location))
            }
            return try WebDAVFileSystem(baseURL: url, credentials: WebDAVCredentials.fromEnvironment(environment))
        }
        let lowered = location.lowercased()
        if lowered.contains("://") && !lowered.hasPrefix("file://") {
            throw FolderSyncError(.invalidConfiguration, "unsupported location: use a folder path, file://, http:// or https://",
                                  path: redacted(location))
        }
        let path = lowered.hasPrefix("file://") ? (URL(string: location)?.path ?? location) : location
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw FolderSyncError(.remoteItemNotFound, "no such directory", path: location)
        }
        return FileManagerFileSystem(rootURL: URL(fileURLWithPath: path, isDirectory: true))
    }

    /// `location` without a password, for messages.
    public static func redacted(_ location: String) -> String {
        guard var parts = URLComponents(string: location), parts.password != nil else { return location }
        parts.password = "***"
        return parts.string ?? location
    }
}
