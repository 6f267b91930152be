import FolderSync
import Foundation
import GRDB

/// Scenario 9: FolderSync over a wide-area link: WebDAV behind a 50 ms round trip and 20 Mbit/s each way.
///
/// The link is ``WANLink`` (a user-space delaying proxy: this kernel has no `tc netem`), in front of the same server as
/// scenario 4; a probe of OPTIONS requests shows the delay it adds. A writes a notes document and publishes it straight
/// to the server (preparation, not timed). Then, through the link: C's first sync from change sets only (no whole store
/// yet), then, once A uploaded a whole store, B's join as a new device (``DocumentSyncManager/openStore(at:_:)`` and
/// its first sync). Each is paired with its floor measured right after it: one `curl` that GETs the same files through
/// the same link, one after another on one connection (the issue's "one `curl` per file" without a process and a TCP
/// handshake per file, which would only slow the floor). Last, A and B run as apps do (in this process, after a sync at
/// launch, reported apart): round after round A changes one note and syncs, B syncs, then B syncs again with nothing
/// new; the medians' wall times are expressed in round trips of the link (50 ms).
struct WANScenario: Scenario {
    let number = "9"
    let title = "A WAN: 50 ms round trip, 20 Mbit/s"

    /// Joplin's published first sync of 26,591 items through WebDAV.
    static let joplinSeconds = 571.0
    static let joplinItems = 26_591

