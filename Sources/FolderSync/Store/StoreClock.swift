import Foundation
import GRDB

/// The store's hybrid logical clock, which must run ahead of every register the document holds, so that a
/// local write is always newer than what it overwrites.
///
/// Finding the newest register reads every clock row: about a second for 5,000,000 rows. Opening a store
/// therefore starts that read on a thread and connection of its own, and the clock's first use waits for it:
/// the app can read its document at once, and a big store's first write waits at most for the rest of the read.
final class StoreClock: @unchecked Sendable {
    private let clock = Locked(HybridLogicalClock())

    /// Where the clock learns the document's newest stamp before its next use.
    private enum Seed {
        /// Nowhere: the clock observed it, or the document has none.
        case none
        /// A read on a thread of its own, with where it leaves its result.
        case reading(HandoffThread, Locked<Result<UInt64, any Error>>)
        /// A read through the store's own connection, made at the clock's first use: while the store opens, before
        /// the read on a thread can start (the app's migration may write synced rows).
        case onFirstUse(() throws -> UInt64)
    }

    private let seed = Locked(Seed.none)

    /// Starts reading the newest register of the document at `path` (committed, its bookkeeping tables created),
    /// which the clock observes before its next use.
    func startSeeding(fromDocumentAt path: String) {
        let newest = Locked<Result<UInt64, any Error>>(.success(0))
        let thread = HandoffThread {
            newest.withLock { $0 = Result { try Self.newestStamp(inDocumentAt: path) } }
        }
        seed.withLock { $0 = .reading(thread, newest) }
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
            case .reading(let thread, let newest):
                thread.join()
                pending = .none
                switch newest.current {
                case .success(let stamp): observe(HybridTimestamp(rawValue: stamp))
                case .failure(let error):
                    throw FolderSyncError(.localStoreFailed, "cannot read the document's newest change stamp", underlying: error)
                }
            case .onFirstUse(let read):
                observe(HybridTimestamp(rawValue: try read()))
                pending = .none
            }
        }
    }

    /// The newest timestamp of the registers and deletions of the document at `path`, read through a connection
    /// of its own.
    static func newestStamp(inDocumentAt path: String) throws -> UInt64 {
        // Also run on a downloaded snapshot before it is installed: hardened like every such connection.
        var configuration = SQLiteHardening.configuration(readonly: true)
        configuration.busyMode = .timeout(30)   // as the store's own connection: a checkpoint may hold the file briefly
        let document = try DatabaseQueue(path: path, configuration: configuration)
        defer { try? document.close() }
        return try document.read(newestStamp)
    }

    /// The newest timestamp of the registers and deletions in `db`; registers are read from the head of each
    /// `stamps` value (no register decoded).
    static func newestStamp(_ db: Database) throws -> UInt64 {
        let register = RowRegisters.newestTimestamp(ofHead: try Data.fetchOne(db, sql: "SELECT max(substr(stamps, 2, 8)) FROM \(StoreSchema.clocksTable)"))
        let deleted = UInt64(bitPattern: try Int64.fetchOne(db, sql: "SELECT max(hlc) FROM \(StoreSchema.tombstonesTable)") ?? 0)
        return max(register, deleted)
    }
}
