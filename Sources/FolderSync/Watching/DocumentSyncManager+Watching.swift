import Foundation

extension DocumentSyncManager {
    /// Starts syncing automatically when other clients publish, and when the shared folder comes back after an outage.
    ///
    /// Watches `RecentSyncs/` (every client rewrites its marker after publishing): with notifications where the
    /// backend offers them (inotify for the file-manager backend), and by listing it every `pollInterval`
    /// everywhere, since notifications miss writes made on other machines of a network file system. Bursts of
    /// changes within `debounce` become one sync; this client's own marker never triggers one. Sync failures are
    /// reported to the delegate and the event streams; watching goes on.
    ///
    /// While the folder is away (a share unmounted, a server down), the listing is tried again after waits that
    /// double from `pollInterval` up to ``maximumWatchBackoff``, costing no CPU in between; when it answers again,
    /// a sync runs at once, so that what was written meanwhile is published and what others published is applied.
    /// So does a listing that answers after the last sync found the folder away (the app's own sync, made while the
    /// watcher's looks happened to find it there).
    public func startWatchingRemote(debounce: Duration = .milliseconds(300), pollInterval: Duration = .seconds(30)) {
        stopWatchingRemote()
        let directory = layout.recentSyncsDirectory(documentIdentifier)
        let ownMarker = RemoteLayout.recentSyncFileName(client: clientIdentifier)
        let remote = applicationSyncManager.remote
        let (triggers, trigger) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        var tasks: [Task<Void, Never>] = []
        if let notifying = remote as? any RemoteChangeNotifying, let names = try? notifying.changedNames(in: directory)
        {
            tasks.append(
                Task {
                    for await name in names where name != ownMarker && RemoteLayout.parseRecentSyncFileName(name) != nil
                    { trigger.yield() }
                })
        }
        // The last sync (any: the app's or the watcher's) failed because the folder was away, and none succeeded since.
        let lastSyncMissedFolder = { [weak self] () -> Bool in
            guard let status = self?.lastSynchronization, let failure = status.lastFailure,
                status.lastError?.code == .remoteUnavailable
            else { return false }
            return failure > status.lastSuccess ?? .distantPast
        }
        tasks.append(
            Task {
                var seen: [String: String]?
                var outages = 0
                while !Task.isCancelled {
                    let wait: Duration
                    do {
                        // A folder that is not there is an outage, not an empty folder: listed strictly.
                        let items = try await remote.contentsOfDirectory(at: directory)
                        let tags = Dictionary(
                            items.filter { $0.name != ownMarker }
                                .map { ($0.name, $0.etag ?? "\($0.modificationDate ?? .distantPast)\($0.size ?? -1)") },
                            uniquingKeysWith: { first, _ in first })
                        if outages > 0 || (seen != nil && tags != seen) || lastSyncMissedFolder() { trigger.yield() }
                        seen = tags
                        outages = 0
                        wait = pollInterval
                    } catch {
                        outages += 1
                        wait = min(pollInterval * (1 << min(outages, 16)), Self.maximumWatchBackoff)
                    }
                    try? await Task.sleep(for: wait)
                }
            })
        tasks.append(
            Task { [weak self] in
                for await _ in triggers {
                    try? await Task.sleep(for: debounce)
                    guard let self, !Task.isCancelled else { return }
                    _ = try? await self.synchronize()
                }
            })
        mutable.withLock { $0.watchers = tasks }
    }

    /// The longest wait between two looks at a shared folder that is away (watching,
    /// ``startWatchingRemote(debounce:pollInterval:)``).
    public static let maximumWatchBackoff: Duration = .seconds(300)

    /// Stops the watching started by ``startWatchingRemote(debounce:pollInterval:)``.
    public func stopWatchingRemote() {
        for task in mutable.withLock({ state in
            defer { state.watchers = [] }
            return state.watchers
        }) { task.cancel() }
    }
}
