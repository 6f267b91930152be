public import FolderSync
import Foundation

/// Client listing on S3: its survey of the document is an ``S3VacuumOperation`` dry run (one recursive listing).
public final class S3ListOfDocumentRegisteredClientsOperation: ListOfDocumentRegisteredClientsOperation,
    @unchecked Sendable
{
    let s3: S3FileSystem

    /// The standard operation's configuration, with S3 steps.
    public init(s3: S3FileSystem, standard: ListOfDocumentRegisteredClientsOperation) {
        self.s3 = s3
        super.init(copying: standard)
    }

    public override func makeVacuumOperation() -> VacuumOperation {
        S3VacuumOperation(s3: s3, standard: super.makeVacuumOperation())
    }
}
