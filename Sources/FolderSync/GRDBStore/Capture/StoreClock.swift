import Foundation
import GRDB
import GRDBSQLite

/// The store's hybrid logical clock, which must run ahead of every register the document holds, so that a
/// local write is always newer than what it overwrites.
///
/// Finding the newest register reads every clock row: about a second for 5,000,000 rows. Opening a store
/// therefore starts that read on a thread and connection of its own, and the clock's first use waits for it:
/// the app can read its document at once, and a big store's first write waits at most for the rest of the read.
///
/// The read gives way to the store's syncs: an app that syncs at launch runs its first sync beside it, and on a 2-core
/// machine the two would share the cores and the disk, which slows the sync. While a sync of the store runs
/// (``syncBegan()``), the read pauses between steps, until a moment after the sync ends, a write needs the clock
/// (``tick(now:)``: it never waits for a sync), or it has paused ``maximumPause`` (half a second) in all (its read
/// transaction keeps the log from being checkpointed past it, so a long sync does not hold it back for long).
final class StoreClock: Sendable {
    private let clock = Locked(HybridLogicalClock())

    /// Where the clock learns the document's newest stamp before its next use.
    private enum Seed {
        /// Nowhere: the clock observed it, or the document has none.
        case none
        /// A read on a thread of its own (giving way to the store's syncs), with where it leaves its result.
        case reading(HandoffThread, Locked<Result<UInt64, any Error>>, SeedRead)
        /// A read through the store's own connection, made at the clock's first use: while the store opens, before
        /// the read on a thread can start (the app's migration may write synced rows).
        case onFirstUse(() throws -> UInt64)
    }

    private let seed = Locked(Seed.none)
    /// How many syncs of the store run now, which the read gives way to.
    private let syncs = Locked(SeedRead.Syncs())

    /// How long the first read pauses for syncs at most, in all (tests change it before a sync begins).
    var maximumPause: TimeInterval {
        get { syncs.current.maximumPause }
        set { syncs.withLock { $0.maximumPause = newValue } }
    }

    /// Starts reading the newest register of the document at `path` (committed, its bookkeeping tables created),
    /// which the clock observes before its next use.
    func startSeeding(fromDocumentAt path: String) {
        let newest = Locked<Result<UInt64, any Error>>(.success(0))
        let read = SeedRead(path: path, syncs: syncs)
        let thread = HandoffThread {
            newest.withLock { $0 = Result { try Self.newestStamp(inDocumentAt: path, seed: read) } }
        }
        seed.withLock { $0 = .reading(thread, newest, read) }
    }

    /// Runs `body` (the app's migration, while the store opens) with the clock reading the newest stamp through
    /// `read` at its first use, if `body` uses it: writes made then are newer than everything the store holds, as
    /// every local write must be, and a store opened without them costs no read.
    func seedingOnFirstUse<T>(_ read: @escaping () throws -> UInt64, during body: () throws -> T) throws -> T {
        seed.withLock { $0 = .onFirstUse(read) }
        defer {
            // `read` may use a connection only `body` may use.
            seed.withLock { if case .onFirstUse = $0 { $0 = .none } }
        }
        return try body()
    }

    /// A sync of the store starts: the first read of the registers, if it still runs, pauses until ``syncEnded()``.
    func syncBegan() { changeSyncs(by: 1) }

    /// The sync ``syncBegan()`` announced ended.
    func syncEnded() { changeSyncs(by: -1) }

    private func changeSyncs(by delta: Int) {
        syncs.withLock { syncs in
            syncs.running += delta
            if syncs.running == 0 { syncs.quietUntil = Date().addingTimeInterval(SeedRead.quietAfterSync) }
        }
        syncs.wakeAll()
    }

    /// The next timestamp, once the clock observed the document's newest register.
    /// - Throws: ``FolderSyncError/Code/localStoreFailed`` when that register could not be read.
    func tick(now: Date) throws -> HybridTimestamp {
        try waitUntilSeeded()
        return clock.withLock { $0.tick(now: now) }
    }

