import FolderSyncTesting
import Foundation
import GRDB
import Testing

@_spi(ModelAdapter) @_spi(Tooling) @_spi(Testing) @testable import FolderSync
@testable import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The fixed costs of a sync (benchmark scenario 5: one changed row): its commits, its first read of the store's
/// registers, its state's JSON, and the threads a small sync no longer starts.
@Suite("Fixed costs of a sync")
struct FixedCostTests {
    /// Counts the commits of the store's connection (each one an fsync of the log).
    final class Commits: TransactionObserver, @unchecked Sendable {
        let count = Locked(0)
        func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { true }
        func databaseDidChange(with event: DatabaseEvent) {}
        func databaseDidCommit(_ db: Database) { count.withLock { $0 += 1 } }
        func databaseDidRollback(_ db: Database) {}

        static func counting(_ store: GRDBStore) throws -> Commits {
            let commits = Commits()
            try store.database.write { db in db.add(transactionObserver: commits, extent: .databaseLifetime) }
            return commits
        }

        func take() -> Int {
            count.withLock { count in
                defer { count = 0 }
                return count
            }
        }
    }

    @Test(
        "A sync that applies one set commits once; one that publishes one, twice; an idle one, never; and each saves what it learned"
    )
    func commitsPerSync() async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let (a, b) = try await TestClient.pair(remote, in: directory)
        try await a.sync()
        try await b.sync()
        try await a.sync()
        let commitsOfA = try Commits.counting(a.store)
        let commitsOfB = try Commits.counting(b.store)

        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'one')")
        _ = commitsOfA.take()
        let published = try await a.sync()
        #expect(published.changeSetsSent == 1)
        #expect(commitsOfA.take() == 2, "staging, then the set marked published with what the marker told the remote")
        let stateOfA = try a.store.loadSyncState()
        #expect(stateOfA.remote.announcedSequence == stateOfA.progress.publishedSequence)
        #expect(stateOfA.remote.recentlyPublished.count == 1 && stateOfA.remote.changeSetsSinceWholeStore >= 1)

        _ = commitsOfB.take()
        let applied = try await b.sync()
        #expect(applied.changesApplied == 1)
        #expect(commitsOfB.take() == 1, "the set applied with what the sync learned of the remote")
        let known = try b.store.loadSyncState().remote.knownRecentSyncs["client-A"]
        #expect(known?.publishedSequence == stateOfA.progress.publishedSequence && known?.etag != nil)

        try await b.sync()
        #expect(commitsOfB.take() == 0, "an idle sync writes nothing")
        #expect(try b.value("SELECT title FROM notes WHERE id = 'n1'") == "one")
    }

    /// A store of `rows` notes whose registers are stamped an hour ahead of the wall clock, closed; returns its path
    /// and the newest stamp.
    private func storeAhead(_ directory: TemporaryDirectory, rows: Int) throws -> (URL, HybridTimestamp) {
        let url = directory.subdirectory("store").appendingPathComponent("notes.sqlite")
        let ahead = Date().addingTimeInterval(3600)
        let store = try NotesSchema.open(url, now: { ahead })
        try store.database.write { db in
            let insert = try db.makeStatement(sql: "INSERT INTO notes(id, title) VALUES (?, 'ahead')")
            for row in 0..<rows { try insert.execute(arguments: [String(format: "n%06d", row)]) }
        }
        let newest = try #require(
            try store.stamp(
                of: ColumnKey(table: "notes", syncID: String(format: "n%06d", rows - 1), column: "title"),
                localClient: "me")
        ).timestamp
        try store.close()
        return (url, newest)
    }

    /// A store opened while a sync of it runs: what its first read did, and the semaphores its pause and resumption
    /// signal.
    private struct OpenedDuringSync {
        let store: GRDBStore
        let events: Locked<[SeedRead.Event]>
        let paused: DispatchSemaphore
        let resumed: DispatchSemaphore

        /// The read's events but its steps.
        var seen: [SeedRead.Event] { events.current.filter { $0 != .step } }
    }

    /// Opens the store at `url` with its first read held at its first step until a sync of the store began (pausing
    /// for at most `maximumPause`); records the read's events.
    private func openDuringSync(_ url: URL, maximumPause: TimeInterval) throws -> OpenedDuringSync {
        let events = Locked<[SeedRead.Event]>([])
        let paused = DispatchSemaphore(value: 0)
        let resumed = DispatchSemaphore(value: 0)
        let firstStep = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let steps = Locked(0)
        SeedRead.observers.withLock {
            $0[url.path] = { event in
                events.withLock { $0.append(event) }
                switch event {
                case .step:
                    if steps.withLock({
                        $0 += 1
                        return $0
                    }) == 1 {
                        firstStep.signal()
                        release.wait()
                    }
                case .paused: paused.signal()
                case .resumed: resumed.signal()
                }
            }
        }
        let store = try NotesSchema.open(url)
        firstStep.wait()
        store.clock.maximumPause = maximumPause
        store.clock.syncBegan()
        release.signal()
        return OpenedDuringSync(store: store, events: events, paused: paused, resumed: resumed)
    }

    @Test(
        "The clock's first read pauses while a sync of its store runs, and goes on when the sync ends",
        .timeLimit(.minutes(2)))
    func seedGivesWayToSyncs() throws {
        let directory = TemporaryDirectory()
        let (url, newest) = try storeAhead(directory, rows: 20_000)
        defer { SeedRead.observers.withLock { $0[url.path] = nil } }
        let opened = try openDuringSync(url, maximumPause: 600)
        opened.paused.wait()
        opened.store.clock.syncEnded()
        opened.resumed.wait()
        #expect(opened.seen == [.paused, .resumed(.syncsEnded)])
        try opened.store.database.write { db in
            try db.execute(sql: "UPDATE notes SET title = 'now' WHERE id = 'n000000'")
        }
        let stamp = try #require(
            try opened.store.stamp(of: ColumnKey(table: "notes", syncID: "n000000", column: "title"), localClient: "me")
        )
        #expect(stamp.timestamp > newest, "the read went on to the end")
        try opened.store.close()
    }

    @Test(
        "A write during the sync does not wait for it: the paused read goes on for the write, which is stamped after every register",
        .timeLimit(.minutes(2)))
    func writeDuringSyncWaitsOnlyForTheRead() throws {
        let directory = TemporaryDirectory()
        let (url, newest) = try storeAhead(directory, rows: 20_000)
        defer { SeedRead.observers.withLock { $0[url.path] = nil } }
        let opened = try openDuringSync(url, maximumPause: 600)
        opened.paused.wait()
        try opened.store.database.write { db in
            try db.execute(sql: "UPDATE notes SET title = 'during' WHERE id = 'n000001'")
        }
        let stamp = try #require(
            try opened.store.stamp(of: ColumnKey(table: "notes", syncID: "n000001", column: "title"), localClient: "me")
        )
        #expect(stamp.timestamp > newest)
        #expect(opened.seen == [.paused, .resumed(.wanted)])
        opened.store.clock.syncEnded()
        try opened.store.close()
    }

    @Test("A long sync holds the read back for at most its pause limit", .timeLimit(.minutes(2)))
    func pauseIsBounded() throws {
        let directory = TemporaryDirectory()
        let (url, _) = try storeAhead(directory, rows: 20_000)
        defer { SeedRead.observers.withLock { $0[url.path] = nil } }
        let opened = try openDuringSync(url, maximumPause: 0.05)
        opened.paused.wait()
        opened.resumed.wait()
        #expect(opened.seen == [.paused, .resumed(.pausedLongEnough)], "resumed with the sync still running")
        opened.store.clock.syncEnded()
        try opened.store.close()
    }

    @Test("A sync that publishes removes what an upload killed mid-way left in its own change-set folder")
    func staleTemporariesOfOwnUploads() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let remote = FileManagerFileSystem(rootURL: root)
        let (a, _) = try await TestClient.pair(remote, in: directory)
        try await a.sync()
        let folder = root.appendingPathComponent("com.example.notes/Documents/DOC/SyncChanges/client-A")
        let stale = TemporaryName.make(for: "000000000001-00000000-0000-4000-8000-000000000009.syncchg")
        try Data("half a set".utf8).write(to: folder.appendingPathComponent(stale))
        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'one')")
        let report = try await a.sync()
        #expect(report.changeSetsSent == 1)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(!names.contains(where: TemporaryName.isTemporary), "\(names)")
        #expect(names.count == 1)
    }

    /// Markers and document information with every field, empty ones, and text the XML must escape.
    static func markers() -> [RecentSync] {
        let blob = Data((0..<700).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        return [
            RecentSync(
                clientIdentifier: "client-A", lastSyncDate: Date(timeIntervalSince1970: 1_767_323_045),
                publishedSequence: 178,
                acknowledgement: [:], schemaVersion: 1),
            RecentSync(
                clientIdentifier: "B & <C> \"quoted\" 'é' 🎉 \t tab", lastSyncDate: Date(timeIntervalSince1970: 0),
                publishedSequence: Int64.max,
                acknowledgement: ["A": 1, "Z&<>": Int64.min, "": 0], schemaVersion: 3,
                recentChangeSets: ["000000000171-X.syncchg", "a\nb", ""],
                changeSetContents: [
                    "000000000178-Y.syncchg": blob, "empty": Data(), "one": Data([7]), "b": blob.prefix(52),
                ]),
            RecentSync(
                clientIdentifier: "c", lastSyncDate: Date(timeIntervalSince1970: 253_402_300_799),
                publishedSequence: -4,
                acknowledgement: ["x": 2], schemaVersion: -1, recentChangeSets: [], changeSetContents: [:]),
        ]
    }

    @Test(
        "Markers and documentInfo.plist as PropertyListEncoder writes them are read without Foundation's decoder, to the same values"
    )
    func canonicalPropertyLists() throws {
        for marker in Self.markers() {
            let file = try PropertyListFile.encode(marker)
            #expect(
                CanonicalPropertyList.decode(RecentSync.self, from: file) == marker,
                "\(String(decoding: file, as: UTF8.self))")
            #expect(try PropertyListFile.decodeWithFoundation(RecentSync.self, from: file, path: "m") == marker)
        }
        let info = DocumentInfo(
            documentIdentifier: "DOC", documentDescription: "Notes & <things>",
            userInfo: ["kind": "notes", "k&": "v<"],
            integrityKey: "4B16109C-8588-4B86-81E4-469E1FDDAA6C", createdByClient: "client-A",
            creationDate: Date(timeIntervalSince1970: 1_767_323_045))
        let file = try PropertyListFile.encode(info)
        let read = try #require(CanonicalPropertyList.decode(DocumentInfo.self, from: file))
        #expect(
            read.integrityKey == info.integrityKey && read.userInfo == info.userInfo
                && read.creationDate == info.creationDate
                && read.documentDescription == info.documentDescription)
    }

    @Test(
        "A property list the fast reader does not take is left to Foundation's decoder: any changed byte of a marker, another kind, a newer version"
    )
    func canonicalPropertyListsRefuse() throws {
        let marker = Self.markers()[1]
        let file = try PropertyListFile.encode(marker)
        var taken = 0
        for offset in stride(from: 0, to: file.count, by: 7) {
            var damaged = file
            damaged[offset] ^= 0x01
            guard let read = CanonicalPropertyList.decode(RecentSync.self, from: damaged) else { continue }
            taken += 1
            // Only a byte that carries nothing (layout Foundation's decoder skips too) may still read, as the same
            // marker.
            #expect(read == marker, "byte \(offset)")
            #expect(
                try PropertyListFile.decodeWithFoundation(RecentSync.self, from: damaged, path: "m") == marker,
                "byte \(offset)")
        }
        #expect(taken < file.count / 7 / 10, "almost every changed byte is refused: \(taken)")
        #expect(CanonicalPropertyList.decode(DocumentInfo.self, from: file) == nil, "another kind")
        let newer = Data(
            String(decoding: file, as: UTF8.self).replacingOccurrences(
                of: "<integer>2</integer>", with: "<integer>\(RecentSync.formatVersion + 1)</integer>"
            ).utf8)
        #expect(CanonicalPropertyList.decode(RecentSync.self, from: newer) == nil)
        #expect(throws: FolderSyncError.self) { try PropertyListFile.decode(RecentSync.self, from: newer, path: "m") }
    }

    @Test("A marker is written byte for byte as PropertyListEncoder writes it, or by PropertyListEncoder itself")
    func canonicalMarkerWriter() throws {
        var random = SeededGenerator(seed: 23)
        let alphabet =
            Array("abcXYZ019-_.é🎉&<>\"' \t\n/".unicodeScalars) + [
                Unicode.Scalar(UInt8(1)), Unicode.Scalar(UInt8(0x7F)), Unicode.Scalar(UInt8(0x0D)),
            ]
        func text(_ plain: Bool = false) -> String {
            let count = Int.random(in: 0...12, using: &random)
            return String(
                String.UnicodeScalarView(
                    (0..<count).map { _ in
                        plain
                            ? "abcXYZ019-_.".unicodeScalars.randomElement(using: &random)!
                            : alphabet.randomElement(using: &random)!
                    }))
        }
        var fast = 0
        for round in 0..<300 {
            let plain = round % 3 != 0
            var acknowledgement: [String: Int64] = [:]
            for _ in 0..<Int.random(in: 0...4, using: &random) {
                acknowledgement[text(plain)] = Int64.random(in: Int64.min...Int64.max, using: &random)
            }
            var contents: [String: Data]?
            if Bool.random(using: &random) {
                contents = [:]
                for _ in 0..<Int.random(in: 0...3, using: &random) {
                    contents?[text(plain)] = Data(
                        (0..<Int.random(in: 0...900, using: &random)).map { _ in
                            UInt8.random(in: 0...255, using: &random)
                        })
                }
            }
            let seconds = Double(Int.random(in: 0...253_402_300_799, using: &random)) + (round % 5 == 0 ? 0.25 : 0)
            let marker = RecentSync(
                clientIdentifier: text(plain), lastSyncDate: Date(timeIntervalSince1970: seconds),
                publishedSequence: Int64.random(in: -5...Int64.max, using: &random), acknowledgement: acknowledgement,
                schemaVersion: Int.random(in: -3...9, using: &random),
                recentChangeSets: Bool.random(using: &random)
                    ? (0..<Int.random(in: 0...8, using: &random)).map { _ in text(plain) } : nil,
                changeSetContents: contents,
                awaiting: Bool.random(using: &random)
                    ? (0..<Int.random(in: 0...3, using: &random)).map { _ in text(plain) } : nil)
            let foundation = try PropertyListFile.encodeWithFoundation(marker)
            #expect(try PropertyListFile.encode(marker) == foundation, "round \(round)")
            if let written = CanonicalPropertyList.encode(marker) {
                fast += 1
                #expect(written == foundation, "round \(round): \(String(decoding: written, as: UTF8.self))")
            }
            if plain, seconds == seconds.rounded(.down) {
                #expect(
                    try PropertyListFile.decodeWithFoundation(RecentSync.self, from: foundation, path: "m") == marker,
                    "round \(round)")
            }
        }
        #expect(fast > 120, "most markers are written without Foundation: \(fast)")
    }

    @Test(
        "The status written after every sync is byte for byte what PropertyListEncoder writes, fractions of a second dropped alike"
    )
    func canonicalStatusWriter() throws {
        var random = SeededGenerator(seed: 5)
        let alphabet =
            Array("abc XYZ019-_.é🎉&<>\"'\t\n:".unicodeScalars) + [
                Unicode.Scalar(UInt8(1)), Unicode.Scalar(UInt8(0x0D)),
            ]
        func date() -> Date? {
            switch Int.random(in: 0...5, using: &random) {
            case 0: nil
            case 1: Date(timeIntervalSince1970: Double(Int.random(in: 0...2_000_000_000, using: &random)))
            // A second's last nanosecond, which Date's interval since 2001 may round up to the next second.
            case 2:
                Date(timeIntervalSince1970: Double(Int.random(in: 0...2_000_000_000, using: &random)) + 0.999_999_999)
            case 3: Date(timeIntervalSince1970: Double.random(in: -10...10, using: &random))
            case 4: Date(timeIntervalSinceReferenceDate: Double.random(in: -1e9...1e10, using: &random))
            default: Date(timeIntervalSince1970: Double.random(in: 0...253_402_300_800, using: &random))
            }
        }
        var fast = 0
        for round in 0..<400 {
            let message =
                Bool.random(using: &random)
                ? nil
                : String(
                    String.UnicodeScalarView(
                        (0..<Int.random(in: 0...30, using: &random)).map { _ in
                            round % 4 == 0
                                ? alphabet.randomElement(using: &random)!
                                : "abc XYZ019-_.:".unicodeScalars.randomElement(using: &random)!
                        }))
            let status = LocalSyncStatus(
                lastSuccess: date(), lastFailure: date(),
                lastErrorCode: Bool.random(using: &random) ? Int.random(in: Int.min...Int.max, using: &random) : nil,
                lastErrorMessage: message)
            let foundation = try PropertyListFile.encodeWithFoundation(status)
            #expect(try PropertyListFile.encode(status) == foundation, "round \(round)")
            if let written = CanonicalPropertyList.encode(status) {
                fast += 1
                #expect(written == foundation, "round \(round): \(String(decoding: written, as: UTF8.self))")
            }
        }
        #expect(fast > 200, "most statuses are written without Foundation: \(fast)")
        // What a sync writes: a success now, nothing else.
        #expect(CanonicalPropertyList.encode(LocalSyncStatus(lastSuccess: Date())) != nil)
    }

    @Test("A listing's version tag is inode-seconds.nanoseconds-size")
    func versionTag() {
        var info = Glibc.stat()
        let cases: [(UInt, Int, Int, Int)] = [
            (0, 0, 0, 0), (5_432_078, 1_795_742_072, 919_972_727, 1861), (UInt.max, -1, 999_999_999, Int.max),
        ]
        for (inode, seconds, nanoseconds, size) in cases {
            info.st_ino = inode
            info.st_mtim.tv_sec = seconds
            info.st_mtim.tv_nsec = nanoseconds
            info.st_size = size
            #expect(FileManagerFileSystem.versionTag(info) == "\(inode)-\(seconds).\(nanoseconds)-\(size)")
        }
    }

    /// States with every field set, unset, and strings JSON must escape.
    static func states() -> [LocalSyncState] {
        var full = LocalSyncState()
        full.progress.nextSequence = 42
        full.progress.publishedSequence = 41
        full.progress.ownChangeSetsToReapplyAfter = 7
        full.progress.hasBootstrapped = true
        full.remote.knownRecentSyncs = [
            "client-A": .init(
                etag: "\"W/tag\" \\ / é 🎉 \u{01}\t\n", publishedSequence: 9,
                recentChangeSets: ["000000000009-X.syncchg", ""]),
            "": .init(etag: nil, publishedSequence: 0),
            "client-C": .init(etag: "e", publishedSequence: Int64.max, recentChangeSets: []),
        ]
        full.remote.changeSetsSinceWholeStore = 3
        full.remote.bytesSinceWholeStore = -5
        full.remote.announcedSequence = 41
        full.remote.announcedAcknowledgement = ["client-A": 9, "client-B": Int64.min]
        full.remote.announcedAt = Date(timeIntervalSince1970: 1_767_323_045)
        full.remote.ownRecentSyncEtag = "5431869-1795740877.607917574-721"
        full.remote.owesWholeStore = true
        full.remote.acknowledgedByOthers = ["client-D": 1]
        full.remote.hasListedClients = true
        full.remote.recentlyPublished = ["a/b", "\u{7F}\u{2028}"]
        full.remote.ownWholeStoreTag = "tag"
        var fractional = full
        fractional.remote.announcedAt = Date(timeIntervalSinceReferenceDate: -1234.5678)
        return [LocalSyncState(), full, fractional]
    }

    @Test("The sync state's JSON is read as JSONDecoder reads it, and what is written JSONDecoder reads back the same")
    func stateJSON() throws {
        for state in Self.states() {
            let written = state.encodedJSON()
            #expect(
                try JSONDecoder().decode(LocalSyncState.self, from: written) == state,
                "\(String(decoding: written, as: UTF8.self))")
            let foundation = try JSONEncoder().encode(state)
            #expect(
                try StateJSON.read(foundation) == state,
                "read without falling back: \(String(decoding: foundation, as: UTF8.self))")
            #expect(try LocalSyncState.decodeJSON(written) == state)
        }
        // What older versions left out or set to null reads as JSONDecoder reads it; unknown keys are ignored.
        let sparse = Data(
            #"{"publishedSequence":2,"nextSequence":3,"announcedAt":null,"fromTheFuture":{"x":[1,2.5e3,true,null]}}"#
                .utf8)
        #expect(try StateJSON.read(sparse) == JSONDecoder().decode(LocalSyncState.self, from: sparse))
    }

    @Test(
        "Sync state JSON that the reader does not take is left to JSONDecoder, which refuses it as it always did",
        arguments: [
            #"{"nextSequence":1}"#, #"{"nextSequence":1,"publishedSequence":"2"}"#,
            #"{"nextSequence":1,"publishedSequence":2"#,
            #"[1]"#, #"{"nextSequence":1.5,"publishedSequence":2}"#, "{\"nextSequence\":1,\"publishedSequence\":2} x",
        ])
    func malformedStateJSON(_ text: String) {
        let data = Data(text.utf8)
        #expect(throws: StateJSON.Malformed.self) { try StateJSON.read(data) }
        #expect(throws: DecodingError.self) { try LocalSyncState.decodeJSON(data) }
    }

    @Test("Fewer values than one batch are consumed by finish, on the calling thread: no thread is started")
    func smallBatchOnCallingThread() throws {
        let caller = pthread_self()
        let threads = Locked<[pthread_t]>([])
        var received: [Int] = []
        let consumer = BackgroundBatchConsumer<Int>(batchSize: 8) { batch in
            threads.withLock { $0.append(pthread_self()) }
            received += batch
        }
        for value in 0..<5 { try consumer.add(value) }
        try consumer.finish()
        consumer.abandon()
        #expect(received == Array(0..<5))
        #expect(threads.current.count == 1 && pthread_equal(threads.current[0], caller) != 0)
    }

    @Test("The sync lock is taken at once when free, and waited for when another holder has it")
    func syncLock() async throws {
        let directory = TemporaryDirectory()
        let url = directory.url.appendingPathComponent("sync.lock")
        func isFree() -> Bool {
            let fd = open(url.path, O_RDWR | O_CLOEXEC)
            defer { close(fd) }
            return flock(fd, LOCK_EX | LOCK_NB) == 0
        }
        let first = try await FileLock.acquire(url)
        #expect(!isFree())
        let second = Task { try await FileLock.acquire(url) }
        #expect(!isFree())
        first.release()
        let taken = try await second.value
        #expect(!isFree(), "the waiting holder has it")
        taken.release()
        #expect(isFree())
    }
}
