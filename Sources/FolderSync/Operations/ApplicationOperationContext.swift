import Foundation

/// Everything an application-level operation receives from its manager, in one value: the remote, where the
/// application's tree is in it, and the clock, identifier source and logger.
///
/// The operations on a whole application (registration, the client and document listings, the removal of all
/// remote data) take one, and their settings in an `Options` value of their own when they have any. A backend
/// subclass is built from the standard operation (`init(copying:)`), so it receives this same context.
public struct ApplicationOperationContext: Sendable {
    /// The remote the operations work on: the backend, or the encrypting file system wrapped around it.
    public var fileSystem: any RemoteFileSystem
    /// Where the application's files are in the remote tree.
    public var layout: RemoteLayout
    /// The clock, identifier source and logger the operations use.
    public var environment: SyncEnvironment

    /// A context; see the properties for each argument.
    public init(fileSystem: any RemoteFileSystem, layout: RemoteLayout, environment: SyncEnvironment = .live) {
        self.fileSystem = fileSystem
        self.layout = layout
        self.environment = environment
    }
}

/// An operation on a whole application, set up by an ``ApplicationOperationContext``: what its steps read of the
/// context. The classes are `@unchecked Sendable` for the reason ``DocumentOperation`` gives.
public protocol ApplicationOperation: AnyObject {
    /// The remote, the application's layout, and the environment.
    var context: ApplicationOperationContext { get }
}

extension ApplicationOperation {
    /// Where the application's files are in the remote tree.
    public var layout: RemoteLayout { context.layout }
    /// The clock, identifier source and logger the operation uses.
    public var environment: SyncEnvironment { context.environment }
}
