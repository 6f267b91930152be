import FolderSyncTesting
import Foundation
import GRDB
import Testing

@testable import FolderSync
@testable import TestSupport

/// A view model as every SwiftUI or AppKit app has one: `@MainActor`, adopting both delegate protocols with plain
/// main-actor methods and setting every handler to a main-actor closure, with no `nonisolated` hop. This file
/// compiling is half the test (Swift 6 refused the conformance while the requirements were synchronous); the
/// test shows the callbacks run, on the main actor, in the documented order.
@MainActor
private final class NotesViewModel: ApplicationSyncManagerDelegate, DocumentSyncManagerDelegate {
    private(set) var calls: [String] = []
    private(set) var lastReport: SyncReport?
    private(set) var eventsSeen: [SyncEvent] = []

    func attach(_ app: ApplicationSyncManager) {
        app.delegate = self
        app.encryptionHandler = { @MainActor [weak self] request in
            self?.calls.append("encryption")
            return await EncryptionAnswer.unattended(request)
        }
        app.remoteReplacementHandler = { @MainActor [weak self] _ in
            self?.calls.append("replacement")
            return false
        }
    }

    func attach(_ document: DocumentSyncManager) {
        document.delegate = self
        document.remoteDocumentCreationHandler = { @MainActor [weak self] _ in
            self?.calls.append("create document")
            return true
        }
        document.conflictResolver = { @MainActor [weak self] conflict in
            MainActor.assertIsolated()
            self?.calls.append("resolver")
            return .merged(.text("merged on the main actor"))
        }
        document.massDeletionHandler = { @MainActor [weak self] _ in
            self?.calls.append("mass deletion")
            return true
        }
    }

    /// Follows one sync's events, on the main actor, until it completes or fails.
    func follow(_ events: AsyncStream<SyncEvent>) async {
        for await event in events {
            eventsSeen.append(event)
            if case .completed = event { return }
            if case .failed = event { return }
        }
    }

    // ApplicationSyncManagerDelegate
    func applicationSyncManagerDidBeginRegistering(_ manager: ApplicationSyncManager) { calls.append("app begin") }
    func applicationSyncManagerDidFinishRegistering(_ manager: ApplicationSyncManager) { calls.append("app finish") }
    func applicationSyncManager(_ manager: ApplicationSyncManager, didFailToRegisterWithError error: FolderSyncError) {
        calls.append("app failed")
    }
    func applicationSyncManager(_ manager: ApplicationSyncManager, didPauseRegistrationFor request: EncryptionRequest)
        async -> EncryptionAnswer
    {
        calls.append("app encryption")
        return await EncryptionAnswer.unattended(request)
    }

    // DocumentSyncManagerDelegate
    func documentSyncManagerDidBeginRegistering(_ manager: DocumentSyncManager) { calls.append("document begin") }
    func documentSyncManager(
        _ manager: DocumentSyncManager, shouldCreateRemoteDocumentFor request: RemoteDocumentCreationRequest
    ) -> Bool {
        calls.append("delegate create document")
        return true
    }
    func documentSyncManagerDidFinishRegistering(_ manager: DocumentSyncManager) { calls.append("document finish") }
    func documentSyncManager(_ manager: DocumentSyncManager, didFailToRegisterWithError error: FolderSyncError) {
        calls.append("document failed")
    }
    func documentSyncManagerDidBeginSynchronizing(_ manager: DocumentSyncManager) {
        MainActor.assertIsolated()
        calls.append("sync begin")
    }
    func documentSyncManager(_ manager: DocumentSyncManager, resolve conflict: SyncConflict) -> ConflictResolution? {
        calls.append("delegate resolver")
        return nil
    }
    func documentSyncManager(_ manager: DocumentSyncManager, shouldApply deletion: MassDeletion) -> Bool {
        calls.append("delegate mass deletion")
        return false
    }
    func documentSyncManager(_ manager: DocumentSyncManager, didEncounterWarnings warnings: [SyncWarning]) {
        calls.append("warnings")
    }
    func documentSyncManager(_ manager: DocumentSyncManager, didFinishSynchronizingWith report: SyncReport) {
        MainActor.assertIsolated()
        calls.append("sync finish")
        lastReport = report
    }
    func documentSyncManager(_ manager: DocumentSyncManager, didFailToSynchronizeWithError error: FolderSyncError) {
        calls.append("sync failed")
    }
    func documentSyncManager(_ manager: DocumentSyncManager, willReplaceLocalDataWith wholeStore: WholeStoreManifest) {
        calls.append("will replace")
    }
    func documentSyncManager(_ manager: DocumentSyncManager, didReplaceLocalDataWith wholeStore: WholeStoreManifest) {
        calls.append("did replace")
    }
}

@Suite("A @MainActor app")
struct MainActorAdoptionTests {
    @Test("A @MainActor view model adopts both delegates and every handler without hops; its callbacks run in order")
    @MainActor
    func mainActorViewModel() async throws {
        let directory = TemporaryDirectory()
        let remote = FileManagerFileSystem(rootURL: directory.subdirectory("remote"))
        let other = try await TestClient.make(remote, name: "B", in: directory)
        try other.execute("INSERT INTO notes(id, title) VALUES ('n1', 'start')")
        try await other.sync()

        let model = NotesViewModel()
        let folder = directory.subdirectory("A")
        let store = try NotesSchema.open(folder.appendingPathComponent("notes.sqlite"))
        let app = ApplicationSyncManager(remote: remote, environment: Fixture.quietEnvironment())
        model.attach(app)
        try await app.register(
            .init(applicationIdentifier: "com.example.notes", clientIdentifier: "client-A", clientDescription: "A"))
        let document = try DocumentSyncManager(
            applicationSyncManager: app,
            configuration: .init(
                documentIdentifier: "DOC", documentDescription: "Notes",
                helperDirectory: folder.appendingPathComponent("helper")),
            store: store)
        model.attach(document)
        try await document.registerConfigured()
        try await document.synchronize()
        #expect(try await store.database.read { try String.fetchOne($0, sql: "SELECT title FROM notes") } == "start")

        // A conflict, resolved by the main-actor closure (it takes precedence over the delegate's method).
        try await store.database.write { try $0.execute(sql: "UPDATE notes SET title = 'from A'") }
        try other.execute("UPDATE notes SET title = 'from B'")
        try await other.sync()
        let events = document.events()
        let report = try await document.synchronize()
        await model.follow(events)

        #expect(
            model.calls == [
                "app begin", "app finish", "document begin", "document finish",
                "sync begin", "sync finish", "sync begin", "resolver", "sync finish",
            ], "\(model.calls)")
        #expect(
            model.lastReport == report
                && report.conflicts.map(\.resolution) == [.merged(.text("merged on the main actor"))])
        #expect(model.eventsSeen.first == .started && model.eventsSeen.last == .completed(report))
        #expect(model.eventsSeen.contains(.phase(.finished)))
    }
}
