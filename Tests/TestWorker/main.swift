// A client process for multi-process and crash tests.
//
// `register` waits on standard input for "go", so that a test can release
// several processes at the same moment. `sync --crash-at POINT` kills the
// process with SIGKILL at a chosen point of a synchronization, using only
// the library's public seams: a wrapping ModelAdapter (inside the staging and
// apply transactions) and a SynchronizationOperation subclass (between an
// upload and its bookkeeping). Results are reported through exit codes and
// standard output.
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

func register(store: (any ModelAdapter)?) async throws -> DocumentSyncManager {
    let remote = FileManagerFileSystem(rootURL: URL(fileURLWithPath: option("root")))
    var environment = SyncEnvironment.live
    environment.logger.logLevel = .error
    let app = ApplicationSyncManager(remote: remote, environment: environment)
    try await app.register(.init(applicationIdentifier: options["app"] ?? "com.example.race", clientIdentifier: option("client"),
                                 clientDescription: "worker"))
    let configuration = DocumentSyncManager.Configuration(
        documentIdentifier: option("document"), documentDescription: "worker",
        helperDirectory: URL(fileURLWithPath: options["helper"] ?? (option("db") + ".helper")))
    let crashPoint = options["crash-at"], crashAfter = Int(options["crash-after"] ?? "0") ?? 0
    let document: DocumentSyncManager
    if let crashPoint, let store {
        document = try CrashingDocumentSyncManager(applicationSyncManager: app, configuration: configuration,
                                                   store: CrashingStore(base: store, point: crashPoint, after: crashAfter),
                                                   point: crashPoint, after: crashAfter)
    } else {
        document = try DocumentSyncManager(applicationSyncManager: app, configuration: configuration, store: store)
    }
    document.remoteDocumentCreationHandler = { _ in true }
    try await document.registerConfigured()
    return document
}

/// The process's resident memory now, in bytes.
func residentBytes() -> Int {
    let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
    return (Int(statm.split(separator: " ").dropFirst().first ?? "") ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
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
        let baseline = residentBytes()
        var peak = baseline, count = 0
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
        try await app.register(.init(applicationIdentifier: "com.example.worker", clientIdentifier: "worker", clientDescription: "worker"))
        let path = try RemoteLayout(applicationIdentifier: "com.example.worker").wholeStoreFile("DOC", client: "worker")
        try await app.remote.createDirectory(at: path.parent)
        let baseline = residentBytes()
        try await app.remote.upload(fromLocalFile: URL(fileURLWithPath: option("file")), to: path)
        try await app.remote.download(path, toLocalFile: URL(fileURLWithPath: option("file") + ".back"))
        // VmHWM, the peak of this process's own memory: getrusage's maxrss can carry the spawning parent's over exec.
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let peakLine = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
        let peak = (Int(peakLine.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "") ?? 0) * 1024
        print("sealed \(try await app.underlyingRemote.item(at: path)?.size ?? 0) growth \(peak - baseline)")
    case "sync":
        let report = try await register(store: try openStore()).synchronize()
        print("sent \(report.changeSetsSent) applied \(report.changeSetsApplied)")
    default:
        fail("unknown command \(command)")
    }
} catch {
    fail("\(error)")
}

/// Delegates to the real store, and dies inside its transactions at the chosen point.
final class CrashingStore: ModelAdapter, @unchecked Sendable {
    let base: any ModelAdapter
    let point: String
    let after: Int

    init(base: any ModelAdapter, point: String, after: Int) {
        self.base = base
        self.point = point
        self.after = after
    }

    var schemaVersion: Int { base.schemaVersion }
    func loadSyncState() throws -> LocalSyncState { try base.loadSyncState() }
    func saveSyncState(_ state: LocalSyncState) throws { try base.saveSyncState(state) }
    func markPublished(throughSequence sequence: Int64) throws { try base.markPublished(throughSequence: sequence) }
    func hasUnpublishedChanges() throws -> Bool { try base.hasUnpublishedChanges() }
    func appliedChangeSets() throws -> [String: Set<Int64>] { try base.appliedChangeSets() }
    func conflicts(author: String, localClient: String, changes: ChangeStream) throws -> [SyncConflict] {
        try base.conflicts(author: author, localClient: localClient, changes: changes)
    }

    func stageChanges(sequence: Int64, emit: (SyncChange) throws -> Void, seal: () throws -> Int64) throws -> Int {
        var emitted = 0
        return try base.stageChanges(sequence: sequence, emit: { change in
            try emit(change)
            emitted += 1
            if point == "staging" && emitted > after { crash("staging") }
        }, seal: {
            let last = try seal()
            if point == "sealed" { crash("sealed") } // files durable, transaction not committed
            return last
        })
    }

    func apply(_ header: ChangeSetHeader, localClient: String, changes: ChangeStream,
               resolutions: [ColumnKey: ConflictResolution]) throws -> ApplyOutcome {
        var applied = 0
        return try base.apply(header, localClient: localClient, changes: { body in
            try withoutActuallyEscaping(body) { body in
                try changes { change in
                    try body(change)
                    applied += 1
                    if point == "applying" && applied > after { crash("applying") }
                }
            }
        }, resolutions: resolutions)
    }
}

/// Builds synchronizations that die after an upload, before its bookkeeping.
final class CrashingDocumentSyncManager: DocumentSyncManager, @unchecked Sendable {
    let point: String
    let after: Int

    init(applicationSyncManager: ApplicationSyncManager, configuration: Configuration, store: any ModelAdapter,
         point: String, after: Int) throws {
        self.point = point
        self.after = after
        try super.init(applicationSyncManager: applicationSyncManager, configuration: configuration, store: store)
    }

    override func synchronizationOperation(integrityKey: String, store: any ModelAdapter) -> SynchronizationOperation {
        let operation = super.synchronizationOperation(integrityKey: integrityKey, store: store)
        return CrashingSynchronizationOperation(copying: operation, point: point, after: after)
    }
}

final class CrashingSynchronizationOperation: SynchronizationOperation, @unchecked Sendable {
    let point: String
    let after: Int
    private var published = 0

    init(copying operation: SynchronizationOperation, point: String, after: Int) {
        self.point = point
        self.after = after
        super.init(fileSystem: operation.fileSystem, layout: operation.layout, documentIdentifier: operation.documentIdentifier,
                   clientIdentifier: operation.clientIdentifier, integrityKey: operation.integrityKey, store: operation.store,
                   localLayout: operation.localLayout, environment: operation.environment, resolver: nil, emit: { _ in })
    }

    override func publishChangeSet(from url: URL, name: String) async throws {
        try await super.publishChangeSet(from: url, name: name)
        published += 1
        if point == "published" && published > after { crash("published") }
    }

    override func writeRecentSync(_ data: Data) async throws {
        if point == "recent-sync" { crash("recent-sync") }
        try await super.writeRecentSync(data)
    }
}
