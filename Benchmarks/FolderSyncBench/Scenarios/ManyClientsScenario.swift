import FolderSync
import FolderSyncWebDAV
import Foundation
import GRDB

/// Scenario 10: a hundred devices. A reader's sync costs what the active clients published, not how many clients
/// are registered.
///
/// In one document 100 clients are registered (each with its device plist, a recent-sync marker and a published
/// change set that the reader R applied); each round 10 of them, a different 10 each round, change one row and
/// sync, then R syncs and applies their 10 change sets. The floor is the same round in a document of 2 clients
/// (one writer and R), R applying one set: R's time per change set applied is compared, and R's requests counted.
/// The two documents take turns round by round, as in scenario 2. Every client is real (registered and synced
/// through the public API, in this process): fabricated clients would skip exactly what is measured, markers
/// that name sets and acknowledge others'.
struct ManyClientsScenario: Scenario {
    let number = "10"
    let title = "A hundred devices"

    func run(_ context: BenchContext) async throws -> ScenarioResult {
        var result = ScenarioResult()
        let sizes = context.sizes
        result.note =
            "\(sizes.manyClients) registered clients, \(sizes.manyClientsActive) active per round, against 2; "
            + "median of \(sizes.manyClientsRounds) rounds, alternating documents"
        let root = try context.folder("many-clients")
        defer { try? FileManager.default.removeItem(at: root) }
        let remoteURL = root.appendingPathComponent("remote")
        try FileManager.default.createDirectory(at: remoteURL, withIntermediateDirectories: true)
        let folder = FileManagerFileSystem(rootURL: remoteURL)
        try await measure(context, root: root.appendingPathComponent("local"), label: "local", into: &result) { folder }
        guard sizes.manyClientsOverWebDAV else {
            result.note! += "; local folder only (WebDAV in the full run)"
            return result
        }
        guard let url = context.webDAVURL else {
            result.note! += "; no WebDAV server: run scripts/bench, which starts one (or set FOLDERSYNC_BENCH_WEBDAV)"
            return result
        }
        // Each client has a WebDAV connection of its own, as each device has.
        try await measure(context, root: root.appendingPathComponent("webdav"), label: "WebDAV", into: &result) {
            try RemoteLocation.fileSystem(for: url)
        }
        return result
    }

    /// The rounds of both documents on one remote (`makeRemote` gives each client its own connection to it), their
    /// figures and checks labelled with `label`. The documents are removed from the remote afterwards.
    private func measure(
        _ context: BenchContext, root: URL, label: String, into result: inout ScenarioResult,
        makeRemote: @escaping @Sendable () throws -> any RemoteFileSystem
    ) async throws {
        let sizes = context.sizes
        let active = sizes.manyClientsActive
        let many = try await Document(
            context, root: root, makeRemote: makeRemote, name: "many", clients: sizes.manyClients, active: active)
        let pair = try await Document(context, root: root, makeRemote: makeRemote, name: "pair", clients: 2, active: 1)
        context.log("\(label): \(sizes.manyClientsRounds) rounds and a warm-up")
        // Round 0 warms up and is not counted. Which document goes first alternates, so neither always follows
        // the other's writes to the disk.
        for round in 0...sizes.manyClientsRounds {
            for document in round % 2 == 0 ? [many, pair] : [pair, many] {
                try await document.round(round, counted: round > 0)
            }
        }
        for document in [many, pair] {
            let clients = "\(label), \(document.clients) clients, \(document.active) active"
            result.figure(
                "\(clients): writers change one row and sync, at once (median)", median(document.writerTimes) * 1000,
                "ms")
            result.figure(
                "\(clients): R's sync applying \(document.active) change sets", median(document.readerTimes) * 1000,
                "ms")
            result.figure("\(clients): R's sync per change set applied", document.perChangeSet * 1000, "ms")
            result.figure("\(clients): R's requests (median)", median(document.readerRequests.map(Double.init)), "")
            result.figure(
                "\(clients): R's bytes received (median: markers and change sets)", median(document.readerBytes), "B")
        }
        result.check(
            "\(label): R per change set, \(many.clients) clients / 2 clients", many.perChangeSet / pair.perChangeSet,
            atMost: 2)
        result.check(
            "\(label): R's requests, \(active) active clients (2 + \(active))", Double(many.readerRequests.max() ?? 0),
            atMost: Double(2 + active), unit: "")
        for document in [many, pair] { try await document.remove() }
    }

    /// One document: its writers and the reader R, the rotation of writers, and what R's syncs cost.
    final class Document {
        let clients: Int
        let active: Int
        let document: String
        let reader: DocumentSyncManager
        /// R's own view of the remote, so that only its requests are counted.
        let readerRemote: CountingFileSystem
        let writers: [Writer]
        private(set) var writerTimes: [Double] = []
        private(set) var readerTimes: [Double] = []
        private(set) var readerRequests: [Int] = []
        private(set) var readerBytes: [Double] = []
        /// R's number in ``clientIdentifier(_:)``.
        static let readerIndex = 999_999

        /// Client `index`'s identifier, shaped as apps make them (a UUID): markers list every client they acknowledge,
        /// so the length of identifiers is part of what a reader downloads.
        static func clientIdentifier(_ index: Int) -> String {
            String(format: "0000BE9C-0000-4000-8000-%012d", index)
        }

        /// Syncs run at once by the set-up.
        static let concurrentSyncs = 8

