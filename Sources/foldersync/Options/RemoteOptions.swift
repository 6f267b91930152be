import ArgumentParser
import FolderSync
import FolderSyncWebDAV
import Foundation

/// The options that say which shared folder and application a command works on.
///
/// Every command that opens the remote goes through ``open()``, so options that
/// change how it is opened (`--password-file` once encryption exists) join here.
struct RemoteOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The shared folder: a directory path, a file:// URL, or an http:// or https:// WebDAV URL "
                               + "(credentials from FOLDERSYNC_WEBDAV_USER and FOLDERSYNC_WEBDAV_PASSWORD).",
                               valueName: "LOCATION"))
    var remote: String

    @Option(help: ArgumentHelp("The application identifier (default: the folder's only application).", valueName: "ID"))
    var app: String?

    /// The shared folder and application to work on.
    struct Opened {
        let fileSystem: any RemoteFileSystem
        let applicationIdentifier: String
    }

    func open() async throws -> Opened {
        let shown = RemoteLocation.redacted(remote)
        let fileSystem: any RemoteFileSystem
        do {
            fileSystem = try RemoteLocation.fileSystem(for: remote)
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
