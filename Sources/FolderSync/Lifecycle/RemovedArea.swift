import Foundation

/// A removed area: where vacuum, client deletion, document deletion and repair move what they remove, so that
/// nothing removed from a shared folder is gone at once (invariant 10), and a later vacuum purges it.
///
/// `Removed/<day>/<removal>/` holds one removal: its record (``RemovalRecord``), written first, and the files it
/// removed, each under its path relative to the area's base (the document's folder, or the application's), with
/// the same bytes: an encrypted file stays bound to where it was published (``RemoteLayout/publishedPath(of:)``), so
/// a file planted here is checked exactly as it would be in its normal place. A removal is purged once the folder's
/// own date of its record is older than the grace period by the folder's time now: nothing in the folder (a name, a
/// date a device wrote) can make it go sooner.
struct RemovedArea: Sendable {
    let fileSystem: any RemoteFileSystem
    let layout: RemoteLayout
    /// The area's folder: a document's `Removed/`, or the application's.
    let root: RemotePath
    /// The folder the removed files' paths are relative to: the document's, or the application's.
    let base: RemotePath

    /// The removed area of a document.
    init(fileSystem: any RemoteFileSystem, layout: RemoteLayout, document: String) {
        self.fileSystem = fileSystem
        self.layout = layout
        root = layout.removedDirectory(document)
        base = layout.documentDirectory(document)
    }

    /// The removed area of the application, for what lies outside any document.
    init(fileSystem: any RemoteFileSystem, layout: RemoteLayout) {
        self.fileSystem = fileSystem
        self.layout = layout
        root = layout.applicationRemovedDirectory
        base = layout.applicationDirectory
    }

    /// The shortest grace period: a day. A shorter one would purge what a device syncing daily still needs.
    static let minimumGracePeriod: TimeInterval = 86_400
    /// The default grace period: 14 days, as `git gc` keeps unreachable objects for two weeks.
    static let defaultGracePeriod: TimeInterval = 14 * 86_400

    /// Refuses a grace period shorter than ``minimumGracePeriod``.
    /// - Throws: ``FolderSyncError/Code/invalidConfiguration``.
    static func checkGracePeriod(_ period: TimeInterval) throws {
        guard period >= minimumGracePeriod else {
            throw FolderSyncError(
                .invalidConfiguration,
                "removed files are kept for one day at the least; "
                    + "\(Int(period)) seconds is too short")
        }
    }

    // MARK: Removing

    /// One removal being made: where its files go.
    struct Removal: Sendable {
        /// `Removed/<day>/<removal>/`.
        let folder: RemotePath
        /// The area's base, which the removed files' paths are relative to.
        let base: RemotePath

        /// Where `path` goes in this removal: under the removal's folder, at its path relative to the base.
        func destination(of path: RemotePath) -> RemotePath {
            path.components.dropFirst(base.components.count).reduce(folder) { $0.appending($1) }
        }
    }

    /// Starts a removal: creates its folder and writes its record, before anything is moved.
    func begin(_ operation: RemovalRecord.Operation, by actor: String, at date: Date) async throws -> Removal {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd"
        let day = formatter.string(from: date)
        formatter.dateFormat = "HHmmss"
        let name = formatter.string(from: date) + "-" + String(format: "%08x", UInt32.random(in: 0...UInt32.max))
        let folder = root.appending(day).appending(name)
        try await fileSystem.createDirectory(at: folder)
        let record = RemovalRecord(removedBy: actor, operation: operation, removalDate: date.wholeSeconds)
        try await fileSystem.write(
            try PropertyListFile.encode(record), to: folder.appending(RemoteLayout.removalRecordFileName))
        return Removal(folder: folder, base: base)
    }

    /// Creates the folders the files at `paths` go into in `removal`, each once.
    func makeFolders(for paths: [RemotePath], in removal: Removal) async throws {
        var made = Set<RemotePath>()
        for path in paths {
            let parent = removal.destination(of: path).parent
            if made.insert(parent).inserted { try await fileSystem.createDirectory(at: parent) }
        }
    }

    /// Moves `path` (a file, or a folder with everything in it) into the area, as a removal of its own.
    func remove(_ path: RemotePath, as operation: RemovalRecord.Operation, by actor: String, at date: Date) async throws
    {
        let removal = try await begin(operation, by: actor, at: date)
        try await makeFolders(for: [path], in: removal)
        try await fileSystem.moveAside(path, to: removal.destination(of: path))
    }

    // MARK: Reading

