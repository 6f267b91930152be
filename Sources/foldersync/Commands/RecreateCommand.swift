import ArgumentParser
@_spi(Tooling) import FolderSync
import FolderSyncWebDAV
import Foundation

/// `foldersync recreate`: the operator's word that a shared folder really was emptied or replaced, which no device
/// takes by itself (a share that is not mounted looks just as empty).
struct RecreateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recreate",
        abstract: "Set an application up again in a shared folder that was emptied or replaced.",
        discussion: """
            For a folder that no longer holds the application (emptied, replaced by a new share, restored from a copy \
            older than the set-up, a WebDAV server started again on an empty volume): every device then says \
            remoteUnavailable, since a share that is not mounted looks the same, and never sets it up by itself. \
            This creates the application's folders and FormatVersion.plist, encrypted with the password \
            (--password-file, FOLDERSYNC_PASSWORD or the terminal) or clear, as chosen; no document and no client. Each \
            device then finds its document gone, stops on integrityKeyMismatch with a backup, and re-joins with its \
            data (the notes and todo examples: confirm-replaced or rejoin); the first to re-join creates the document. \
            A device that held the key of an encrypted application refuses a clear one. Never run it for a share that \
            is only not mounted. Refuses a folder that holds the application; on a terminal it asks first, otherwise \
            --yes is required.
            """)

    /// Whether the application is set up encrypted or clear: said explicitly, since devices that held an encrypted
    /// application's key refuse a clear folder.
    enum Encryption: String, EnumerableFlag {
        case encrypted, clear

        static func help(for value: Self) -> ArgumentHelp? {
            value == .encrypted ? "Encrypt it with the password." : "Do not encrypt it."
        }
    }

    @OptionGroup var remote: RemoteOptions
    @Flag var encryption: Encryption
    @Flag(help: "Do not ask for confirmation.") var yes = false

    func run() async throws {
        guard let application = remote.app else {
            throw ToolFailure("recreate: name the application with --app ID")
        }
        guard yes || Terminal.standardInputIsTerminal else {
            throw ToolFailure(
                "recreate: standard input is not a terminal, so it cannot ask; pass --yes to set up \(application) "
                    + "without confirmation")
        }
        let shown = RemoteLocation.redacted(remote.remote)
        let fileSystem: any RemoteFileSystem
        do {
            fileSystem = try RemoteLocation.fileSystem(
                for: remote.remote, environment: try remote.credentialsEnvironment())
        } catch let error as FolderSyncError {
            throw ToolFailure("--remote \(shown): \(error.message)")
        }
        let layout = try RemoteLayout(applicationIdentifier: application)
        let password = encryption == .encrypted ? try remote.encryptionPassword(for: application) : nil
        if !yes {
            let how = password == nil ? "clear" : "encrypted"
            let question = "Set up \(application) again, \(how), in \(shown)? Every device will re-join with its data."
            guard Terminal.confirm(question) else {
                throw ToolFailure("cancelled; nothing was written")
            }
        }
        let environment = RemoteOptions.Opened.environment
        let device = DeviceInfo(
            clientIdentifier: RemoteOptions.Opened.actorIdentifier, clientDescription: "foldersync recreate",
            userInfo: [:], registrationDate: environment.now())
        let options = ApplicationRegistrationOperation.Options(deviceInfo: device) { request in
            switch (request.reason, password) {
            case (_, nil): .noEncryption
            case (.wrongPassword, _): .cancel
            case (_, let password?): .password(password)
            }
        }
        let operation = ApplicationRegistrationOperation(
            context: ApplicationOperationContext(fileSystem: fileSystem, layout: layout, environment: environment),
            options: options)
        guard try await operation.createApplicationTree() else {
            throw ToolFailure("\(shown) holds \(application) already; nothing was written")
        }
        print(
            "Set up \(application) again in \(shown) (\(operation.isEncrypted ? "encrypted" : "clear")). "
                + "Each device now stops on integrityKeyMismatch and re-joins with its data.")
    }
}
