import Logging

/// Removes the application's whole folder from the remote: every document, client and marker.
///
/// Other clients then find their documents gone (an integrity-key mismatch
/// at their next sync, keeping their local data) and recreate the tree when
/// they register again. Nothing else on the remote is touched.
open class RemoveAllRemoteSyncDataOperation: @unchecked Sendable {
    /// The remote the operation works on; the default backend steps call it.
    public let fileSystem: any RemoteFileSystem
    /// Where the application's files are in the remote tree.
    public let layout: RemoteLayout
    /// The clock, identifier source and logger the operation uses.
    public let environment: SyncEnvironment

    /// An operation ready to ``run()``; see the properties for each argument.
    public init(fileSystem: any RemoteFileSystem, layout: RemoteLayout, environment: SyncEnvironment) {
        self.fileSystem = fileSystem
        self.layout = layout
        self.environment = environment
    }

    /// The operation `standard` is, for a backend subclass to run with its own steps: the same configuration.
    public init(copying standard: RemoveAllRemoteSyncDataOperation) {
        fileSystem = standard.fileSystem
        layout = standard.layout
        environment = standard.environment
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
