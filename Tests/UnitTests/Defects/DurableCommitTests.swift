import Foundation
import GRDB
import Testing

@testable import FolderSync
@testable import TestSupport

/// Durability defect found while profiling benchmark scenario 7: the store asked for `synchronous = FULL` in
/// `prepareDatabase`, which GRDB's WAL set-up runs before it sets `synchronous = NORMAL`, so no commit was synced
/// (strace counted 8 fdatasyncs of the log for 200 single-row transactions) and a power loss could take back a
/// commit, a staged sequence number included.
@Suite("Durable commits")
struct DurableCommitTests {
    @Test("The store's connection runs in WAL mode with synchronous = FULL, when created and when opened again")
    func fullSync() throws {
        let directory = TemporaryDirectory()
        let url = directory.url.appendingPathComponent("notes.sqlite")
        for opening in ["created", "reopened"] {
            let store = try NotesSchema.open(url)
            let (journal, synchronous) = try store.database.read { db in
                (try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA synchronous"))
            }
            #expect(journal == "wal", "\(opening)")
            #expect(
                synchronous == 2,
                "\(opening): synchronous is \(synchronous.map(String.init) ?? "unknown"), not FULL (2)")
            try store.database.close()
        }
    }
}
