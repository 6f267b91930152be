// A client process for multi-process, crash and kill-torture tests.
//
// `register` waits on standard input for "go", so that a test can release
// several processes at the same moment. `sync --crash-at POINT` kills the
// process with SIGKILL at a chosen point of a synchronization, using only
// the library's public seams (see KillSwitch.swift). `torture` runs the kill
// torture (Torture.swift): client processes of this executable
// (`torture-client`) killed at seeded random points. Results are reported
// through exit codes and standard output.
@_spi(Testing) @_spi(Tooling) import FolderSync
import Foundation
import GRDB

#if canImport(Glibc)
import Glibc
import Logging
#endif

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(1)
}

/// Parses `--name value` pairs.
func parseOptions(_ arguments: ArraySlice<String>) -> [String: String] {
    var arguments = arguments
    var options: [String: String] = [:]
    while let flag = arguments.popFirst() {
        guard flag.hasPrefix("--"), let value = arguments.popFirst() else { fail("bad argument \(flag)") }
        options[String(flag.dropFirst(2))] = value
    }
    return options
}

let command = CommandLine.arguments.dropFirst().first ?? ""
let options = parseOptions(CommandLine.arguments.dropFirst(2))
@Sendable func option(_ name: String) -> String {
    guard let value = options[name] else { fail("missing --\(name)") }
    return value
}

/// Says where it dies (unbuffered, so the test sees it), then dies as a power cut would.
@Sendable func crash(_ point: String) -> Never {
    FileHandle.standardOutput.write(Data("crashing at \(point)\n".utf8))
    kill(getpid(), SIGKILL)
    fatalError("unreachable")
}

func openStore() throws -> GRDBStore {
    try GRDBStore(path: option("db"), tables: [SyncedTable("items")]) { db in
        try db.execute(sql: "CREATE TABLE IF NOT EXISTS items(id TEXT PRIMARY KEY NOT NULL, value TEXT)")
    }
}

func register(store: GRDBStore?) async throws -> DocumentSyncManager {
    let remote = FileManagerFileSystem(rootURL: URL(fileURLWithPath: option("root")))
    var environment = SyncEnvironment.live
    environment.logger.logLevel = .error
    let app = ApplicationSyncManager(remote: remote, environment: environment)
    try await app.register(
        .init(
            applicationIdentifier: options["app"] ?? "com.example.race", clientIdentifier: option("client"),
            clientDescription: "worker"))
    let configuration = DocumentSyncManager.Configuration(
        documentIdentifier: option("document"), documentDescription: "worker",
        helperDirectory: URL(fileURLWithPath: options["helper"] ?? (option("db") + ".helper")))
    let document: DocumentSyncManager
    if let crashPoint = options["crash-at"] ?? options["pause-at"], let store {
        let killSwitch = KillSwitch(
            point: crashPoint, after: Int(options["crash-after"] ?? "0") ?? 0, pauseFIFO: options["pause-fifo"])
        document = try KillingDocumentSyncManager(
            applicationSyncManager: app, configuration: configuration,
            store: KillingStore(base: store, killSwitch: killSwitch), killSwitch: killSwitch)
    } else {
        document = try DocumentSyncManager(applicationSyncManager: app, configuration: configuration, store: store)
    }
    document.remoteDocumentCreationHandler = { _ in true }
    if let file = options["new-client-file"] {
        // Where a re-join after a shared identity keeps the new client identifier (the test passes it as --client
        // next).
        app.clientIdentifierChangeHandler = { identifier in
            try Data(identifier.utf8).write(to: URL(fileURLWithPath: file))
        }
    }
    try await document.registerConfigured()
    return document
}

