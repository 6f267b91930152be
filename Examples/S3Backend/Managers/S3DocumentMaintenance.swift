public import FolderSync
public import Foundation

/// ``DocumentMaintenance`` (vacuum, client listing, client deletion) with the S3 operation subclasses;
/// what ``S3DocumentSyncManager`` uses, and what an operator's tool would use on a bucket.
open class S3DocumentMaintenance: DocumentMaintenance, @unchecked Sendable {
    /// The bucket the S3 steps talk to.
    public let s3: S3FileSystem

    /// Maintenance of the document `context` names, with its S3 steps talking to `s3`. `context`'s file system is
    /// what the standard steps use: `s3`, unless a test wraps it.
    public init(s3: S3FileSystem, context: DocumentOperationContext, options: Options = Options()) throws {
        self.s3 = s3
        try super.init(context: context, options: options)
    }

    /// The maintenance `standard` does (same context and options), with S3 steps.
    public convenience init(s3: S3FileSystem, standard: DocumentMaintenance) throws {
        try self.init(s3: s3, context: standard.context, options: standard.options)
    }

    open override func vacuumOperation(options: VacuumOperation.Options) -> VacuumOperation {
        S3VacuumOperation(s3: s3, standard: super.vacuumOperation(options: options))
    }

    open override func listOfDocumentRegisteredClientsOperation() -> ListOfDocumentRegisteredClientsOperation {
        S3ListOfDocumentRegisteredClientsOperation(s3: s3, standard: super.listOfDocumentRegisteredClientsOperation())
    }

    open override func documentClientDeletionOperation(options: DocumentClientDeletionOperation.Options)
        -> DocumentClientDeletionOperation
    {
        S3DocumentClientDeletionOperation(s3: s3, standard: super.documentClientDeletionOperation(options: options))
    }
}
