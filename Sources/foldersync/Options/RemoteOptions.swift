import ArgumentParser
import FolderSync
import Foundation

/// The options that say which shared folder and application a command works on.
///
/// Every command that opens the remote goes through ``open()``, so options that
/// change how it is opened (`--password-file` once encryption exists) join here.
struct RemoteOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The shared folder: a directory path (http:// and https:// URLs are not supported yet).",
                               valueName: "LOCATION"))
    var remote: String

    @Option(help: ArgumentHelp("The application identifier (default: the folder's only application).", valueName: "ID"))
    var app: String?

    /// The shared folder and application to work on.
    struct Opened {
        let fileSystem: FileManagerFileSystem
        let applicationIdentifier: String
    }

    func open() async throws -> Opened {
        let lowered = remote.lowercased()
        if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") {
            throw ToolFailure("--remote \(remote): WebDAV URLs are not supported yet; mount the share and pass its path")
        }
        let path = lowered.hasPrefix("file://") ? (URL(string: remote)?.path ?? remote) : remote
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ToolFailure("--remote \(remote): no such directory")
        }
        let fileSystem = FileManagerFileSystem(rootURL: URL(fileURLWithPath: path, isDirectory: true))
        let applications = try await RemoteLayout.applicationIdentifiers(in: fileSystem)
        if let app {
            guard applications.contains(app) else {
                throw ToolFailure("--app \(app): no such application in \(remote)" + Self.listing(applications))
            }
            return Opened(fileSystem: fileSystem, applicationIdentifier: app)
        }
        switch applications.count {
        case 1: return Opened(fileSystem: fileSystem, applicationIdentifier: applications[0])
        case 0: throw ToolFailure("\(remote) holds no FolderSync application")
        default: throw ToolFailure("\(remote) holds several applications; choose one with --app" + Self.listing(applications))
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