    func run(_ context: BenchContext) async throws -> ScenarioResult {
        guard let server = context.webDAVURL else {
            return ScenarioResult(
                status: "missing",
                note: "no WebDAV server: run scripts/bench, which starts one (or set FOLDERSYNC_BENCH_WEBDAV)")
        }
        var result = ScenarioResult()
        let notes = context.sizes.wanNotes
        let roundTrip = WANLink.roundTrip
        result.note =
            "\(notes) notes; WebDAV (Apache mod_dav) behind \(Int(roundTrip * 1000)) ms round trip, \(Int(WANLink.bitsPerSecond / 1e6)) Mbit/s each way"
        let link = try WANLink(inFrontOf: server)
        let root = try context.folder("wan")
        defer { try? FileManager.default.removeItem(at: root) }

        // The probe: the same request on a kept connection, directly and through the link (the first, which connects,
        // left out).
        let probes = 21
        let direct = median(Array(try Floors.curlRequestTimes(probes, method: "OPTIONS", url: server).dropFirst()))
        let delayed = median(Array(try Floors.curlRequestTimes(probes, method: "OPTIONS", url: link.url).dropFirst()))
        context.log(
            String(format: "probe: OPTIONS %.2f ms direct, %.2f ms through the link", direct * 1000, delayed * 1000))
        result.figure("probe: OPTIONS on a kept connection, direct (median of \(probes - 1))", direct * 1000, "ms")
        result.figure("probe: the same through the link", delayed * 1000, "ms")
        result.figure("probe: added by the link", (delayed - direct) * 1000, "ms")

        let document = "wan-\(UUID().uuidString.prefix(8))"
        func client(_ name: String, through location: String) -> BenchClient {
            BenchClient(name, in: root, remote: location, document: document, schema: .notes)
        }
        let remote = try openRemote(server)
        let layout = try RemoteLayout(applicationIdentifier: BenchSchema.applicationIdentifier)
        let base = link.url.hasSuffix("/") ? link.url : link.url + "/"
        let scratch = root.appendingPathComponent("curl-config")
        /// The floor: every file of `folder` fetched through the link; its time and bytes.
        func floor(_ folder: RemotePath) async throws -> (seconds: Double, bytes: Int64, files: Int) {
            let files = try await remote.contentsOfDirectory(at: folder).filter {
                $0.kind == .file && !TemporaryName.isTemporary($0.name)
            }
            let seconds = try Floors.curlGetSeconds(
                files.map { folder.appending($0.name).description }, baseURL: base, scratch: scratch)
            return (seconds, files.reduce(0) { $0 + ($1.size ?? 0) }, files.count)
        }

        context.log("A writes \(notes) notes and publishes them straight to the server (not timed)")
        let written = try client("A", through: server).run("write,sync:publish", rows: notes)

        context.log("C's first sync, from change sets only, through the link")
        let fromChangeSets = try client("C", through: link.url).run("sync:first")
        guard fromChangeSets["first.changesApplied"] == Double(notes) else {
            throw BenchError("C applied \(Int(fromChangeSets["first.changesApplied"])) changes, expected \(notes)")
        }
        context.log("floor: curl GETs of the change sets through the link")
        let changeSetFloor = try await floor(layout.syncChangesDirectory(document, client: "A"))

        context.log("A uploads a whole store (not timed); B joins from it through the link")
        _ = try client("A", through: server).run("upload")
        let joined = try client("B", through: link.url).run("join")
        guard joined["join.rows"] == Double(notes) else {
            throw BenchError("B's store does not hold the \(notes) notes")
        }
        context.log("floor: curl GETs of the whole store's files through the link")
        let wholeStoreFloor = try await floor(layout.wholeStoreDirectory(document, client: "A"))

        context.log(
            "A and B run as apps do (in this process), each syncing at launch; then \(context.sizes.wanRounds) rounds: "
                + "A changes one note and syncs, B syncs, then syncs again with nothing new")
        let running = try await RunningPair(a: client("A", through: link.url), b: client("B", through: link.url))
        var rounds: [RunningPair.Round] = []
        for round in 1...context.sizes.wanRounds { rounds.append(try await running.round(round)) }
        withExtendedLifetime(link) {}  // the proxy stops when the link is released: not before the last round
        try? await remote.remove(layout.documentDirectory(document))

        let joplin = Self.joplinSeconds * Double(notes) / Double(Self.joplinItems)
        result.figure("A: change sets published", written["publish.changeSetsSent"], "")
        result.figure("A: their bytes", Double(changeSetFloor.bytes), "B")
        result.figure("A: whole store's bytes (\(wholeStoreFloor.files) files)", Double(wholeStoreFloor.bytes), "B")
        result.figure("C: registration through the link (not timed as sync)", fromChangeSets["register.seconds"], "s")
        result.figure("C: first sync from change sets only", fromChangeSets["first.seconds"], "s")
        result.figure("C: its requests", fromChangeSets["first.requests"], "")
        result.figure(
            "floor: curl GET of the \(changeSetFloor.files) change sets through the link", changeSetFloor.seconds, "s")
        result.figure("B: registration through the link (not timed as sync)", joined["register.seconds"], "s")
        result.figure("B: store opened from the whole store", joined["join.openSeconds"], "s")
        result.figure("B: that and its first sync", joined["join.seconds"], "s")
        result.figure("floor: curl GET of the whole store's files through the link", wholeStoreFloor.seconds, "s")
        result.figure(
            "floor's throughput (whole store)", Double(wholeStoreFloor.bytes) * 8 / wholeStoreFloor.seconds / 1e6,
            "Mbit/s")
        result.figure(
            "Joplin's first sync of as many items (571 s for \(Self.joplinItems), in proportion)", joplin, "s")
        result.figure(
            "A: sync at launch (the document checked again, B's and C's markers read)", running.launch.a * 1000, "ms")
        result.figure("B: sync at launch", running.launch.b * 1000, "ms")
        let writer = median(rounds.map(\.writer))
        let reader = median(rounds.map(\.reader))
        let idle = median(rounds.map(\.idle))
        result.figure("A: one-change sync (median of \(rounds.count) rounds)", writer * 1000, "ms")
        result.figure("A: its requests (most in a round)", Double(rounds.map(\.writerRequests).max()!), "")
        result.figure("B: one-change sync (median)", reader * 1000, "ms")
        result.figure("B: its requests (most in a round)", Double(rounds.map(\.readerRequests).max()!), "")
        result.figure("B: idle sync (median)", idle * 1000, "ms")

        result.check(
            "first sync from the whole store / curl floor", joined["join.seconds"] / wholeStoreFloor.seconds, atMost: 2)
        result.check(
            "first sync from change sets / curl floor", fromChangeSets["first.seconds"] / changeSetFloor.seconds,
            atMost: 2)
        result.check("Joplin / first sync from the whole store", joplin / joined["join.seconds"], atLeast: 20)
        result.check("Joplin / first sync from change sets", joplin / fromChangeSets["first.seconds"], atLeast: 20)
        result.check("A's one-change sync in round trips", writer / roundTrip, atMost: 4, unit: "RTT")
        result.check("B's one-change sync in round trips", reader / roundTrip, atMost: 4, unit: "RTT")
        result.check(
            "requests of B's idle sync (most in a round)", Double(rounds.map(\.idleRequests).max()!), atMost: 2,
            unit: "")
        result.check("B's idle sync in round trips (its 2 requests + 1)", idle / roundTrip, atMost: 3, unit: "RTT")
        return result
    }

