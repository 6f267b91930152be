import FolderSync
import Foundation

/// Scenario 9: FolderSync over a wide-area link: WebDAV behind a 50 ms round trip and 20 Mbit/s each way.
///
/// The link is ``WANLink`` (a user-space delaying proxy: this kernel has no `tc netem`), in front of the same server
/// as scenario 4; a probe of OPTIONS requests shows the delay it adds. A writes a notes document and publishes it
/// straight to the server (preparation, not timed). Then, through the link: C's first sync from change sets only
/// (no whole store yet), then, once A uploaded a whole store, B's join as a new device (``DocumentSyncManager/openStore(at:_:)``
/// and its first sync). Each is paired with its floor measured right after it: one `curl` that GETs the same files
/// through the same link, one after another on one connection (the issue's "one `curl` per file" without a process
/// and a TCP handshake per file, which would only slow the floor). Last, A changes one note and syncs, B syncs, then
/// B syncs again with nothing new: wall times expressed in round trips of the link.
struct WANScenario: Scenario {
    let number = "9"
    let title = "A WAN: 50 ms round trip, 20 Mbit/s"

    /// Joplin's published first sync of 26,591 items through WebDAV.
    static let joplinSeconds = 571.0
    static let joplinItems = 26_591

    func run(_ context: BenchContext) async throws -> ScenarioResult {
        guard let server = context.webDAVURL else {
            return ScenarioResult(status: "missing", note: "no WebDAV server: run scripts/bench, which starts one (or set FOLDERSYNC_BENCH_WEBDAV)")
        }
        var result = ScenarioResult()
        let notes = context.sizes.wanNotes
        let roundTrip = WANLink.roundTrip
        result.note = "\(notes) notes; WebDAV (Apache mod_dav) behind \(Int(roundTrip * 1000)) ms round trip, \(Int(WANLink.bitsPerSecond / 1e6)) Mbit/s each way"
        let link = try WANLink(inFrontOf: server)
        let root = try context.folder("wan")
        defer { try? FileManager.default.removeItem(at: root) }

        // The probe: the same request on a kept connection, directly and through the link (the first, which connects, left out).
        let probes = 21
        let direct = median(Array(try Floors.curlRequestTimes(probes, method: "OPTIONS", url: server).dropFirst()))
        let delayed = median(Array(try Floors.curlRequestTimes(probes, method: "OPTIONS", url: link.url).dropFirst()))
        context.log(String(format: "probe: OPTIONS %.2f ms direct, %.2f ms through the link", direct * 1000, delayed * 1000))
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
            let files = try await remote.contentsOfDirectory(at: folder).filter { $0.kind == .file && !TemporaryName.isTemporary($0.name) }
            let seconds = try Floors.curlGetSeconds(files.map { folder.appending($0.name).description }, baseURL: base, scratch: scratch)
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
        guard joined["join.rows"] == Double(notes) else { throw BenchError("B's store does not hold the \(notes) notes") }
        context.log("floor: curl GETs of the whole store's files through the link")
        let wholeStoreFloor = try await floor(layout.wholeStoreDirectory(document, client: "A"))

        context.log("A changes one note and syncs; B syncs, then syncs again with nothing new")
        let writer = try client("A", through: link.url).run("change-one,sync:one")
        let reader = try client("B", through: link.url).run("sync:one,sync:idle")
        guard reader["one.changesApplied"] == 1 else { throw BenchError("B applied \(Int(reader["one.changesApplied"])) changes, expected 1") }
        try? await remote.remove(layout.documentDirectory(document))

        let joplin = Self.joplinSeconds * Double(notes) / Double(Self.joplinItems)
        result.figure("A: change sets published", written["publish.changeSetsSent"], "")
        result.figure("A: their bytes", Double(changeSetFloor.bytes), "B")
        result.figure("A: whole store's bytes (\(wholeStoreFloor.files) files)", Double(wholeStoreFloor.bytes), "B")
        result.figure("C: registration through the link (not timed as sync)", fromChangeSets["register.seconds"], "s")
        result.figure("C: first sync from change sets only", fromChangeSets["first.seconds"], "s")
        result.figure("C: its requests", fromChangeSets["first.requests"], "")
        result.figure("floor: curl GET of the \(changeSetFloor.files) change sets through the link", changeSetFloor.seconds, "s")
        result.figure("B: registration through the link (not timed as sync)", joined["register.seconds"], "s")
        result.figure("B: store opened from the whole store", joined["join.openSeconds"], "s")
        result.figure("B: that and its first sync", joined["join.seconds"], "s")
        result.figure("floor: curl GET of the whole store's files through the link", wholeStoreFloor.seconds, "s")
        result.figure("floor's throughput (whole store)", Double(wholeStoreFloor.bytes) * 8 / wholeStoreFloor.seconds / 1e6, "Mbit/s")
        result.figure("Joplin's first sync of as many items (571 s for \(Self.joplinItems), in proportion)", joplin, "s")
        for (side, output) in [("A", writer), ("B", reader)] {
            result.figure("\(side): one-change sync", output["one.seconds"] * 1000, "ms")
            result.figure("\(side): its requests", output["one.requests"], "")
        }
        result.figure("B: idle sync", reader["idle.seconds"] * 1000, "ms")

        result.check("first sync from the whole store / curl floor", joined["join.seconds"] / wholeStoreFloor.seconds, atMost: 2)
        result.check("first sync from change sets / curl floor", fromChangeSets["first.seconds"] / changeSetFloor.seconds, atMost: 2)
        result.check("Joplin / first sync from the whole store", joplin / joined["join.seconds"], atLeast: 20)
        result.check("Joplin / first sync from change sets", joplin / fromChangeSets["first.seconds"], atLeast: 20)
        result.check("A's one-change sync in round trips", writer["one.seconds"] / roundTrip, atMost: 4, unit: "RTT")
        result.check("B's one-change sync in round trips", reader["one.seconds"] / roundTrip, atMost: 4, unit: "RTT")
        result.check("requests of B's idle sync", reader["idle.requests"], atMost: 2, unit: "")
        result.check("B's idle sync in round trips (its 2 requests + 1)", reader["idle.seconds"] / roundTrip, atMost: 3, unit: "RTT")
        return result
    }
}