/// The process's resident memory now, in bytes.
func residentBytes() -> Int {
    let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
    return (Int(statm.split(separator: " ").dropFirst().first ?? "") ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// The peak of this process's own resident memory (VmHWM), in bytes: getrusage's maxrss can carry the spawning
/// parent's over exec. Writing "5" to /proc/self/clear_refs resets it.
func peakResidentBytes() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
    return (Int(line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "") ?? 0) * 1024
}

do {
    switch command {
    case "register":
        _ = readLine()
        print(try await register(store: nil).integrityKey ?? "")
    case "write":
        // One transaction per item, like an app saving as the user types.
        let store = try openStore()
        let count = Int(option("count")) ?? 0
        for index in 0..<count {
            try store.database.write { db in
                try db.execute(
                    sql: "INSERT OR REPLACE INTO items(id, value) VALUES (?, ?)",
                    arguments: ["\(option("prefix"))-\(index)", option("value")])
            }
        }
    case "stream-change-set":
        // Reads a change set streaming and reports how much resident memory grew, measured in a process that
        // does nothing else (a test process runs other tests in parallel).
        let baseline = residentBytes()
        var peak = baseline
        var count = 0
        try ChangeSetReader.forEachChange(at: URL(fileURLWithPath: option("file")), path: option("file")) { _ in
            count += 1
            if count % 5000 == 0 { peak = max(peak, residentBytes()) }
        }
        print("changes \(count) growth \(peak - baseline)")
    case "encrypted-transfer":
        // Uploads a large file through an encrypted application and downloads it back, then reports the sealed size
        // and how much the peak resident memory grew: encryption must stream, not hold the file.
        let remote = FileManagerFileSystem(rootURL: URL(fileURLWithPath: option("remote")))
        let app = ApplicationSyncManager(remote: remote)
        app.encryptionHandler = { _ in .password("worker password") }
        try await app.register(
            .init(applicationIdentifier: "com.example.worker", clientIdentifier: "worker", clientDescription: "worker"))
        let path = try RemoteLayout(applicationIdentifier: "com.example.worker").wholeStoreFile("DOC", client: "worker")
        try await app.remote.createDirectory(at: path.parent)
        let baseline = residentBytes()
        try await app.remote.upload(fromLocalFile: URL(fileURLWithPath: option("file")), to: path)
        try await app.remote.download(path, toLocalFile: URL(fileURLWithPath: option("file") + ".back"))
        let peak = peakResidentBytes()
        print("sealed \(try await app.underlyingRemote.item(at: path)?.size ?? 0) growth \(peak - baseline)")
    case "exchange-attachment":
        // Two clients exchange one attached file of --size bytes through --root; prints how much the peak resident
        // memory rose above the baseline (VmHWM, reset after setup), and what the remote holds.
        let size = Int(option("size"))!
        let directory = URL(fileURLWithPath: option("dir"))
        let remote = FileManagerFileSystem(rootURL: URL(fileURLWithPath: option("root")))
        func client(_ name: String) async throws -> (DocumentSyncManager, GRDBStore) {
            var environment = SyncEnvironment.live
            environment.logger.logLevel = .error
            let store = try GRDBStore(
                path: directory.appendingPathComponent("\(name).sqlite").path, tables: [SyncedTable("items")]
            ) { db in
                try db.execute(sql: "CREATE TABLE IF NOT EXISTS items(id TEXT PRIMARY KEY NOT NULL, value BLOB)")
            }
            let app = ApplicationSyncManager(remote: remote, environment: environment)
            try await app.register(
                .init(
                    applicationIdentifier: "com.example.notes", clientIdentifier: "client-\(name)",
                    clientDescription: name))
            let document = try await DocumentSyncManager(
                applicationSyncManager: app,
                registering: .init(
                    documentIdentifier: "DOC", documentDescription: "worker",
                    helperDirectory: directory.appendingPathComponent("\(name).helper")),
                store: store, remoteDocumentCreationHandler: { _ in true })
            return (document, store)
        }
        let (a, storeA) = try await client("A")
        let (b, _) = try await client("B")
        let file = directory.appendingPathComponent("movie.bin")
        try Data().write(to: file)
        let output = try FileHandle(forWritingTo: file)
        var state: UInt64 = 42
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        for offset in stride(from: 0, to: size, by: chunk.count) {
            for index in stride(from: 0, to: chunk.count, by: 8) {
                state &+= 0x9E37_79B9_7F4A_7C15
                var z = (state ^ (state >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                withUnsafeBytes(of: z ^ (z >> 31)) { chunk.replaceSubrange(index..<index + 8, with: $0) }
            }
            try output.write(contentsOf: Data(chunk.prefix(min(chunk.count, size - offset))))
        }
        try output.close()
        try "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)  // resets VmHWM
        let baseline = residentBytes()
        let reference = try a.attachFile(at: file, mode: .copy, metadata: ["name": "movie.bin"])
        try storeA.database.write {
            try $0.execute(sql: "INSERT INTO items VALUES ('movie', ?)", arguments: [reference.databaseValue])
        }
        let sent = try await a.synchronize()
        let received = try await b.synchronize()
        let copy = try await b.requestDownload(for: reference)  // verifies B's copy by its SHA-256
        let peak = peakResidentBytes()
        let stored = URL(fileURLWithPath: option("root")).appendingPathComponent(
            "com.example.notes/Documents/DOC/Attachments")
        let names = try FileManager.default.contentsOfDirectory(atPath: stored.path)
        let bytes = try names.reduce(0) {
            $0
                + (try FileManager.default.attributesOfItem(atPath: stored.appendingPathComponent($1).path)[.size]
                    as? Int ?? 0)
        }
        print(
            "growth \(peak - baseline) uploaded \(sent.attachmentsUploaded) downloaded \(received.attachmentsDownloaded) files \(names.count) bytes \(bytes) same \(copy.path != file.path)"
        )
    case "sync":
        let store = try openStore()
        if let half = options["kill-in-page-install"] {
            // Dies in the middle of a whole store's page copy (after `half` of its pages, one page per step).
            store.pageInstallPagesPerStep = 1
            let fraction = Double(half) ?? 0.5
            store.pageInstallStepObserver = { copied, total in
                if Double(copied) >= Double(total) * fraction { crash("page-install \(copied)/\(total)") }
            }
        }
        let document = try await register(store: store)
        let report = try await document.synchronize()
        let uploaded = options["upload-whole-store"] == "yes" ? try await document.uploadWholeStore() : nil
        print(
            "sent \(report.changeSetsSent) applied \(report.changeSetsApplied)"
                + (report.installedWholeStore == nil ? "" : " installed") + (uploaded == nil ? "" : " uploaded"))
    case "schema":
        // One step of a notes app at schema version 1 to 4 (SchemaVersions.swift), for "Changing a synced schema".
        try await SchemaVersions.run(option, options)
    case "rejoin":
        // Re-joins after the reset the last sync stopped on (remembered in the helper folder).
        let document = try await register(store: try openStore())
        let report = try await document.rejoin()
        print(
            "rejoined as \(document.clientIdentifier) sent \(report.changeSetsSent) applied \(report.changeSetsApplied)"
        )
    case "torture":
        // The kill torture (Torture.swift); prints its figures, exits 1 on a lost write, divergence or error.
        let directory =
            options["dir"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("foldersync-torture-\(UUID().uuidString)")
        let torture = Torture(
            kills: Int(options["kills"] ?? "200") ?? 200, clients: Int(options["clients"] ?? "3") ?? 3,
            seed: UInt64(options["seed"] ?? "1") ?? 1, directory: directory)
        let passed = try torture.run()
        if passed && options["dir"] == nil { try? FileManager.default.removeItem(at: directory) }
        if !passed { fail("kill torture failed; its folder is kept at \(directory.path)") }
    case "torture-client":
        let client = TortureClient(
            root: URL(fileURLWithPath: option("root")), client: option("client"),
            directory: URL(fileURLWithPath: option("dir")))
        let events = try await client.run(
            seed: UInt64(option("seed")) ?? 0, steps: Int(option("steps")) ?? 0,
            killAfter: Int(option("kill-after")), settle: option("settle") == "yes",
            outage: options["outage"] == "yes")
        print("events \(events)")
    default:
        fail("unknown command \(command)")
    }
} catch {
    fail("\(error)")
}
