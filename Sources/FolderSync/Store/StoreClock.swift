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
    /// The read of the newest register while it may still run, with where it leaves its result.
    private let seed = Locked<(thread: HandoffThread, newest: Locked<Result<UInt64, any Error>>)?>(nil)

    /// Starts reading the newest register of the document at `path` (committed, its bookkeeping tables created),
    /// which the clock observes before its next use.
    func startSeeding(fromDocumentAt path: String) {
        let newest = Locked<Result<UInt64, any Error>>(.success(0))
        let thread = HandoffThread {
            newest.withLock { $0 = Result { try Self.newestStamp(inDocumentAt: path) } }
        }
        seed.withLock { $0 = (thread, newest) }
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
            guard let (thread, newest) = pending else { return }
            thread.join()
            pending = nil
            switch newest.current {
            case .success(let stamp): observe(HybridTimestamp(rawValue: stamp))
            case .failure(let error):
                throw FolderSyncError(.localStoreFailed, "cannot read the document's newest change stamp", underlying: error)
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
