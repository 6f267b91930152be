@_spi(Tooling) import FolderSync
import Foundation
import S3Backend

/// The moto servers `scripts/test` starts on 127.0.0.1 (scripts/s3-server), read from `FOLDERSYNC_S3_TEST_SERVER`
/// (signatures not checked) and `FOLDERSYNC_S3_SIGNED_TEST_SERVER` (every request authenticated).
///
/// When a variable is missing the S3 tests fail, never skip: a green run must mean the backend was tested.
enum S3TestServers {
    static let open = "FOLDERSYNC_S3_TEST_SERVER"
    static let signed = "FOLDERSYNC_S3_SIGNED_TEST_SERVER"

    /// The configuration of server `variable`, rooted under a fresh key prefix of its own so parallel tests never meet.
    static func configuration(_ variable: String = open, test: String = #function) throws -> S3Configuration {
        guard let value = ProcessInfo.processInfo.environment[variable], !value.isEmpty, let url = URL(string: value)
        else {
            throw WebDAVTestServers.Missing(
                description: "\(variable) is not set: run the tests with scripts/test, which starts moto "
                    + "(or `eval \"$(scripts/s3-server start DIR)\"` before swift test)")
        }
        var configuration = try S3Configuration(url: url)
        configuration.prefix =
            "t-" + test.filter { $0.isLetter || $0.isNumber }.prefix(24) + "-" + UUID().uuidString.prefix(8)
        return configuration
    }

    static func fileSystem(_ variable: String = open, test: String = #function) throws -> S3FileSystem {
        try S3FileSystem(configuration: configuration(variable, test: test))
    }
}
