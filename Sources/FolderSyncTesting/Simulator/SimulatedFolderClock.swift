public import FolderSync
public import Foundation

/// The shared folder's own clock in a simulation: every file written, uploaded or moved through it is dated by
/// the simulation's time (with no skew), as a real folder dates files by its own clock whatever the devices'
/// clocks say. Listings and stats show those dates; a file the wrapper never saw written (put back by a restore of
/// the folder) keeps the date its path was last written through it, or the simulation's start.
///
/// It also answers, independently of what vacuum computes, when the folder last saw a client write a file of a
/// document (``lastWrite(of:in:layout:)``): what the simulation's expiry check compares vacuum's decisions with.
///
/// `@unchecked Sendable` as its base class is (Swift asks a subclass to say so again): its own state is `let`s of
/// `Sendable` types, the dates in a `Locked`.
public final class SimulatedFolderClock: ForwardingFileSystem, @unchecked Sendable {
    private let now: @Sendable () -> Date
    private let start: Date
    private let dates = Locked<[RemotePath: Date]>([:])

    /// `base`, dating its files by `now` (the simulation's clock, unskewed).
    public init(_ base: any RemoteFileSystem, now: @escaping @Sendable () -> Date) {
        self.now = now
        start = now()
        super.init(base)
    }

    public override func write(_ data: Data, to path: RemotePath) async throws {
        try await super.write(data, to: path)
        dated(path)
    }

    public override func upload(fromLocalFile url: URL, to path: RemotePath) async throws {
        try await super.upload(fromLocalFile: url, to: path)
        dated(path)
    }

    public override func move(from source: RemotePath, to destination: RemotePath, replacing: Bool) async throws {
        try await super.move(from: source, to: destination, replacing: replacing)
        carryDates(from: source, to: destination)
    }

    public override func moveAside(_ source: RemotePath, to destination: RemotePath) async throws {
        try await super.moveAside(source, to: destination)
        carryDates(from: source, to: destination)
    }

    /// A rename keeps a file's date, as file systems and WebDAV servers do.
    private func carryDates(from source: RemotePath, to destination: RemotePath) {
        dates.withLock { dates in
            for (path, date) in dates where path.hasPrefix(source) {
                dates[path.components.dropFirst(source.components.count).reduce(destination) { $0.appending($1) }] =
                    date
            }
        }
    }

    public override func contentsOfDirectory(at path: RemotePath) async throws -> [RemoteItem] {
        try await super.contentsOfDirectory(at: path).map { redated($0, at: path.appending($0.name)) }
    }

    public override func item(at path: RemotePath) async throws -> RemoteItem? {
        try await super.item(at: path).map { redated($0, at: path) }
    }

    /// When the folder last saw `client` write a file of its own in `document` (its marker, a change set, its whole
    /// store), by the folder's clock; `nil` when it never did.
    public func lastWrite(of client: String, in document: String, layout: RemoteLayout) -> Date? {
        let own = [
            layout.recentSyncFile(document, client: client), layout.syncChangesDirectory(document, client: client),
            layout.wholeStoreDirectory(document, client: client),
        ]
        return dates.current.filter { path, _ in own.contains { path.hasPrefix($0) } }.values.max()
    }

    private func dated(_ path: RemotePath) {
        let date = now()
        dates.withLock { $0[path] = date }
    }

    private func redated(_ item: RemoteItem, at path: RemotePath) -> RemoteItem {
        guard item.kind == .file else { return item }
        var item = item
        item.modificationDate = dates.current[path] ?? start
        return item
    }
}
