import FolderSyncTesting
import Foundation

@_spi(Tooling) @testable import FolderSync

extension TestClient {
    /// The launch sequence of an offline-first app: configure both managers (no remote), then `registerConfigured()`,
    /// which needs the shared folder only when this client never registered.
    static func launch(
        _ remote: any RemoteFileSystem, name: String, in directory: TemporaryDirectory,
        environment: SyncEnvironment = Fixture.quietEnvironment(),
        configure: (ApplicationSyncManager) -> Void = { _ in }
    ) async throws -> TestClient {
        let folder = directory.subdirectory(name)
        let store = try NotesSchema.open(folder.appendingPathComponent("notes.sqlite"), now: environment.now)
        let app = ApplicationSyncManager(remote: remote, environment: environment)
        configure(app)
        try app.configure(
            .init(
                applicationIdentifier: "com.example.notes", clientIdentifier: "client-\(name)", clientDescription: name)
        )
        let document = try DocumentSyncManager(
            applicationSyncManager: app,
            configuration: .init(
                documentIdentifier: "DOC", documentDescription: "Notes",
                helperDirectory: folder.appendingPathComponent("helper")), store: store)
        document.remoteDocumentCreationHandler = { _ in true }
        try await document.registerConfigured()
        return TestClient(app: app, document: document, store: store)
    }
}
