public import Foundation
import Logging

/// Deletes a document from the remote for every client.
///
/// Writes `Information/DeletedDocuments/<document>.plist` **first**, then
/// moves `Documents/<document>/` into the application's removed area
/// (`<appID>/Removed/<day>/<removal>/Documents/<document>/`), where it stays
/// until a vacuum purges it after its grace period. A client that syncs afterwards finds its
/// integrity key gone and the marker there, and stops with
/// ``FolderSyncError/Code/documentDeleted`` keeping its local data; a client
/// that registers afterwards is asked whether to create the document anew.
/// Running it again after an interruption finishes the removal.
///
/// `@unchecked Sendable`: an `open` class cannot be checked `Sendable`; it holds only its context, a `let`.
open class DocumentDeletionOperation: DocumentOperation, @unchecked Sendable {
    /// The remote, the document, and who deletes it (``DocumentOperationContext/clientIdentifier``: a client
    /// identifier or an operator's name, written in the marker).
    public let context: DocumentOperationContext

    /// An operation ready to ``run()`` where `context` says.
    public init(context: DocumentOperationContext) {
        self.context = context
    }

    /// The operation `standard` is, for a backend subclass to run with its own steps: the same context.
    public init(copying standard: DocumentDeletionOperation) {
        context = standard.context
    }

    /// Runs the deletion.
    ///
    /// - Throws: ``FolderSyncError/Code/invalidIdentifier`` for an unsafe identifier,
    ///   ``FolderSyncError/Code/remoteItemNotFound`` when there is no such document.
    public func run() async throws {
        let document = try Identifier.validate(documentIdentifier, role: "document identifier")
        let markerExists = try await deletedDocumentMarkerExists()
        guard try await documentDirectoryExists() || markerExists else {
            throw FolderSyncError(
                .remoteItemNotFound, "there is no document \(document)",
                path: layout.documentDirectory(document).description)
        }
        if !markerExists {
            let marker = DeletedDocumentInfo(
                documentIdentifier: document, deletedByClient: clientIdentifier,
                deletionDate: environment.now().wholeSeconds)
            try await writeDeletedDocumentMarker(try PropertyListFile.encode(marker))
        }
        try await removeDocumentDirectory()
        environment.logger.info("Deleted document \(document)")
    }

    // MARK: Backend steps

    /// Whether `Documents/<document>/` exists.
    open func documentDirectoryExists() async throws -> Bool {
        try await fileSystem.exists(layout.documentDirectory(documentIdentifier))
    }

    /// Whether `Information/DeletedDocuments/<document>.plist` exists.
    open func deletedDocumentMarkerExists() async throws -> Bool {
        try await fileSystem.exists(layout.deletedDocumentFile(documentIdentifier))
    }

    /// Writes `Information/DeletedDocuments/<document>.plist`.
    open func writeDeletedDocumentMarker(_ data: Data) async throws {
        try await fileSystem.createDirectory(at: layout.deletedDocumentsDirectory)
        try await fileSystem.write(data, to: layout.deletedDocumentFile(documentIdentifier))
    }

    /// Moves `Documents/<document>/` with everything in it into the application's removed area.
    open func removeDocumentDirectory() async throws {
        let folder = layout.documentDirectory(documentIdentifier)
        guard try await fileSystem.exists(folder) else { return }
        try await RemovedArea(fileSystem: fileSystem, layout: layout).remove(
            folder, as: .documentDeletion, by: clientIdentifier,
            at: environment.now())
    }
}
