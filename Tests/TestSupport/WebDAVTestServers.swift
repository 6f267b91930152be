@_spi(Tooling) import FolderSync
import FolderSyncWebDAV
import Foundation

/// The WebDAV servers `scripts/test` starts on 127.0.0.1 (wsgidav, rclone, Apache mod_dav, nginx dav), read from
/// `FOLDERSYNC_WEBDAV_TEST_SERVERS` ("name=url name=url …", credentials in the URLs).
///
/// When the variable is missing the WebDAV tests fail, never skip: a green
/// run must mean the backend was tested against real servers.
enum WebDAVTestServers {
    static let variable = "FOLDERSYNC_WEBDAV_TEST_SERVERS"
    static let names = ["wsgidav", "rclone", "apache", "nginx"]

    struct Missing: Error, CustomStringConvertible {
        let description: String
    }

    /// The base URL of server `name`, with its credentials.
    static func url(_ name: String) throws -> URL {
        guard let value = ProcessInfo.processInfo.environment[variable], !value.isEmpty else {
            throw Missing(
                description: "\(variable) is not set: run the tests with scripts/test, which starts the WebDAV servers "
                    + "(or `eval \"$(scripts/webdav-servers start DIR)\"` before swift test)")
        }
        for pair in value.split(separator: " ") where pair.hasPrefix(name + "=") {
            if let url = URL(string: String(pair.dropFirst(name.count + 1))) { return url }
        }
        throw Missing(description: "\(variable) names no server '\(name)': run scripts/test")
    }

    /// A WebDAV file system rooted in a fresh collection of its own on server `name`, so parallel tests never meet.
    static func fileSystem(
        _ name: String, test: String = #function,
        configure: (inout WebDAVFileSystem.Configuration) -> Void = { _ in }
    ) async throws -> WebDAVFileSystem {
        let server = try url(name)
        let folder = "t-" + test.filter { $0.isLetter || $0.isNumber }.prefix(24) + "-" + UUID().uuidString.prefix(8)
        try await WebDAVFileSystem(baseURL: server).createDirectory(at: RemotePath(folder))
        var configuration = WebDAVFileSystem.Configuration(
            baseURL: server.appendingPathComponent(folder, isDirectory: true))
        configure(&configuration)
        return try WebDAVFileSystem(configuration: configuration)
    }
}
