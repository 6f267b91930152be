import ArgumentParser
import FolderSync
import FolderSyncWebDAV
import Foundation

/// The options that say which shared folder and application a command works on.
///
/// Every command that opens the remote goes through ``open()``, so options that
/// change how it is opened (the WebDAV user and password) live here.
///
/// A password never comes from an argument (it would show in `ps`): it is read from `--password-file`,
/// else from `FOLDERSYNC_WEBDAV_PASSWORD`, else asked for on the terminal.
struct RemoteOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The shared folder: a directory path, a file:// URL, or an http:// or https:// WebDAV URL "
                               + "(credentials from FOLDERSYNC_WEBDAV_USER and FOLDERSYNC_WEBDAV_PASSWORD).",
                               valueName: "LOCATION"))
    var remote: String

    @Option(help: ArgumentHelp("The application identifier (default: the folder's only application).", valueName: "ID"))
    var app: String?

    @Option(help: ArgumentHelp("The WebDAV user (default: FOLDERSYNC_WEBDAV_USER).", valueName: "NAME"))
    var user: String?

    @Option(help: ArgumentHelp("A file whose first line is the WebDAV password (default: FOLDERSYNC_WEBDAV_PASSWORD, "
                               + "else a prompt on the terminal).", valueName: "PATH"))
    var passwordFile: String?

    /// The environment the remote is opened with: the process's, with the user and password settled.
    func credentialsEnvironment() throws -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        guard RemoteLocation.isWebDAV(remote) else { return environment }
        if let user { environment["FOLDERSYNC_WEBDAV_USER"] = user }
        if let passwordFile {
            guard let text = try? String(contentsOfFile: passwordFile, encoding: .utf8) else {
                throw ToolFailure("--password-file \(passwordFile): cannot be read")
            }
            environment["FOLDERSYNC_WEBDAV_PASSWORD"] = String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
        } else if environment["FOLDERSYNC_WEBDAV_PASSWORD"] == nil, let name = environment["FOLDERSYNC_WEBDAV_USER"],
                  Terminal.standardInputIsTerminal, let typed = Terminal.askPassword("Password for \(name): ") {
            environment["FOLDERSYNC_WEBDAV_PASSWORD"] = typed
        }
        return environment
    }

    /// The shared folder and application to work on.
    struct Opened {
        let fileSystem: any RemoteFileSystem
        let applicationIdentifier: String
    }

    func open() async throws -> Opened {
        let shown = RemoteLocation.redacted(remote)
        let fileSystem: any RemoteFileSystem
        do {
            fileSystem = try RemoteLocation.fileSystem(for: remote, environment: try credentialsEnvironment())
        } catch FolderSyncError.Code.remoteItemNotFound {
            throw ToolFailure("--remote \(shown): no such directory")
        } catch let error as FolderSyncError {
            throw ToolFailure("--remote \(shown): \(error.message)")
        }
        let applications = try await RemoteLayout.applicationIdentifiers(in: fileSystem)
        if let app {
            guard applications.contains(app) else {
                throw ToolFailure("--app \(app): no such application in \(shown)" + Self.listing(applications))
            }
            return Opened(fileSystem: fileSystem, applicationIdentifier: app)
        }
        switch applications.count {
        case 1: return Opened(fileSystem: fileSystem, applicationIdentifier: applications[0])
        case 0: throw ToolFailure("\(shown) holds no FolderSync application")
        default: throw ToolFailure("\(shown) holds several applications; choose one with --app" + Self.listing(applications))
        }
    }

    private static func listing(_ applications: [String]) -> String {
        applications.isEmpty ? "" : " (found: \(applications.joined(separator: ", ")))"
    }
}

/// `--json`: machine-readable output in the shapes README.md documents.
struct OutputOptions: ParsableArguments {
    @Flag(help: "Print JSON for machines instead of text for people.")
    var json = false
}
