import Foundation

/// Everything a vacuum or a client listing needs to know about one document's remote tree, read once.
///
/// Built from one listing of every folder of the document plus the small
/// plists (recent syncs, whole-store manifests); change-set contents are never read.
struct DocumentInventory: Sendable {
    struct ChangeSet: Sendable, Hashable {
        var client: String
        var sequence: Int64
        var path: RemotePath
        var byteCount: Int64
    }

    struct Temporary: Sendable, Hashable {
        var path: RemotePath
        var byteCount: Int64
        var modificationDate: Date?
    }

    /// Per client folder under `SyncChanges/`, its change sets sorted by sequence.
    var changeSets: [String: [ChangeSet]] = [:]
    /// Every validly named recent-sync marker, and its size.
    var recentSyncMarkers: [String: Int64] = [:]
    /// The recent syncs that could be read (not read for deleted clients).
    var recentSyncs: [String: RecentSync] = [:]
    /// Clients with a `DeletedClients/<client>.plist`.
    var deletedClients: Set<String> = []
    /// Per `WholeStore/<client>/` folder, the bytes under it.
    var wholeStoreFolders: [String: Int64] = [:]
    /// The whole-store manifests that could be read.
    var wholeStores: [String: WholeStoreManifest] = [:]
    /// Names carrying ``TemporaryName/prefix``, anywhere in the document.
    var temporaries: [Temporary] = []
    /// Per client, its own folders other than `SyncChanges/<client>/` (`SyncCommands/`, `TemporaryFiles/WholeStore/`).
    var clientFolders: [String: [RemotePath]] = [:]
    /// The listing of every folder of the document.
    var tree: [RemotePath: [RemoteItem]] = [:]
    /// Files left alone: unknown names, unreadable plists.
    var skipped: [VacuumReport.Skipped] = []
    /// What verifying the whole stores cost and found (a vacuum's inventory only).
    var wholeStoreCheck = VacuumReport.WholeStoreCheck()
    /// Uploaders whose whole store counts on an earlier run's verification alone, not read in this one.
    var wholeStoresVerifiedEarlier: Set<String> = []
    /// The verification cache's keys of the whole stores listed in this run.
    var wholeStoreKeys: Set<String> = []

    /// Per client, the newest modification date the folder records for a file of its own in the document (its
    /// marker, change sets, whole store, staged whole store): when the folder last saw it write, by the folder's clock.
    var lastWritten: [String: Date] = [:]
    /// The newest modification date the folder records for any file of the document: a lower bound of its time now.
    var newestWrite: Date?

    /// Registered clients: a change-set folder or a recent-sync marker (deleted ones included).
    var registeredClients: Set<String> { Set(changeSets.keys).union(recentSyncMarkers.keys) }

    /// Bytes of the files at or under `path`.
    func byteCount(at path: RemotePath, item: RemoteItem) -> Int64 {
        guard item.kind == .directory else { return item.size ?? 0 }
        return (tree[path] ?? []).reduce(0) { $0 + byteCount(at: path.appending($1.name), item: $1) }
    }

    static func isIdentifierName(_ name: String) -> Bool {
        !TemporaryName.isTemporary(name) && (try? Identifier.validate(name, role: "client")) != nil
    }

