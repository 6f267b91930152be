import FolderSync
import Foundation
import GRDB

/// The figures a worker prints as one line of JSON, and its peak memory (filled in by the parent).
struct WorkerOutput: Codable, Sendable {
    var figures: [String: Double] = [:]
    var maxResidentBytes: Int64 = 0

    subscript(_ name: String) -> Double { figures[name] ?? 0 }
}

/// One client as a process of its own, so that its peak memory is its own.
///
/// `worker client --db PATH --remote LOCATION --client ID --document ID --schema items|docs|notes
///  [--rows N] [--updated-values N] [--manual-policy] [--password PASSWORD] [--plain] [--pool] --steps STEP[:LABEL],…`
///
/// Steps run in order: `write` (insert `--rows` rows), `update` (update `--updated-values` column values), `change-one`
/// (one column of one row), `sync`, `sync-reading` (a sync while a view refreshes, ``ViewRefreshes``), `reads` (as many
/// view refreshes with no sync running), `upload` (a whole store), `vacuum` (of the SQLite file), and, first or not at
/// all, `join` (a new device: `DocumentSyncManager.openStore(at:_:)` on a missing file, then its first sync). Each
/// reports `LABEL.seconds` and, for syncs, what the sync report and the request counter say; a join, how long its open
/// took and the rows it has.
enum Worker {
    static func run(_ arguments: [String]) async throws {
        let options = try WorkerOptions(arguments)
        let schema = try options.schema()
        let path = try options.require("db")
        // Opened at once, unless the first step is a join, which opens it through its manager; with --plain (to profile
        // scenario 7's floor) no store is opened, and `write` and `update` go to a plain database at the same path.
        let plain = options.flags.contains("plain") ? try CaptureOverheadScenario.openPlain(path, schema: schema) : nil
        let connection: GRDBStore.Connection = options.flags.contains("pool") ? .pool : .queue
        var opened =
            try options.require("steps").hasPrefix("join") || plain != nil
            ? nil : try schema.openStore(path, connection: connection)
        var output = WorkerOutput()
        var remote: CountingFileSystem?
        var manager: DocumentSyncManager?
        var readsDuringLastSync = 0

        func store() throws -> GRDBStore {
            guard let opened else { throw BenchError("the store is not open: a join must come first") }
            return opened
        }

        func database() throws -> any DatabaseWriter { try plain.map { $0 as any DatabaseWriter } ?? store().database }

        func registered() async throws -> (DocumentSyncManager, CountingFileSystem) {
            if let manager, let remote { return (manager, remote) }
            let counting = try openRemote(try options.require("remote"))
            let started = ContinuousClock.now
            let document = try await registerClient(
                store: opened, remote: counting, client: try options.require("client"),
                document: try options.require("document"),
                helper: URL(fileURLWithPath: path + ".helper"),
                manualPolicy: options.flags.contains("manual-policy"),
                password: options.values["password"])
            output.figures["register.seconds"] = (ContinuousClock.now - started).seconds
            _ = counting.take()
            (manager, remote) = (document, counting)
            return (document, counting)
        }

        for step in try options.require("steps").split(separator: ",") {
            let parts = step.split(separator: ":", maxSplits: 1).map(String.init)
            let name = parts[0]
            let label = parts.count > 1 ? parts[1] : name
            let started = ContinuousClock.now
            switch name {
            case "write":
                try write(try database(), schema: schema, rows: options.int("rows"))
            case "update":
                try update(try database(), rows: options.int("rows"), values: options.int("updated-values"))
            case "change-one":
                try await store().database.write { db in
                    switch schema {
                    case .items:
                        try db.execute(
                            sql: "UPDATE items SET c3 = ? WHERE id = ?",
                            arguments: [UUID().uuidString, BenchSchema.rowID(1)])
                    case .docs:
                        try db.execute(
                            sql: "UPDATE docs SET body = ? WHERE id = ?",
                            arguments: [
                                BenchSchema.docBody(1, version: Int.random(in: 1...1_000_000)), BenchSchema.rowID(1),
                            ])
                    case .notes:
                        try db.execute(
                            sql: "UPDATE notes SET body = ? WHERE id = ?",
                            arguments: [
                                BenchSchema.noteBody(1, version: Int.random(in: 1...1_000_000)), BenchSchema.rowID(1),
                            ])
                    }
                }
            case "sync", "sync-reading":
                let (document, counting) = try await registered()
                // An app's view refreshing while the sync applies (scenario 12): reads on a thread of their own.
                let reads =
                    name == "sync-reading"
                    ? try ViewRefreshes(try store(), schema: schema, rows: options.int("rows")) : nil
                let phases =
                    ProcessInfo.processInfo.environment["FOLDERSYNC_BENCH_PHASES"] != nil
                    ? tracePhases(document, label) : nil
                let syncStarted = ContinuousClock.now
                let cpuStarted = processCPUSeconds()
                var windowStart = timespec()
                clock_gettime(CLOCK_MONOTONIC, &windowStart)
                let report = try await document.synchronize()
                if let reads {
                    let latencies = reads.stop()
                    readsDuringLastSync = latencies.seconds.count
                    output.figures.merge(latencies.figures(label)) { _, new in new }
                }
                output.figures["\(label).cpuSeconds"] = processCPUSeconds() - cpuStarted
                var windowEnd = timespec()
                clock_gettime(CLOCK_MONOTONIC, &windowEnd)
                // For profiling: the sync's window on CLOCK_MONOTONIC, for `perf record -k CLOCK_MONOTONIC` and
                // `perf script --time START,END`.
                if ProcessInfo.processInfo.environment["FOLDERSYNC_BENCH_WINDOW"] != nil {
                    FileHandle.standardError.write(
                        Data(
                            "WINDOW \(windowStart.tv_sec).\(String(format: "%09d", windowStart.tv_nsec)) \(windowEnd.tv_sec).\(String(format: "%09d", windowEnd.tv_nsec))\n"
                                .utf8))
                }
                phases?.cancel()
                output.figures["\(label).seconds"] = (ContinuousClock.now - syncStarted).seconds
                let counts = counting.take()
                output.figures["\(label).requests"] = Double(counts.requests)
                output.figures["\(label).changeSetReads"] = Double(counts.changeSetReads)
                output.figures["\(label).bytesSent"] = Double(report.bytesSent)
                output.figures["\(label).bytesReceived"] = Double(report.bytesReceived)
                output.figures["\(label).changeSetsSent"] = Double(report.changeSetsSent)
                output.figures["\(label).changeSetsApplied"] = Double(report.changeSetsApplied)
                output.figures["\(label).changesApplied"] = Double(report.changesApplied)
                output.figures["\(label).installedWholeStore"] = report.installedWholeStore == nil ? 0 : 1
                continue
            case "join":
                // A new device: its store opened from the remote's whole store, then its first sync; timed together.
                let (document, _) = try await registered()
                let joinStarted = ContinuousClock.now
                let joined = try await document.openStore(at: URL(fileURLWithPath: path)) {
                    try schema.openStore($0.path)
                }
                output.figures["\(label).openSeconds"] = (ContinuousClock.now - joinStarted).seconds
                try await document.synchronize()
                output.figures["\(label).seconds"] = (ContinuousClock.now - joinStarted).seconds
                opened = joined
                output.figures["\(label).rows"] = Double(
                    try await joined.database.read {
                        try Int.fetchOne($0, sql: "SELECT count(*) FROM \(schema.rawValue)")
                    } ?? 0)
                continue
            case "reads":
                // The same view refreshes with no sync running, as many as ran during the last sync (at least 200).
                let reads = try ViewRefreshes(
                    try store(), schema: schema, rows: options.int("rows"), count: max(200, readsDuringLastSync))
                output.figures.merge(reads.stop().figures(label)) { _, new in new }
            case "vacuum":
                // App maintenance: the pages freed when published changes left the pending table go back.
                try await store().database.writeWithoutTransaction { try $0.execute(sql: "VACUUM") }
            case "upload":
                let (document, _) = try await registered()
                guard try await document.uploadWholeStore() != nil else {
                    throw BenchError("no whole store uploaded: changes unpublished")
                }
            default:
                throw BenchError("unknown step \(name)")
            }
            output.figures["\(label).seconds"] = (ContinuousClock.now - started).seconds
        }
        print(String(decoding: try JSONEncoder().encode(output), as: UTF8.self))
    }

