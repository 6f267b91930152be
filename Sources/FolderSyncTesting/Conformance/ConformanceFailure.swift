/// One broken promise of a ``/FolderSync/RemoteFileSystem``, found by ``RemoteFileSystemConformance``.
public struct ConformanceFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The check that failed (one of ``RemoteFileSystemConformance/checkNames``).
    public let check: String
    /// What was expected and what happened.
    public let message: String

    /// Creates a failure of the check named `check`, explaining what went wrong in `message`.
    public init(check: String, message: String) {
        self.check = check
        self.message = message
    }

    public var description: String { "[\(check)] \(message)" }
}
