public import FolderSync
public import Foundation

/// Turns a location typed by a person (`--remote`) into a remote file system, the same way in every tool.
///
/// - a path or a `file://` URL: a ``/FolderSync/FileManagerFileSystem`` on that folder, which must exist;
/// - an `http://` or `https://` URL: a ``WebDAVFileSystem``, with credentials
///   from `FOLDERSYNC_WEBDAV_USER` / `FOLDERSYNC_WEBDAV_PASSWORD` (or from the
///   URL's user information, which is then removed), the request timeout from `FOLDERSYNC_WEBDAV_TIMEOUT`
///   (seconds; 30 by default), and credentials allowed over clear `http://` to another machine only with
///   `FOLDERSYNC_WEBDAV_ALLOW_HTTP=1` (``WebDAVFileSystem/Configuration/allowsInsecureCredentials``).
public enum RemoteLocation {
    /// Seconds an attempt of a WebDAV request may wait for the server
    /// (``WebDAVFileSystem/Configuration/requestTimeout``).
    public static let timeoutVariable = "FOLDERSYNC_WEBDAV_TIMEOUT"
    /// `1` lets credentials go over clear `http://` to another machine
    /// (``WebDAVFileSystem/Configuration/allowsInsecureCredentials``).
    public static let allowHTTPVariable = "FOLDERSYNC_WEBDAV_ALLOW_HTTP"

    /// Whether `location` names a WebDAV share rather than a folder.
    public static func isWebDAV(_ location: String) -> Bool {
        let lowered = location.lowercased()
        return lowered.hasPrefix("http://") || lowered.hasPrefix("https://")
    }

    /// The file system `location` names (see ``RemoteLocation``).
    /// - Parameters:
    ///   - location: A folder path, a `file://` URL, or an `http://` or `https://` URL.
    ///   - environment: Where WebDAV credentials are read from; the process's environment by default.
    /// - Throws: ``/FolderSync/FolderSyncError`` with `invalidConfiguration` for an unsupported or invalid URL, an
    ///   invalid timeout, or credentials over clear `http://` to another machine without
    ///   `FOLDERSYNC_WEBDAV_ALLOW_HTTP=1`; `remoteUnavailable` when a local folder does not exist (a share not
    ///   mounted). Messages never show a password.
    public static func fileSystem(
        for location: String,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> any RemoteFileSystem {
        if isWebDAV(location) {
            guard let url = URL(string: location) else {
                throw FolderSyncError(.invalidConfiguration, "not a valid URL", path: redacted(location))
            }
            var configuration = WebDAVFileSystem.Configuration(
                baseURL: url, credentials: WebDAVCredentials.fromEnvironment(environment))
            if let text = environment[timeoutVariable] {
                guard let seconds = TimeInterval(text.trimmingCharacters(in: .whitespaces)), seconds > 0,
                    seconds.isFinite
                else {
                    throw FolderSyncError(
                        .invalidConfiguration, "\(timeoutVariable)=\(text) is not a number of seconds above 0")
                }
                configuration.requestTimeout = seconds
            }
            configuration.allowsInsecureCredentials = environment[allowHTTPVariable] == "1"
            do {
                return try WebDAVFileSystem(configuration: configuration)
            } catch let error as FolderSyncError where error.code == .invalidConfiguration {
                // The message names the URL; never the password it may carry.
                throw FolderSyncError(.invalidConfiguration, error.message, path: redacted(location))
            }
        }
        let lowered = location.lowercased()
        if lowered.contains("://") && !lowered.hasPrefix("file://") {
            throw FolderSyncError(
                .invalidConfiguration, "unsupported location: use a folder path, file://, http:// or https://",
                path: redacted(location))
        }
        let path = lowered.hasPrefix("file://") ? (URL(string: location)?.path ?? location) : location
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw FolderSyncError(
                .remoteUnavailable,
                "the shared folder is not there (no such directory: not mounted, moved or removed)",
                path: location)
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