    /// A removal found in the area.
    struct StoredRemoval: Sendable, Hashable {
        /// `Removed/<day>/<removal>/`.
        var folder: RemotePath
        /// The date the folder records for its record (else for the removal's folder): when the removal began, by
        /// the folder's clock; `nil` when it records none.
        var date: Date?

        /// The day folder it is in.
        var day: RemotePath { folder.parent }
    }

    /// The removals of the area, from a listing of every folder of its tree down to the removals' own folders
    /// (`tree`, as ``RemoteFileSystem/listTree(at:descendingInto:)`` gives it), or listed here.
    func removals(in tree: [RemotePath: [RemoteItem]]? = nil) async throws -> [StoredRemoval] {
        func listing(_ path: RemotePath) async throws -> [RemoteItem] {
            if let tree { return tree[path] ?? [] }
            return try await fileSystem.contentsOfDirectoryIfPresent(at: path)
        }
        var removals: [StoredRemoval] = []
        for day in try await listing(root) where day.kind == .directory && Self.isAreaName(day.name) {
            for removal in try await listing(root.appending(day.name))
            where removal.kind == .directory && Self.isAreaName(removal.name) {
                let folder = root.appending(day.name).appending(removal.name)
                let record = try await listing(folder).first {
                    $0.name == RemoteLayout.removalRecordFileName && $0.kind == .file
                }
                removals.append(.init(folder: folder, date: record?.modificationDate ?? removal.modificationDate))
            }
        }
        return removals.sorted { $0.folder < $1.folder }
    }

    /// Whether a name in the area is one of its own (not a temporary, not hidden).
    static func isAreaName(_ name: String) -> Bool { !name.hasPrefix(".") }

    /// The record of a removal; `nil` when it is missing or unreadable.
    func record(of removal: StoredRemoval) async -> RemovalRecord? {
        let path = removal.folder.appending(RemoteLayout.removalRecordFileName)
        guard let data = try? await fileSystem.readIfPresent(path, maximumSize: PropertyListFile.maximumByteCount)
        else { return nil }
        return try? PropertyListFile.decode(RemovalRecord.self, from: data, path: path.description)
    }

    /// Every file a removal holds (its record left out), with the place each was removed from.
    func files(of removal: StoredRemoval) async throws -> [RemovedFile] {
        let tree = try await fileSystem.listTree(at: removal.folder)
        var files: [RemovedFile] = []
        for (folder, items) in tree {
            for item in items
            where item.kind == .file && !(folder == removal.folder && item.name == RemoteLayout.removalRecordFileName) {
                let path = folder.appending(item.name)
                let relative = path.components.dropFirst(removal.folder.components.count)
                files.append(
                    RemovedFile(
                        path: path, originalPath: relative.reduce(base) { $0.appending($1) }, byteCount: item.size ?? 0)
                )
            }
        }
        return files.sorted { $0.path < $1.path }
    }

    /// The change sets of `client` the area holds, by sequence (the newest removal's copy of a number first), each
    /// with the removal that holds it: what a reader that meets a gap applies. A repair's removals are left out: what a
    /// repair moves aside it found corrupt.
    func changeSets(of client: String, document: String) async throws -> [Int64: (
        path: RemotePath, removal: StoredRemoval
    )] {
        var found: [Int64: (path: RemotePath, removal: StoredRemoval)] = [:]
        for removal in try await removals().reversed() where await record(of: removal)?.operation != .repair {
            let folder = Removal(folder: removal.folder, base: base).destination(
                of: layout.syncChangesDirectory(document, client: client))
            for item in try await fileSystem.namesOfDirectoryIfPresent(at: folder) where item.kind == .file {
                guard let sequence = RemoteLayout.parseChangeSetFileName(item.name)?.sequence, found[sequence] == nil
                else { continue }
                found[sequence] = (folder.appending(item.name), removal)
            }
        }
        return found
    }

    /// What an operation is called in messages: "a vacuum", "a client deletion"…
    static func describe(_ operation: RemovalRecord.Operation) -> String {
        switch operation {
        case .vacuum: "a vacuum"
        case .clientDeletion: "a client deletion"
        case .documentDeletion: "a document deletion"
        case .repair: "a repair"
        }
    }

    // MARK: Purging

    /// The removals older than `gracePeriod` by the folder's time `now`: a removal without a date is never among them.
    static func expired(_ removals: [StoredRemoval], gracePeriod: TimeInterval, now: Date?) -> [StoredRemoval] {
        guard let now else { return [] }
        return removals.filter { removal in removal.date.map { now.timeIntervalSince($0) > gracePeriod } ?? false }
    }
}