    /// `count` timestamps in turn, each as ``tick(now:)`` gives it, handed to `body`: one check of the seed, one
    /// lock and one reading of the wall clock for all of a row's columns (the clock's counter orders them; a reading
    /// per column was a tenth of a captured write's own work).
    func ticks(_ count: Int, now: () -> Date, _ body: (HybridTimestamp) throws -> Void) throws {
        try waitUntilSeeded()
        let wall = now()
        try clock.withLock { clock in
            for _ in 0..<count { try body(clock.tick(now: wall)) }
        }
    }

    /// Moves the clock past `stamp` (a remote change's); needs no seed, since it only ever moves the clock forward.
    func observe(_ stamp: HybridTimestamp) {
        clock.withLock { $0.observe(stamp) }
    }

    /// Waits for the read of the newest register (at once when it finished) and observes it; its connection
    /// is closed when this returns, so the store's own connection may change its journal mode.
    func waitUntilSeeded() throws {
        try seed.withLock { pending in
            switch pending {
            case .none:
                return
            case .reading(let thread, let newest, let read):
                read.isWanted()
                thread.join()
                pending = .none
                switch newest.current {
                case .success(let stamp): observe(HybridTimestamp(rawValue: stamp))
                case .failure(let error):
                    throw FolderSyncError(
                        .localStoreFailed, "cannot read the document's newest change stamp", underlying: error)
                }
            case .onFirstUse(let read):
                observe(HybridTimestamp(rawValue: try read()))
                pending = .none
            }
        }
    }

    /// The newest timestamp of the registers and deletions of the document at `path`, read through a connection
    /// of its own.
    /// `seed`: the clock's first read, which gives way to the store's syncs.
    static func newestStamp(inDocumentAt path: String, seed: SeedRead? = nil) throws -> UInt64 {
        // Also run on a downloaded snapshot before it is installed: hardened like every such connection.
        var configuration = SQLiteHardening.configuration(readonly: true)
        configuration.busyMode = .timeout(30)  // as the store's own connection: a checkpoint may hold the file briefly
        let document = try DatabaseQueue(path: path, configuration: configuration)
        defer { try? document.close() }
        return try document.read { db in
            guard let seed else { return try newestStamp(db) }
            return try seed.givingWay(db) { try newestStamp(db) }
        }
    }

    /// The newest timestamp of the registers and deletions in `db`, settled or not; registers are read from the head
    /// of each `stamps` value (no register decoded).
    static func newestStamp(_ db: Database) throws -> UInt64 {
        let register = RowRegisters.newestTimestamp(
            ofHead: try Data.fetchOne(db, sql: "SELECT max(substr(stamps, 2, 8)) FROM \(StoreSchema.clocksTable)"))
        let deleted = UInt64(
            bitPattern: try Int64.fetchOne(db, sql: "SELECT max(hlc) FROM \(StoreSchema.tombstonesTable)") ?? 0)
        // A whole store keeps no pending table.
        let unsettled =
            try db.tableExists(StoreSchema.pendingChangesTable)
            ? try StoreSchema.unsettledDeletions(db).map(\.timestamp).max() ?? 0 : 0
        return max(register, deleted, unsettled)
    }
}

/// The clock's first read of a document's registers, on a connection of its own, pausing for the store's syncs
/// (``StoreClock``): SQLite calls back every few thousand steps of the query, and the callback waits while a sync
/// runs and nobody waits for the read. SQLite's progress callback reaches it through an unmanaged pointer.
final class SeedRead: Sendable {
    /// The syncs of one store that run now, and what its first read asked of them; the read waits on it.
    struct Syncs {
        var running = 0
        var maximumPause: TimeInterval = 0.5
        /// Until when the read keeps still after the last sync ended: the sync's caller takes its result first.
        var quietUntil = Date.distantPast
        /// A write (or a close) waits for the read: it no longer pauses.
        var readWanted = false
        /// How long the read paused so far.
        var readPaused: TimeInterval = 0