    /// Sorts the listing of a document into change sets, markers, whole stores and temporaries.
    static func classify(tree: [RemotePath: [RemoteItem]], layout: RemoteLayout, document: String) -> DocumentInventory
    {
        var inventory = DocumentInventory()
        inventory.tree = tree

        // The removed area holds what earlier removals moved there: none of it is live.
        let removed = layout.removedDirectory(document)
        for (folder, items) in tree where !folder.hasPrefix(removed) {
            for item in items where item.kind == .file {
                if let date = item.modificationDate { inventory.newestWrite = max(inventory.newestWrite ?? date, date) }
            }
            for item in items where TemporaryName.isTemporary(item.name) {
                let path = folder.appending(item.name)
                inventory.temporaries.append(
                    .init(
                        path: path, byteCount: inventory.byteCount(at: path, item: item),
                        modificationDate: item.modificationDate))
            }
        }
        inventory.temporaries.sort { $0.path < $1.path }

        func unknown(_ path: RemotePath) {
            inventory.skipped.append(.init(path: path, reason: "not a name the layout knows; left alone"))
        }

        let changesDirectory = layout.syncChangesDirectory(document)
        for item in tree[changesDirectory] ?? [] where !TemporaryName.isTemporary(item.name) {
            guard item.kind == .directory, isIdentifierName(item.name) else {
                unknown(changesDirectory.appending(item.name))
                continue
            }
            let folder = changesDirectory.appending(item.name)
            var sets: [ChangeSet] = []
            for entry in tree[folder] ?? [] where !TemporaryName.isTemporary(entry.name) {
                guard entry.kind == .file, let parsed = RemoteLayout.parseChangeSetFileName(entry.name) else {
                    unknown(folder.appending(entry.name))
                    continue
                }
                sets.append(
                    .init(
                        client: item.name, sequence: parsed.sequence, path: folder.appending(entry.name),
                        byteCount: entry.size ?? 0))
            }
            inventory.changeSets[item.name] = sets.sorted { ($0.sequence, $0.path) < ($1.sequence, $1.path) }
        }

        let recentDirectory = layout.recentSyncsDirectory(document)
        for item in tree[recentDirectory] ?? [] where !TemporaryName.isTemporary(item.name) {
            guard item.kind == .file, let client = RemoteLayout.parseRecentSyncFileName(item.name) else {
                unknown(recentDirectory.appending(item.name))
                continue
            }
            inventory.recentSyncMarkers[client] = item.size ?? 0
        }

        let deletedDirectory = layout.deletedClientsDirectory(document)
        for item in tree[deletedDirectory] ?? [] where !TemporaryName.isTemporary(item.name) {
            let client = String(item.name.dropLast(".plist".count))
            guard item.kind == .file, item.name.hasSuffix(".plist"), isIdentifierName(client) else {
                unknown(deletedDirectory.appending(item.name))
                continue
            }
            inventory.deletedClients.insert(client)
        }

        let wholeStoreDirectory = layout.wholeStoreDirectory(document)
        for item in tree[wholeStoreDirectory] ?? [] where !TemporaryName.isTemporary(item.name) {
            guard item.kind == .directory, isIdentifierName(item.name) else {
                unknown(wholeStoreDirectory.appending(item.name))
                continue
            }
            inventory.wholeStoreFolders[item.name] = inventory.byteCount(
                at: wholeStoreDirectory.appending(item.name), item: item)
        }

        for parent in [layout.syncCommandsDirectory(document), layout.temporaryWholeStoreDirectory(document)] {
            for item in tree[parent] ?? [] where item.kind == .directory && isIdentifierName(item.name) {
                inventory.clientFolders[item.name, default: []].append(parent.appending(item.name))
            }
        }
        inventory.dateClientWrites(layout: layout, document: document)
        return inventory
    }

    /// Fills ``lastWritten`` from the dates of each client's own files.
    private mutating func dateClientWrites(layout: RemoteLayout, document: String) {
        func note(_ client: String, _ item: RemoteItem) {
            guard item.kind == .file, let date = item.modificationDate else { return }
            lastWritten[client] = max(lastWritten[client] ?? date, date)
        }
        for item in tree[layout.recentSyncsDirectory(document)] ?? [] {
            if let client = RemoteLayout.parseRecentSyncFileName(item.name) { note(client, item) }
        }
        for parent in [
            layout.syncChangesDirectory(document), layout.wholeStoreDirectory(document),
            layout.temporaryWholeStoreDirectory(document),
        ] {
            for folder in tree[parent] ?? [] where folder.kind == .directory && Self.isIdentifierName(folder.name) {
                for item in tree[parent.appending(folder.name)] ?? [] { note(folder.name, item) }
            }
        }
    }
}
