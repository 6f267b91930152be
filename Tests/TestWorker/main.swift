// A client process for multi-process, crash and kill-torture tests.
//
// `register` waits on standard input for "go", so that a test can release
// several processes at the same moment. `sync --crash-at POINT` kills the
// process with SIGKILL at a chosen point of a synchronization, using only
// the library's public seams (see KillSwitch.swift). `torture` runs the kill
// torture (Torture.swift): client processes of this executable
// (`torture-client`) killed at seeded random points. Results are reported
// through exit codes and standard output.
import FolderSync
import Foundation
import GRDB
#if canImport(Glibc)
import Glibc
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
    try await app.register(.init(applicationIdentifier: options["app"] ?? "com.example.race", clientIdentifier: option("client"),
                                 clientDescription: "worker"))
    let configuration = DocumentSyncManager.Configuration(
        documentIdentifier: option("document"), documentDescription: "worker",
        helperDirectory: URL(fileURLWithPath: options["helper"] ?? (option("db") + ".helper")))
    let document: DocumentSyncManager
    if let crashPoint = options["crash-at"], let store {
        let killSwitch = KillSwitch(point: crashPoint, after: Int(options["crash-after"] ?? "0") ?? 0)
        document = try KillingDocumentSyncManager(applicationSyncManager: app, configuration: configuration,
                                                  store: KillingStore(base: store, killSwitch: killSwitch), killSwitch: killSwitch)
    } else {
        document = try DocumentSyncManager(applicationSyncManager: app, configuration: configuration, store: store)
    }
    document.remoteDocumentCreationHandler = { _ in true }
    try await document.registerConfigured()
    return document
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
                try db.execute(sql: "INSERT OR REPLACE INTO items(id, value) VALUES (?, ?)",
                               arguments: ["\(option("prefix"))-\(index)", option("value")])
            }
        }
    case "stream-change-set":
        // Reads a change set streaming and reports how much resident memory grew, measured in a process that
        // does nothing else (a test process runs other tests in parallel).
        func residentBytes() -> Int {
            let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
            return (Int(statm.split(separator: " ").dropFirst().first ?? "") ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
        }
        let baseline = residentBytes()
        var peak = baseline, count = 0
        try ChangeSetReader.forEachChange(at: URL(fileURLWithPath: option("file")), path: option("file")) { _ in
            count += 1
            if count % 5000 == 0 { peak = max(peak, residentBytes()) }
        }
        print("changes \(count) growth \(peak - baseline)")
    case "sync":
        let report = try await register(store: try openStore()).synchronize()
        print("sent \(report.changeSetsSent) applied \(report.changeSetsApplied)")
    case "torture":
        // The kill torture (Torture.swift); prints its figures, exits 1 on a lost write, divergence or error.
        let directory = options["dir"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("foldersync-torture-\(UUID().uuidString)")
        let torture = Torture(kills: Int(options["kills"] ?? "200") ?? 200, clients: Int(options["clients"] ?? "3") ?? 3,
                              seed: UInt64(options["seed"] ?? "1") ?? 1, directory: directory)
        let passed = try torture.run()
        if passed && options["dir"] == nil { try? FileManager.default.removeItem(at: directory) }
        if !passed { fail("kill torture failed; its folder is kept at \(directory.path)") }
    case "torture-client":
        let client = TortureClient(root: URL(fileURLWithPath: option("root")), client: option("client"),
                                   directory: URL(fileURLWithPath: option("dir")))
        let events = try await client.run(seed: UInt64(option("seed")) ?? 0, steps: Int(option("steps")) ?? 0,
                                          killAfter: Int(option("kill-after")), settle: option("settle") == "yes")
        print("events \(events)")
    default:
        fail("unknown command \(command)")
    }
} catch {
    fail("\(error)")
}
