import FolderSyncTesting
import Foundation
import Logging

@_spi(Tooling) @testable import FolderSync

/// Deterministic identifiers and time, so registered trees can be compared byte for byte with the golden tree.
enum Fixture {
    static let application = "com.example.notes"
    static let clientA = "AAAAAAAA-AAAA-4AAA-8AAA-AAAAAAAAAAAA"
    static let clientB = "BBBBBBBB-BBBB-4BBB-8BBB-BBBBBBBBBBBB"
    static let document = "DDDDDDDD-DDDD-4DDD-8DDD-DDDDDDDDDDDD"
    static let date = Date(timeIntervalSince1970: 1_767_323_045)  // 2026-01-02T03:04:05Z

    /// A fixed clock and identifiers `00000000-0000-4000-8000-000000000001`, `…002`…, counting per environment.
    static func environment() -> SyncEnvironment {
        let counter = Locked(0)
        var logger = Logger(label: "FolderSyncTests")
        logger.logLevel = .error
        return SyncEnvironment(
            now: { date },
            makeIdentifier: {
                let n = counter.withLock {
                    $0 += 1
                    return $0
                }
                let digits = String(n)
                return "00000000-0000-4000-8000-" + String(repeating: "0", count: 12 - digits.count) + digits
            },
            logger: logger)
    }

    static func application(
        _ remote: any RemoteFileSystem, client: String, description: String? = nil,
        environment: SyncEnvironment = Fixture.environment()
    ) -> (ApplicationSyncManager, ApplicationSyncManager.Configuration) {
        let manager = ApplicationSyncManager(remote: remote, environment: environment)
        let configuration = ApplicationSyncManager.Configuration(
            applicationIdentifier: application, clientIdentifier: client,
            clientDescription: description ?? "Device \(client.prefix(1))", userInfo: ["model": "test"])
        return (manager, configuration)
    }

    static func documentConfiguration(helper: URL, document: String = Fixture.document)
        -> DocumentSyncManager.Configuration
    {
        .init(
            documentIdentifier: document, documentDescription: "Notes", userInfo: ["kind": "notes"],
            helperDirectory: helper)
    }

    /// Registers `client` with the application and the document, creating the document if asked.
    @discardableResult
    static func register(
        _ remote: any RemoteFileSystem, client: String, helper: URL,
        environment: SyncEnvironment = Fixture.environment()
    ) async throws -> DocumentSyncManager {
        let (app, configuration) = application(remote, client: client, environment: environment)
        try await app.register(configuration)
        return try await DocumentSyncManager(
            applicationSyncManager: app, registering: documentConfiguration(helper: helper),
            remoteDocumentCreationHandler: { _ in true })
    }

    /// A relaunch of `client`, which registered before: it comes up from its helper folder without the remote, and
    /// its first sync registers with the remote, where a reset, a deletion or a replaced document shows.
    static func relaunchAndSync(
        _ remote: any RemoteFileSystem, client: String, helper: URL,
        environment: SyncEnvironment = Fixture.environment()
    ) async throws {
        let (app, configuration) = application(remote, client: client, environment: environment)
        try app.configure(configuration)
        let store = InMemoryModelAdapter(tables: [.init("notes", columns: ["title"])])
        let document = try DocumentSyncManager(
            applicationSyncManager: app, configuration: documentConfiguration(helper: helper), store: store)
        guard document.remembersRegistration else {
            throw FolderSyncError(.notRegistered, "\(client) never registered in \(helper.path)")
        }
        try await document.registerConfigured()
        try await document.synchronize()
    }
}

/// Every path under `root` (folders with a trailing `/`), sorted, relative to `root`.
func treeListing(of root: URL) -> [String] {
    let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isDirectoryKey])!
    var paths: [String] = []
    let prefix = root.resolvingSymlinksInPath().path + "/"
    for case let url as URL in enumerator {
        let isDirectory = (try? url.resourceValues(forKeys: [.isDirectoryKey]).isDirectory) ?? false
        let relative = String(url.resolvingSymlinksInPath().path.dropFirst(prefix.count))
        paths.append(relative + (isDirectory ? "/" : ""))
    }
    return paths.sorted()
}

extension Fixture {
    /// The live clock and identifiers, with logging turned down.
    static func quietEnvironment() -> SyncEnvironment {
        var environment = SyncEnvironment.live
        environment.logger.logLevel = .error
        return environment
    }
}
