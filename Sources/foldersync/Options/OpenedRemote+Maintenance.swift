import FolderSync
import Foundation

/// The library's managers for the commands that list, delete and vacuum: the tool runs their operations, never its own.
extension RemoteOptions.Opened {
    /// The name written as `deletedBy` in the markers the tool writes (client deletion, expiry).
    static let actorIdentifier = "foldersync"

    /// Logging turned down: the tool reports through its own output.
    static var environment: SyncEnvironment {
        var environment = SyncEnvironment.live
        environment.logger.logLevel = .error
        return environment
    }

    /// Configured, never registered: listing writes nothing, and the operator never becomes
    /// a client whose missing syncs would hold vacuum back.
    func applicationManager() throws -> ApplicationSyncManager {
        let manager = ApplicationSyncManager(remote: fileSystem, environment: Self.environment)
        try manager.configure(.init(applicationIdentifier: applicationIdentifier, clientIdentifier: Self.actorIdentifier,
                                    clientDescription: "foldersync maintenance tool"))
        return manager
    }

    /// Vacuum, client listing and client deletion of one document, without registering.
    func maintenance(document: String) throws -> DocumentMaintenance {
        try DocumentMaintenance(remote: fileSystem, layout: try RemoteLayout(applicationIdentifier: applicationIdentifier),
                                documentIdentifier: document, actorIdentifier: Self.actorIdentifier, environment: Self.environment)
    }

    /// The application's documents (deleted ones left out), sorted by identifier.
    func documents() async throws -> [SynchronizedDocument] {
        try await applicationManager().previouslySynchronizedDocuments()
    }

    /// The documents a command works on: the one `--document` names, or every document.
    ///
    /// - Throws: a ``ToolFailure`` naming the document when it does not exist or was deleted.
    func documents(selecting identifier: String?) async throws -> [SynchronizedDocument] {
        let all = try await documents()
        guard let identifier else { return all }
        if let document = all.first(where: { $0.identifier == identifier }) { return [document] }
        _ = try maintenance(document: identifier) // refuses an unsafe identifier before it becomes a path
        let layout = try RemoteLayout(applicationIdentifier: applicationIdentifier)
        if try await fileSystem.exists(layout.deletedDocumentFile(identifier)) {
            throw ToolFailure("--document \(identifier): the document was deleted from \(applicationIdentifier)")
        }
        let found = all.isEmpty ? "" : " (found: \(all.map(\.identifier).joined(separator: ", ")))"
        throw ToolFailure("--document \(identifier): no such document in \(applicationIdentifier)" + found)
    }
}