    /// A and B as running apps (in this process, as scenario 2's clients), each with its own connections through the
    /// link.
    ///
    /// A one-change sync is measured in an app that is already running: the first sync of a launch also checks the
    /// document's registration with the remote again (about ten requests one after another), which is reported apart.
    final class RunningPair {
        struct Round {
            var writer: Double
            var writerRequests: Int
            var reader: Double
            var readerRequests: Int
            var idle: Double
            var idleRequests: Int
        }

        let aStore: GRDBStore
        let a: DocumentSyncManager, b: DocumentSyncManager
        let aRemote: CountingFileSystem, bRemote: CountingFileSystem
        private(set) var launch: (a: Double, b: Double) = (0, 0)

        init(a aClient: BenchClient, b bClient: BenchClient) async throws {
            (aRemote, bRemote) = (try openRemote(aClient.remote), try openRemote(bClient.remote))
            aStore = try aClient.schema.openStore(aClient.db.path)
            let bStore = try bClient.schema.openStore(bClient.db.path)
            a = try await registerClient(
                store: aStore, remote: aRemote, client: aClient.name, document: aClient.document,
                helper: URL(fileURLWithPath: aClient.db.path + ".helper"), manualPolicy: true)
            b = try await registerClient(
                store: bStore, remote: bRemote, client: bClient.name, document: bClient.document,
                helper: URL(fileURLWithPath: bClient.db.path + ".helper"), manualPolicy: true)
            launch = (
                try await Self.timed { try await self.a.synchronize() }.seconds,
                try await Self.timed { try await self.b.synchronize() }.seconds
            )
        }

        /// A changes one note and syncs; B syncs and must apply exactly that change, then syncs again.
        func round(_ round: Int) async throws -> Round {
            try await aStore.database.write { db in
                try db.execute(
                    sql: "UPDATE notes SET body = ? WHERE id = ?",
                    arguments: [BenchSchema.noteBody(round, version: round), BenchSchema.rowID(round)])
            }
            _ = aRemote.take()
            let writer = try await Self.timed { try await self.a.synchronize() }
            let writerRequests = aRemote.take().requests
            _ = bRemote.take()
            let reader = try await Self.timed { try await self.b.synchronize() }
            guard reader.report.changesApplied == 1 else {
                throw BenchError("B applied \(reader.report.changesApplied) changes, expected 1")
            }
            let readerRequests = bRemote.take().requests
            let idle = try await Self.timed { try await self.b.synchronize() }
            return Round(
                writer: writer.seconds, writerRequests: writerRequests, reader: reader.seconds,
                readerRequests: readerRequests,
                idle: idle.seconds, idleRequests: bRemote.take().requests)
        }

        private static func timed(_ sync: () async throws -> SyncReport) async throws -> (
            seconds: Double, report: SyncReport
        ) {
            let started = ContinuousClock.now
            let report = try await sync()
            return ((ContinuousClock.now - started).seconds, report)
        }
    }
}