    /// The CPU time of this process so far, every thread's, user and system (`getrusage`): a sync's CPU time,
    /// reported beside its wall time, moves less with the machine's load.
    static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// For profiling (`FOLDERSYNC_BENCH_PHASES=1`): prints when each phase of the sync begins, on standard error.
    static func tracePhases(_ document: DocumentSyncManager, _ label: String) -> Task<Void, Never> {
        let events = document.events()
        return Task {
            let started = ContinuousClock.now
            for await event in events {
                guard case .phase(let phase) = event else { continue }
                let milliseconds = (ContinuousClock.now - started).seconds * 1000
                FileHandle.standardError.write(
                    Data(String(format: "%@ %8.1f ms %@\n", label, milliseconds, "\(phase)").utf8))
            }
        }
    }

    /// Inserts `rows` rows, as an app importing data does: prepared statements, transactions of 100,000 rows.
    /// `database` is a store's (``GRDBStore/database``) or, for scenario 7's floor, a plain one.
    static func write(_ database: any DatabaseWriter, schema: BenchSchema, rows: Int) throws {
        for start in stride(from: 0, to: rows, by: 100_000) {
            try database.write { db in
                switch schema {
                case .items:
                    let columns = BenchSchema.itemColumns
                    let insert = try db.makeStatement(
                        sql:
                            "INSERT INTO items(id, \(columns.joined(separator: ", "))) VALUES (?\(String(repeating: ", ?", count: columns.count)))"
                    )
                    for index in start..<min(rows, start + 100_000) {
                        try insert.execute(
                            arguments: StatementArguments(
                                [BenchSchema.rowID(index)]
                                    + columns.indices.map { BenchSchema.itemValue(index, column: $0, version: 0) }))
                    }
                case .docs:
                    let insert = try db.makeStatement(sql: "INSERT INTO docs(id, body) VALUES (?, ?)")
                    for index in start..<min(rows, start + 100_000) {
                        try insert.execute(arguments: [BenchSchema.rowID(index), BenchSchema.docBody(index)])
                    }
                case .notes:
                    let insert = try db.makeStatement(sql: "INSERT INTO notes(id, title, body) VALUES (?, ?, ?)")
                    for index in start..<min(rows, start + 100_000) {
                        try insert.execute(arguments: [
                            BenchSchema.rowID(index), BenchSchema.noteTitle(index), BenchSchema.noteBody(index),
                        ])
                    }
                }
            }
        }
    }

