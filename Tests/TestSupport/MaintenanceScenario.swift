import Foundation
import Testing

@_spi(Tooling) @testable import FolderSync

/// A shared folder written by real syncs, for the maintenance commands: something to vacuum, and a silent client.
///
/// A and B sync as usual; C synced once, 100 days ago as the folder's dates show it (its clock was 100 days behind
/// too), and never again. A published change sets 1 and 2, B published 1; everyone applied A1 and B1, only A and B
/// applied A2. A then uploaded a whole store that contains all three. So vacuum may remove A1 and B1, and C alone holds
/// A2 back.
struct MaintenanceScenario {
    static let document = "DOC"
    static let silence: TimeInterval = 100 * 86_400

    let directory: TemporaryDirectory
    let root: URL
    let remote: FileManagerFileSystem
    let layout: RemoteLayout
    let a: TestClient
    let b: TestClient
    let c: TestClient

    init(_ directory: TemporaryDirectory) async throws {
        self.directory = directory
        root = directory.subdirectory("remote")
        remote = FileManagerFileSystem(rootURL: root)
        layout = try RemoteLayout(applicationIdentifier: Fixture.application)
        var behind = Fixture.quietEnvironment()
        behind.now = { Date().addingTimeInterval(-MaintenanceScenario.silence) }
        a = try await TestClient.make(remote, name: "A", in: directory)
        b = try await TestClient.make(remote, name: "B", in: directory)
        c = try await TestClient.make(remote, name: "C", in: directory, environment: behind)
        // Each sync acknowledges what it applied at once: the tree is what the tools are shown.
        for client in [a, b, c] { client.document.policy.acknowledgementDelay = 0 }

        try a.execute("INSERT INTO notes(id, title) VALUES ('n1', 'from A')")
        try await a.sync()
        try b.execute("INSERT INTO notes(id, title) VALUES ('n2', 'from B')")
        try await b.sync()
        try await c.sync()
        try await a.sync()
        try a.execute("INSERT INTO notes(id, title) VALUES ('n3', 'from A, later')")
        try await a.sync()
        try await b.sync()
        try await a.sync()
        _ = try await a.document.uploadWholeStore()
        try await backdateFiles(of: "client-C", in: remote, to: Date().addingTimeInterval(-Self.silence))
    }

    /// The path of a client's change set `sequence`, relative to the remote (as the tool prints paths).
    func changeSet(_ client: String, _ sequence: Int64) throws -> String {
        let folder = layout.syncChangesDirectory(Self.document, client: client)
        let names = try FileManager.default.contentsOfDirectory(
            atPath: root.appendingPathComponent(folder.description).path)
        let name = try #require(names.first { RemoteLayout.parseChangeSetFileName($0)?.sequence == sequence })
        return folder.appending(name).description
    }

    func exists(_ relativePath: String) -> Bool {
        FileManager.default.fileExists(atPath: root.appendingPathComponent(relativePath).path)
    }

    func size(_ relativePath: String) throws -> Int64 {
        let attributes = try FileManager.default.attributesOfItem(
            atPath: root.appendingPathComponent(relativePath).path)
        return (attributes[.size] as? NSNumber)?.int64Value ?? 0
    }

    /// The size of the one whole store, client-A's.
    func wholeStoreBytes() throws -> Int64 {
        try size(layout.wholeStoreFile(Self.document, client: "client-A").description)
    }

    /// Every path of the tree with its size and modification date, to prove a command wrote nothing.
    func fingerprint() throws -> [String] {
        try treeListing(of: root).map { path in
            let attributes = try FileManager.default.attributesOfItem(atPath: root.appendingPathComponent(path).path)
            return "\(path) \(attributes[.size] ?? "") \(attributes[.modificationDate] ?? "")"
        }
    }
}
