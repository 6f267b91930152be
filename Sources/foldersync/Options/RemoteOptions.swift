import ArgumentParser
@_spi(Tooling) import FolderSync
import FolderSyncWebDAV
import Foundation

/// The options that say which shared folder and application a command works on.
///
/// Every command that opens the remote goes through ``open()``, so options that
/// change how it is opened (the WebDAV user and password, the encryption password) live here.
///
/// A password never comes from an argument (it would show in `ps`): the encryption password is read from
/// `--password-file`, else from `FOLDERSYNC_PASSWORD`, else asked for on the terminal; the WebDAV password from
/// `--webdav-password-file`, else `FOLDERSYNC_WEBDAV_PASSWORD`, else the terminal.
struct RemoteOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The shared folder: a directory path, a file:// URL, or an http:// or https:// WebDAV URL "
                + "(credentials from FOLDERSYNC_WEBDAV_USER and FOLDERSYNC_WEBDAV_PASSWORD).",
            valueName: "LOCATION"))
    var remote: String

    @Option(help: ArgumentHelp("The application identifier (default: the folder's only application).", valueName: "ID"))
    var app: String?

    @Option(help: ArgumentHelp("The WebDAV user (default: FOLDERSYNC_WEBDAV_USER).", valueName: "NAME"))
    var user: String?

    @Option(
        help: ArgumentHelp(
            "A file whose first line is the encryption password of an encrypted application "
                + "(default: FOLDERSYNC_PASSWORD, else a prompt on the terminal).", valueName: "PATH"))
    var passwordFile: String?

    @Option(
        help: ArgumentHelp(
            "A file whose first line is the WebDAV password (default: FOLDERSYNC_WEBDAV_PASSWORD, "
                + "else a prompt on the terminal).", valueName: "PATH"))
    var webdavPasswordFile: String?

    /// The environment the remote is opened with: the process's, with the user and password settled.
    func credentialsEnvironment() throws -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        guard RemoteLocation.isWebDAV(remote) else { return environment }
        if let user { environment["FOLDERSYNC_WEBDAV_USER"] = user }
        if let webdavPasswordFile {
            environment["FOLDERSYNC_WEBDAV_PASSWORD"] = try Self.firstLine(
                of: webdavPasswordFile, option: "--webdav-password-file")
        } else if environment["FOLDERSYNC_WEBDAV_PASSWORD"] == nil, let name = environment["FOLDERSYNC_WEBDAV_USER"],
            Terminal.standardInputIsTerminal, let typed = Terminal.askPassword("Password for \(name): ")
        {
            environment["FOLDERSYNC_WEBDAV_PASSWORD"] = typed
        }
        return environment
    }

    private static func firstLine(of path: String, option: String) throws -> String {
        guard let line = PasswordFile.firstLine(of: path) else {
            throw ToolFailure("\(option) \(path): cannot be read")
        }
        return line
    }

    /// The encryption password: `--password-file`, else `FOLDERSYNC_PASSWORD`, else the terminal.
    func encryptionPassword(for application: String) throws -> String {
        if let passwordFile { return try Self.firstLine(of: passwordFile, option: "--password-file") }
        if let password = ProcessInfo.processInfo.environment["FOLDERSYNC_PASSWORD"] { return password }
        if Terminal.standardInputIsTerminal, let typed = Terminal.askPassword("Encryption password of \(application): ")
        {
            return typed
        }
        throw ToolFailure("\(application) is encrypted: give its password with --password-file or FOLDERSYNC_PASSWORD")
    }

    /// The application's files as the library reads them: through its encryption when it is encrypted.
    private func unlocked(_ fileSystem: any RemoteFileSystem, application: String) async throws -> any RemoteFileSystem
    {
        let layout = try RemoteLayout(applicationIdentifier: application)
        // A missing, damaged or newer format version is the command's to report (doctor does), not a reason to stop
        // here.
        guard
            let data = try await fileSystem.readIfPresent(
                layout.formatVersionFile, maximumSize: PropertyListFile.maximumByteCount),
            (try? FormatVersionInfo.decodeSupported(data, path: layout.formatVersionFile.description))?.encrypted
                == true
        else { return fileSystem }
        return try await EncryptedFileSystem.unlocking(
            fileSystem, layout: layout, password: try encryptionPassword(for: application))
    }

    /// The shared folder and application to work on.
    struct Opened {
        let fileSystem: any RemoteFileSystem
        let applicationIdentifier: String
        /// `--remote` as typed, credentials left out: names the folder's local cache.
        let location: String
    }

    func open() async throws -> Opened {
        let shown = RemoteLocation.redacted(remote)
        let fileSystem: any RemoteFileSystem
        do {
            fileSystem = try RemoteLocation.fileSystem(for: remote, environment: try credentialsEnvironment())
        } catch FolderSyncError.Code.remoteUnavailable {
            throw ToolFailure("--remote \(shown): no such directory")
        } catch let error as FolderSyncError {
            throw ToolFailure("--remote \(shown): \(error.message)")
        }
        let applications: [String]
        do {
            applications = try await RemoteLayout.applicationIdentifiers(in: fileSystem)
        } catch let error as FolderSyncError where error.path?.isEmpty ?? true || error.code == .remoteItemNotFound {
            // About the share itself (its root, the server): named by the URL typed, rather than by an empty path.
            let cause =
                error.code == .remoteItemNotFound ? "no such folder on the server" : "\(error.code): \(error.message)"
            throw ToolFailure("--remote \(shown): \(cause)")
        }
        if let app {
            guard applications.contains(app) else {
                throw ToolFailure(
                    "--app \(app): no such application in \(shown)" + Self.listing(applications)
                        + "; if that folder really was emptied or replaced (not just unmounted), "
                        + "'foldersync recreate --app \(app)' sets it up again for its devices to re-join")
            }
            return Opened(
                fileSystem: try await unlocked(fileSystem, application: app), applicationIdentifier: app,
                location: shown)
        }
        switch applications.count {
        case 1:
            return Opened(
                fileSystem: try await unlocked(fileSystem, application: applications[0]),
                applicationIdentifier: applications[0], location: shown)
        case 0:
            throw ToolFailure(
                "\(shown) holds no FolderSync application; if that folder really was emptied or replaced "
                    + "(not just unmounted), 'foldersync recreate --app ID' sets one up again for its devices to re-join"
            )
        default:
            throw ToolFailure("\(shown) holds several applications; choose one with --app" + Self.listing(applications))
        }
    }

    private static func listing(_ applications: [String]) -> String {
        applications.isEmpty ? "" : " (found: \(applications.joined(separator: ", ")))"
    }
}

/// `--json`: machine-readable output in the shapes the DocC article "The foldersync maintenance tool" documents.
struct OutputOptions: ParsableArguments {
    @Flag(help: "Print JSON for machines instead of text for people.")
    var json = false
}