        struct Writer: Sendable {
            let store: GRDBStore
            let manager: DocumentSyncManager
        }

        /// `body` for each of `items`, `width` at a time; the results in the order of `items`.
        static func concurrently<T: Sendable, R: Sendable>(
            _ items: [T], width: Int = concurrentSyncs,
            _ body: @escaping @Sendable (T) async throws -> R
        ) async throws -> [R] {
            try await withThrowingTaskGroup(of: (Int, R).self) { group in
                var results = [R?](repeating: nil, count: items.count)
                var next = 0
                func startNext() {
                    guard next < items.count else { return }
                    let position = next
                    let item = items[next]
                    next += 1
                    group.addTask { (position, try await body(item)) }
                }
                for _ in 0..<width { startNext() }
                while let (position, result) = try await group.next() {
                    results[position] = result
                    startNext()
                }
                return results.map { $0! }
            }
        }

        /// R's median sync time divided by the change sets it applied.
        var perChangeSet: Double { median(readerTimes) / Double(active) }

        init(
            _ context: BenchContext, root: URL, makeRemote: @escaping @Sendable () throws -> any RemoteFileSystem,
            name: String, clients: Int, active: Int
        ) async throws {
            self.clients = clients
            self.active = active
            let folder = root.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let document = "\(name)-\(UUID().uuidString.prefix(8))"
            self.document = document
            // Each writer writes its row before its first sync, which registers it and publishes the row (a change
            // set R applies): every marker then names a set and acknowledges the sets published before it. Eight at a
            // time, as devices do: each sync waits on fsyncs far more than on the cores, and a writer registering
            // applies every set already published, so one at a time the set-up grew with the square of the clients.
            context.log(
                "\(name): \(clients - 1) writers register and publish a row each, \(Self.concurrentSyncs) at a time")
            // The first one alone: it creates the application's tree and the document, as the first device does. On
            // Apache, whose MOVE without overwrite is a check then a rename, two devices creating the document at the
            // same moment can both win (README, "WebDAV servers"): that race is not what this scenario measures.
            let register: @Sendable (Int) async throws -> Writer = { index in
                let client = Self.clientIdentifier(index)
                let store = try BenchSchema.items.openStore(folder.appendingPathComponent("\(client).sqlite").path)
                let manager = try await registerClient(
                    store: store, remote: try makeRemote(), client: client, document: document,
                    helper: folder.appendingPathComponent("\(client).helper"), manualPolicy: true)
                try await store.database.write { db in
                    try db.execute(
                        sql: "INSERT INTO items(id, c0) VALUES (?, ?)", arguments: [BenchSchema.rowID(index), "seed"])
                }
                try await manager.synchronize()
                return Writer(store: store, manager: manager)
            }
            let writers = try await [register(0)] + Self.concurrently(Array(1..<clients - 1), register)
            context.log("\(name): R registers and applies them")
            readerRemote = CountingFileSystem(try makeRemote())
            let readerClient = Self.clientIdentifier(Self.readerIndex)
            let readerStore = try BenchSchema.items.openStore(
                folder.appendingPathComponent("\(readerClient).sqlite").path)
            reader = try await registerClient(
                store: readerStore, remote: readerRemote, client: readerClient, document: document,
                helper: folder.appendingPathComponent("\(readerClient).helper"), manualPolicy: true)
            let catchUp = try await reader.synchronize()
            guard catchUp.changeSetsApplied == writers.count else {
                throw BenchError("\(name): R applied \(catchUp.changeSetsApplied) of \(writers.count) change sets")
            }
            self.writers = writers
        }

        /// Removes the document from the remote (a WebDAV server's folder outlives the run's work folder).
        func remove() async throws {
            let layout = try RemoteLayout(applicationIdentifier: BenchSchema.applicationIdentifier)
            try await readerRemote.base.remove(layout.documentDirectory(document))
        }

        /// `active` writers (the next ones in turn) each change their row and sync; then R syncs and must apply
        /// exactly their sets.
        func round(_ round: Int, counted: Bool) async throws {
            // The round's writers sync at once, as devices do; each one's time is its own sync's, slowed by the others.
            let turns = (0..<active).map { (round * active + $0) % writers.count }
            let times = try await Self.concurrently(turns, width: turns.count) { [writers] index in
                let writer = writers[index]
                try await writer.store.database.write { db in
                    try db.execute(
                        sql: "UPDATE items SET c1 = ? WHERE id = ?",
                        arguments: ["round \(round)", BenchSchema.rowID(index)])
                }
                let started = ContinuousClock.now
                try await writer.manager.synchronize()
                return (ContinuousClock.now - started).seconds
            }
            _ = readerRemote.take()
            // FOLDERSYNC_BENCH_PHASES=1 prints when R's sync enters each phase, as in scenario 2.
            let phases =
                ProcessInfo.processInfo.environment["FOLDERSYNC_BENCH_PHASES"] != nil
                ? Worker.tracePhases(reader, "R \(clients) clients") : nil
            let started = ContinuousClock.now
            let report = try await reader.synchronize()
            phases?.cancel()
            let seconds = (ContinuousClock.now - started).seconds
            let requests = readerRemote.take().requests
            guard report.changeSetsApplied == active else {
                throw BenchError("R applied \(report.changeSetsApplied) change sets, expected \(active)")
            }
            if counted {
                writerTimes += times
                readerTimes.append(seconds)
                readerRequests.append(requests)
                readerBytes.append(Double(report.bytesReceived))
            }
        }
    }
}
