import Foundation
import GRDB

/// The SQL functions the store's own connection defines, which its change-capture triggers call.
///
/// Only that connection defines them: a write through another connection fails with "no such function"
/// rather than going unrecorded. The triggers keep each synced row's registers (``RowRegisters``) and
/// pending marks (``PendingMarks``) as one BLOB each, so the packing lives here, in Swift, once.
enum StoreFunctions {
    static func install(_ db: Database, capturing: Locked<Bool>, clock: StoreClock,
                        now: @escaping @Sendable () -> Date) {
        // False while remote changes are applied, so that they are not echoed back.
        db.add(function: DatabaseFunction("foldersync_capturing", argumentCount: 0, pure: false) { _ in
            capturing.current
        })
        // The next hybrid-logical-clock timestamp.
        db.add(function: DatabaseFunction("foldersync_tick", argumentCount: 0, pure: false) { _ in
            Int64(bitPattern: try clock.tick(now: now()).rawValue)
        })
        // foldersync_stamp(stamps, column…): the registers with each named column (NULLs skipped) written now by
        // this client, each with the next timestamp in turn, as a write's columns always were.
        db.add(function: DatabaseFunction("foldersync_stamp", argumentCount: nil, pure: false) { values in
            var registers = try RowRegisters(blob(values.first))
            for value in values.dropFirst() {
                guard let name = String.fromDatabaseValue(value) else { continue }
                registers.set(name, timestamp: try clock.tick(now: now()).rawValue, client: nil)
            }
            return registers.encoded
        })
        // foldersync_rejoined(stamps, column…): the registers with each named column made this client's write,
        // keeping the time it was written (a column without one is written now). A re-join publishes every value
        // again, each with its own time, so that re-joins merge by when values were written, not by who came last.
        db.add(function: DatabaseFunction("foldersync_rejoined", argumentCount: nil, pure: false) { values in
            var registers = try RowRegisters(blob(values.first))
            for value in values.dropFirst() {
                guard let name = String.fromDatabaseValue(value) else { continue }
                registers.set(name, timestamp: try registers[name]?.timestamp ?? clock.tick(now: now()).rawValue, client: nil)
            }
            return registers.encoded
        })
        addPure(db)
    }

    /// The functions that depend on nothing but their arguments; a snapshot's connection needs them too.
    static func addPure(_ db: Database) {
        // foldersync_mark(marks, name…): the marks with each named mark (NULLs skipped) added.
        db.add(function: DatabaseFunction("foldersync_mark", argumentCount: nil, pure: true) { values in
            var marks = try PendingMarks(blob(values.first))
            for value in values.dropFirst() { if let name = String.fromDatabaseValue(value) { marks.insert(name) } }
            return marks.encoded
        })
        // foldersync_unmark(marks, name): the marks without `name`.
        db.add(function: DatabaseFunction("foldersync_unmark", argumentCount: 2, pure: true) { values in
            var marks = try PendingMarks(blob(values[0]))
            if let name = String.fromDatabaseValue(values[1]) { marks.remove(name) }
            return marks.encoded
        })
        // foldersync_marked(marks, name): whether `name` is marked.
        db.add(function: DatabaseFunction("foldersync_marked", argumentCount: 2, pure: true) { values in
            guard let name = String.fromDatabaseValue(values[1]) else { return false }
            return try PendingMarks(blob(values[0])).contains(name)
        })
        // foldersync_owned(stamps, client): the registers with this client's named `client` (for snapshots).
        db.add(function: DatabaseFunction("foldersync_owned", argumentCount: 2, pure: true) { values in
            guard let client = String.fromDatabaseValue(values[1]) else { return values[0] }
            return try RowRegisters(blob(values[0])).owned(by: client).encoded
        })
    }

    private static func blob(_ value: DatabaseValue?) -> Data? {
        value.flatMap { Data.fromDatabaseValue($0) }
    }
}
