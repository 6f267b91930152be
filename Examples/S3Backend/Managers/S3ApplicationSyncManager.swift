public import FolderSync

/// An ``ApplicationSyncManager`` whose registration runs ``S3ApplicationRegistrationOperation``.
///
/// ```swift
/// let s3 = try S3FileSystem(configuration: S3Configuration(
///     endpoint: URL(string: "https://s3.eu-west-1.amazonaws.com")!, bucket: "my-app-sync", region: "eu-west-1",
///     credentials: S3Credentials.fromEnvironment()!, usesPathStyle: false))
/// let app = S3ApplicationSyncManager(s3: s3)
/// try await app.register(.init(applicationIdentifier: "com.example.notes", clientIdentifier: id, clientDescription: "laptop"))
/// let document = try await S3DocumentSyncManager(applicationSyncManager: app, registering: …, store: store)
/// ```
open class S3ApplicationSyncManager: ApplicationSyncManager, @unchecked Sendable {
    /// The bucket the S3 steps talk to.
    public let s3: S3FileSystem

    /// - Parameters: - remote: what the operations' standard steps use; `s3` unless a test wraps it (to count or
    ///   interrupt requests).
    public init(s3: S3FileSystem, remote: (any RemoteFileSystem)? = nil, environment: SyncEnvironment = .live) {
        self.s3 = s3
        super.init(remote: remote ?? s3, environment: environment)
    }

    open override func applicationRegistrationOperation(
        layout: RemoteLayout,
        options: ApplicationRegistrationOperation.Options
    ) -> ApplicationRegistrationOperation {
        S3ApplicationRegistrationOperation(
            s3: s3, standard: super.applicationRegistrationOperation(layout: layout, options: options))
    }
}
