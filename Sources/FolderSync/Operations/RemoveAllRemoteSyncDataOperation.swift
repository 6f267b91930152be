import Logging

/// Removes the application's whole folder from the remote: every document, client and marker.
///
/// Other clients then find their documents gone (an integrity-key mismatch
/// at their next sync, keeping their local data) and recreate the tree when
/// they register again. Nothing else on the remote is touched.
///
/// `@unchecked Sendable`: an `open` class cannot be checked `Sendable`; it holds only its context, a `let`.
open class RemoveAllRemoteSyncDataOperation: ApplicationOperation, @unchecked Sendable {
    /// The remote, the application's layout, and the environment.
    public let context: ApplicationOperationContext
    /// The remote the operation works on; the default backend steps call it.
    public var fileSystem: any RemoteFileSystem { context.fileSystem }

    /// An operation ready to ``run()`` where `context` says.
    public init(context: ApplicationOperationContext) {
        self.context = context
    }

    /// The operation `standard` is, for a backend subclass to run with its own steps: the same context.
    public init(copying standard: RemoveAllRemoteSyncDataOperation) {
        context = standard.context
    }

    /// Runs the removal.
    public func run() async throws {
        try await removeApplicationDirectory()
        environment.logger.info("Removed all remote sync data of \(layout.applicationIdentifier)")
    }

    // MARK: Backend steps

    /// Removes `<appID>/` with everything in it.
    open func removeApplicationDirectory() async throws {
        try await fileSystem.remove(layout.applicationDirectory)
    }
}