    /// Updates `values` column values of `items`: every column of the first rows, again from the start
    /// when there are more values than cells, in transactions of 10,000 rows.
    static func update(_ database: any DatabaseWriter, rows: Int, values: Int) throws {
        let columns = BenchSchema.itemColumns
        let rowUpdates = values / columns.count
        for start in stride(from: 0, to: rowUpdates, by: 10_000) {
            try database.write { db in
                let statement = try db.makeStatement(
                    sql: "UPDATE items SET \(columns.map { "\($0) = ?" }.joined(separator: ", ")) WHERE id = ?")
                for update in start..<min(rowUpdates, start + 10_000) {
                    let index = update % rows
                    let version = 1 + update / rows
                    try statement.execute(
                        arguments: StatementArguments(
                            columns.indices.map { BenchSchema.itemValue(index, column: $0, version: version) } + [
                                BenchSchema.rowID(index)
                            ]))
                }
            }
        }
    }
}

/// `--name value` pairs and bare `--flag`s.
struct WorkerOptions {
    var values: [String: String] = [:]
    var flags: Set<String> = []

    init(_ arguments: [String]) throws {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            guard argument.hasPrefix("--") else { throw BenchError("unexpected argument \(argument)") }
            let name = String(argument.dropFirst(2))
            if index + 1 < arguments.count, !arguments[index + 1].hasPrefix("--") {
                values[name] = arguments[index + 1]
                index += 2
            } else {
                flags.insert(name)
                index += 1
            }
        }
    }

    func require(_ name: String) throws -> String {
        guard let value = values[name] else { throw BenchError("missing --\(name)") }
        return value
    }

    func int(_ name: String) throws -> Int {
        guard let value = Int(try require(name)) else { throw BenchError("--\(name) needs a number") }
        return value
    }

    func schema() throws -> BenchSchema {
        guard let schema = BenchSchema(rawValue: try require("schema")) else {
            throw BenchError("--schema is items, docs or notes")
        }
        return schema
    }
}
