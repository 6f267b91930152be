public import FolderSync
import Foundation

/// A ``DocumentSyncManager`` that runs the S3 operation subclasses when its application sync manager is an
/// ``S3ApplicationSyncManager`` and the application is not encrypted (and the standard operations otherwise).
///
/// Each factory builds the standard operation, then the S3 subclass with the same configuration and callbacks:
/// the pattern for any backend.
open class S3DocumentSyncManager: DocumentSyncManager, @unchecked Sendable {
    /// The bucket, unless the application is encrypted: its files are then sealed by the operations' file system,
    /// which the S3 steps would bypass, so the standard operations run.
    private var s3: S3FileSystem? {
        guard !(applicationSyncManager.remote is EncryptedFileSystem) else { return nil }
        return (applicationSyncManager as? S3ApplicationSyncManager)?.s3
    }

    open override func documentRegistrationOperation(options: DocumentRegistrationOperation.Options)
        -> DocumentRegistrationOperation
    {
        let standard = super.documentRegistrationOperation(options: options)
        return s3.map { S3DocumentRegistrationOperation(s3: $0, standard: standard) } ?? standard
    }

    open override func synchronizationOperation(
        store: any ModelAdapter,
        options: SynchronizationOperation.Options
    ) -> SynchronizationOperation {
        let standard = super.synchronizationOperation(store: store, options: options)
        return s3.map { S3SynchronizationOperation(s3: $0, standard: standard) } ?? standard
    }

    open override func wholeStoreUploadOperation(store: any SnapshottingModelAdapter) -> WholeStoreUploadOperation {
        let standard = super.wholeStoreUploadOperation(store: store)
        return s3.map { S3WholeStoreUploadOperation(s3: $0, standard: standard) } ?? standard
    }

    open override func wholeStoreDownloadOperation(
        store: any SnapshottingModelAdapter,
        options: WholeStoreDownloadOperation.Options
    ) -> WholeStoreDownloadOperation {
        let standard = super.wholeStoreDownloadOperation(store: store, options: options)
        return s3.map { S3WholeStoreDownloadOperation(s3: $0, standard: standard) } ?? standard
    }

    open override func documentMaintenance(options: DocumentMaintenance.Options) throws -> DocumentMaintenance {
        let standard = try super.documentMaintenance(options: options)
        return try s3.map { try S3DocumentMaintenance(s3: $0, standard: standard) } ?? standard
    }
}
