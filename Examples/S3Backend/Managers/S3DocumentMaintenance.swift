public import FolderSync
public import Foundation

/// ``DocumentMaintenance`` (vacuum, client listing, client deletion) with the S3 operation subclasses;
/// what ``S3DocumentSyncManager`` uses, and what an operator's tool would use on a bucket.
open class S3DocumentMaintenance: DocumentMaintenance, @unchecked Sendable {
    /// The bucket the S3 steps talk to.
    public let s3: S3FileSystem

    /// - Parameter remote: what the standard steps use; `s3` unless a test wraps it.
    public init(s3: S3FileSystem, remote: (any RemoteFileSystem)? = nil, layout: RemoteLayout, documentIdentifier: String,
                actorIdentifier: String = "foldersync", environment: SyncEnvironment = .live) throws {
        self.s3 = s3
        try super.init(remote: remote ?? s3, layout: layout, documentIdentifier: documentIdentifier,
                       actorIdentifier: actorIdentifier, environment: environment)
    }

    open override func vacuumOperation(dryRun: Bool, expireClientsAfter: TimeInterval?, temporaryFileAge: TimeInterval) -> VacuumOperation {
        S3VacuumOperation(s3: s3, standard: super.vacuumOperation(dryRun: dryRun, expireClientsAfter: expireClientsAfter,
                                                                  temporaryFileAge: temporaryFileAge))
    }

    open override func listOfDocumentRegisteredClientsOperation() -> ListOfDocumentRegisteredClientsOperation {
        S3ListOfDocumentRegisteredClientsOperation(s3: s3, standard: super.listOfDocumentRegisteredClientsOperation())
    }

    open override func documentClientDeletionOperation(clientIdentifier: String) -> DocumentClientDeletionOperation {
        S3DocumentClientDeletionOperation(s3: s3, standard: super.documentClientDeletionOperation(clientIdentifier: clientIdentifier))
    }
}
