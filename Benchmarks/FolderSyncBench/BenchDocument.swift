import FolderSync
import FolderSyncWebDAV
import Foundation
import GRDB
import Logging

/// The benchmark's data, opened and registered through the public API as an app does.
enum BenchSchema: String, Sendable {
    /// `items`: a text ID and 10 columns (scenarios 1, 2, 4).
    case items
    /// `docs`: a text ID and one ~190-byte body, about 1 GB for 5,000,000 rows (scenarios 3, 5).
    case docs
    /// `notes`: a text ID, a title and a body of about 380 bytes, a notes app's table (scenario 9).
    case notes

    static let itemColumns = (0..<10).map { "c\($0)" }
    static let applicationIdentifier = "com.example.bench"

    var createSQL: String {
        switch self {
        case .items:
            "CREATE TABLE IF NOT EXISTS items(id TEXT PRIMARY KEY NOT NULL, \(Self.itemColumns.map { "\($0) TEXT" }.joined(separator: ", ")))"
        case .docs:
            "CREATE TABLE IF NOT EXISTS docs(id TEXT PRIMARY KEY NOT NULL, body TEXT)"
        case .notes:
            "CREATE TABLE IF NOT EXISTS notes(id TEXT PRIMARY KEY NOT NULL, title TEXT, body TEXT)"
        }
    }

    /// Opens the store at `path`: a queue, or a pool (`connection`) for an app that reads while it syncs.
    func openStore(_ path: String, connection: GRDBStore.Connection = .queue) throws -> GRDBStore {
        try GRDBStore(path: path, tables: [SyncedTable(rawValue)], connection: connection) { db in
            try db.execute(sql: createSQL)
        }
    }

    /// Creates the same table without FolderSync: the floor's database.
    func createPlain(_ db: Database) throws { try db.execute(sql: createSQL) }

    /// Row `index`'s ID, the same in every run.
    static func rowID(_ index: Int) -> String { String(format: "row-%09d", index) }

    /// The value of a column in row `index` at `version`: 24 varied characters.
    static func itemValue(_ index: Int, column: Int, version: Int) -> String {
        "v\(version)-\(index &* 2_654_435_761 &+ column &* 40_503 & 0xFFFF_FFFF)-\(column)-\(index)"
    }

    /// A body of about 190 bytes that compresses like text (not all alike, not random).
    static func docBody(_ index: Int, version: Int = 0) -> String {
        var state = UInt64(
            truncatingIfNeeded: index &* 6_364_136_223_846_793_005 &+ version &+ 1_442_695_040_888_963_407)
        var words: [String] = []
        let vocabulary = [
            "sync", "folder", "change", "set", "whole", "store", "client", "device", "note", "merge", "clock",
            "row", "column", "value", "apply", "publish", "marker", "vacuum", "bootstrap", "snapshot",
        ]
        var length = 0
        while length < 180 {
            state = state &* 6_364_136_223_846_793_005 &+ 1
            let word =
                (state >> 33) % 3 == 0
                ? String(state >> 40, radix: 36) : vocabulary[Int(state >> 35) % vocabulary.count]
            words.append(word)
            length += word.count + 1
        }
        return "\(index) " + words.joined(separator: " ")
    }

    static func noteTitle(_ index: Int) -> String { "Note \(index)" }

    /// A note's body: two paragraphs of ``docBody(_:version:)``, about 380 bytes.
    static func noteBody(_ index: Int, version: Int = 0) -> String {
        docBody(index, version: version) + "\n" + docBody(index, version: version &+ 1_000_003)
    }
}

/// Registers a client with the application and the document, as an app does at launch.
func registerClient(
    store: GRDBStore?, remote: any RemoteFileSystem, client: String, document: String,
    helper: URL, manualPolicy: Bool, password: String? = nil
) async throws -> DocumentSyncManager {
    var environment = SyncEnvironment.live
    environment.logger.logLevel = .error
    let app = ApplicationSyncManager(remote: remote, environment: environment)
    if let password { app.encryptionHandler = { _ in .password(password) } }
    try await app.register(
        .init(
            applicationIdentifier: BenchSchema.applicationIdentifier, clientIdentifier: client,
            clientDescription: "bench \(client)"))
    let manager = try await DocumentSyncManager(
        applicationSyncManager: app,
        registering: .init(documentIdentifier: document, documentDescription: "bench", helperDirectory: helper),
        store: store, remoteDocumentCreationHandler: { _ in true })
    if manualPolicy {
        // The scenario decides when whole stores are uploaded: change sets stay in the folder, nothing is vacuumed.
        var policy = manager.policy
        policy.wholeStoreUploadAfterChangeSets = nil
        policy.wholeStoreUploadAfterBytes = nil
        policy.vacuumsAfterWholeStoreUpload = false
        manager.policy = policy
    }
    return manager
}

/// A folder path or a WebDAV URL (credentials in the URL), wrapped so that requests are counted.
func openRemote(_ location: String) throws -> CountingFileSystem {
    CountingFileSystem(try RemoteLocation.fileSystem(for: location))
}