        /// Whether a sync runs, or ended a moment ago.
        var areBusy: Bool { running > 0 || Date() < quietUntil }
    }

    /// What a paused read does, for tests (`StoreClock` of the document at a path): each step, each pause and how
    /// it ended. Called on the read's thread; a step may block it.
    enum Event: Sendable, Equatable {
        case step
        case paused
        case resumed(Resumption)
    }

    /// Why a paused read went on.
    enum Resumption: Sendable, Equatable {
        case syncsEnded, wanted, pausedLongEnough
    }

    /// Test seam: per document path, called with each ``Event`` of its read.
    static let observers = Locked<[String: @Sendable (Event) -> Void]>([:])

    private let syncs: Locked<Syncs>
    /// The test seam's observer of this read, taken when it is made.
    private let observer: (@Sendable (Event) -> Void)?

    init(path: String, syncs: Locked<Syncs>) {
        self.syncs = syncs
        observer = Self.observers.current[path]
    }

    /// Runs `body`, a query on `db`, looking at the syncs every ``stepsBetweenChecks`` steps of it.
    func givingWay<T>(_ db: Database, _ body: () throws -> T) rethrows -> T {
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_progress_handler(
            db.sqliteConnection, Self.stepsBetweenChecks,
            { context in
                Unmanaged<SeedRead>.fromOpaque(context!).takeUnretainedValue().giveWay()
                return 0
            }, context)
        defer { sqlite3_progress_handler(db.sqliteConnection, 0, nil, nil) }
        return try withExtendedLifetime(self) { try body() }
    }

    /// How long the read keeps still after a sync ended: the sync's caller takes its result and goes on first (a
    /// read that resumed at once would take the core the caller waits for on a loaded machine).
    static let quietAfterSync: TimeInterval = 0.1

    /// SQLite virtual-machine steps between two looks at the syncs (a few hundred clock rows).
    static let stepsBetweenChecks: Int32 = 4096

    /// Someone waits for the read: it no longer pauses.
    func isWanted() {
        syncs.withLock { $0.readWanted = true }
        syncs.wakeAll()
    }

    /// Waits while a sync of the store runs, unless the read is wanted or paused long enough.
    private func giveWay() {
        observer?(.step)
        let (limit, pausedBefore, pauses) = syncs.withLock { syncs in
            (
                syncs.maximumPause, syncs.readPaused,
                syncs.areBusy && !syncs.readWanted && syncs.readPaused < syncs.maximumPause
            )
        }
        guard pauses else { return }
        observer?(.paused)
        let started = Date()
        let deadline = started.addingTimeInterval(limit - pausedBefore)
        let resumption = pause(until: deadline)
        syncs.withLock { syncs in
            syncs.readPaused =
                resumption == .pausedLongEnough ? limit : pausedBefore + Date().timeIntervalSince(started)
        }
        observer?(.resumed(resumption))
    }

    /// Waits until the syncs are over, the read is wanted or `deadline` passes.
    private func pause(until deadline: Date) -> Resumption {
        while true {
            // Nobody says when the quiet after a sync ends: the wait ends then, or when the syncs change.
            let (wakeUp, running) = syncs.withLock {
                ($0.running > 0 ? deadline : min(deadline, $0.quietUntil), $0.running)
            }
            let resumption = syncs.withLock(
                when: { $0.readWanted || !$0.areBusy || $0.running != running }, before: wakeUp
            ) {
                syncs, _ -> Resumption? in
                if syncs.readWanted { return .wanted }
                if !syncs.areBusy { return .syncsEnded }
                return Date() >= deadline ? .pausedLongEnough : nil
            }
            if let resumption { return resumption }
        }
    }
}
