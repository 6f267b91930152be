import Foundation

extension DocumentSyncManager {
    /// Starts syncing automatically when other clients publish.
    ///
    /// Watches `RecentSyncs/` (every client rewrites its marker after publishing): with notifications where the
    /// backend offers them (inotify for the file-manager backend), and by listing it every `pollInterval`
    /// everywhere, since notifications miss writes made on other machines of a network file system. Bursts of
    /// changes within `debounce` become one sync; this client's own marker never triggers one. Sync failures are
    /// reported to the delegate; watching goes on.
    public func startWatchingRemote(debounce: Duration = .milliseconds(300), pollInterval: Duration = .seconds(30)) {
        stopWatchingRemote()
        let directory = layout.recentSyncsDirectory(documentIdentifier)
        let ownMarker = clientIdentifier + ".recentsync"
        let remote = applicationSyncManager.remote
        let (triggers, trigger) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        var tasks: [Task<Void, Never>] = []
        if let notifying = remote as? any RemoteChangeNotifying, let names = try? notifying.changedNames(in: directory) {
            tasks.append(Task {
                for await name in names where name != ownMarker && name.hasSuffix(".recentsync") { trigger.yield() }
            })
        }
        tasks.append(Task {
            var seen: [String: String?] = [:]
            while !Task.isCancelled {
                if let items = try? await remote.contentsOfDirectoryIfPresent(at: directory) {
                    let tags = Dictionary(items.filter { $0.name != ownMarker }.map { ($0.name, $0.etag ?? "\($0.modificationDate ?? .distantPast)") },
                                          uniquingKeysWith: { first, _ in first })
                    if !seen.isEmpty && tags != seen { trigger.yield() }
                    seen = tags
                }
                try? await Task.sleep(for: pollInterval)
            }
        })
        tasks.append(Task { [weak self] in
            for await _ in triggers {
                try? await Task.sleep(for: debounce)
                guard let self, !Task.isCancelled else { return }
                _ = try? await self.synchronize()
            }
        })
        watchers.withLock { $0 = tasks }
    }

    /// Stops the watching started by ``startWatchingRemote(debounce:pollInterval:)``.
    public func stopWatchingRemote() {
        for task in watchers.withLock({ tasks in defer { tasks = [] }; return tasks }) { task.cancel() }
    }
}
