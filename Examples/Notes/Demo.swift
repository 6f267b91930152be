import ArgumentParser
import FolderSync
import Foundation

/// `notes demo`: two devices sharing one folder, narrated step by step.
struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Two devices register one notes document through a temporary folder, narrated.")

    @Option(help: "The shared folder to use (default: a new temporary folder).")
    var folder: String?

    func run() async throws {
        let shared = folder.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("notes-demo-\(UUID().uuidString.prefix(8))")
        let remoteRoot = shared.appendingPathComponent("remote")
        try FileManager.default.createDirectory(at: remoteRoot, withIntermediateDirectories: true)
        let remote = FileManagerFileSystem(rootURL: remoteRoot)
        let documentID = UUID().uuidString
        say("The shared folder is \(remoteRoot.path). Nobody runs a server for it.")

        var devices: [DocumentSyncManager] = []
        for name in ["laptop", "phone"] {
            say("\n\(name): registers with application com.example.notes as a new client.")
            var environment = SyncEnvironment.live
            environment.logger.logLevel = .warning
            let app = ApplicationSyncManager(remote: remote, environment: environment)
            try await app.register(.init(applicationIdentifier: "com.example.notes", clientIdentifier: UUID().uuidString,
                                         clientDescription: "Demo \(name)"))
            say("\(name): registers document \(documentID).")
            let document = try await DocumentSyncManager(
                applicationSyncManager: app,
                registering: .init(documentIdentifier: documentID, documentDescription: "Demo notes",
                                   helperDirectory: shared.appendingPathComponent("\(name)-helper")),
                remoteDocumentCreationHandler: { request in
                    say("\(name): the remote document does not exist yet; the app answers: create it.")
                    return true
                })
            say("\(name): registered, integrity key \(document.integrityKey ?? "?").")
            devices.append(document)
        }
        let same = devices[0].integrityKey == devices[1].integrityKey
        say("\nBoth devices share one integrity key: \(same ? "yes" : "NO")")
        say("\nThe shared folder now holds:")
        print(TreePrinter.render(root: remoteRoot), terminator: "")
        if !same { throw ExitCode.failure }
    }
}

func say(_ line: String) { print(line) }
