/// A remote that can tell when files change in a folder, so syncs start when other clients publish.
///
/// Backends without notifications are polled instead
/// (``DocumentSyncManager/startWatchingRemote(debounce:pollInterval:)``).
public protocol RemoteChangeNotifying: Sendable {
    /// Names of files created, replaced or renamed into `directory`, as they happen, until the stream is dropped.
    func changedNames(in directory: RemotePath) throws -> AsyncStream<String>
}
