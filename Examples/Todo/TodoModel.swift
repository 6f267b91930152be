import FolderSync
import FolderSyncWebDAV
import Foundation
import Logging

/// The todo app's model, as a SwiftUI or AppKit app holds it: on the main actor, the document's delegate, with
/// the lists to show, the progress of the running sync, and what the last sync did.
///
/// Everything FolderSync calls back (the delegate, the conflict resolver, the events) runs here on the main
/// actor, with no `nonisolated` hop.
@MainActor
final class TodoModel: DocumentSyncManagerDelegate {
    let database: TodoDatabase
    let document: DocumentSyncManager
    /// The lists as the database has them, read again after every sync that changed something.
    private(set) var lists: [TodoList] = []
    /// One line saying what the running sync does, for a status bar; `onProgress` hears each new one.
    private(set) var progress = ""
    private(set) var lastReport: SyncReport?
    var onProgress: (String) -> Void = { _ in }

    /// Opens the database and configures the sync managers: no remote is touched until the first sync.
    init(databasePath: String, remote location: String) throws {
        database = try TodoDatabase(path: databasePath)
        var environment = SyncEnvironment.live
        environment.logger.logLevel =
            ProcessInfo.processInfo.environment["FOLDERSYNC_LOG_LEVEL"]
            .flatMap { Logger.Level(rawValue: $0) } ?? .critical
        let app = ApplicationSyncManager(remote: try RemoteLocation.fileSystem(for: location), environment: environment)
        let helper = URL(fileURLWithPath: databasePath + ".foldersync", isDirectory: true)
        try app.configure(
            .init(
                applicationIdentifier: "com.example.todo",
                clientIdentifier: try ApplicationSyncManager.persistentClientIdentifier(in: helper),
                clientDescription: ProcessInfo.processInfo.hostName))
        document = try DocumentSyncManager(
            applicationSyncManager: app,
            configuration: .init(documentIdentifier: "todo", documentDescription: "To do", helperDirectory: helper),
            store: database.store)
        document.delegate = self
        document.remoteDocumentCreationHandler = { _ in true }  // the first device creates the shared document
        lists = try database.lists()
    }

    /// Registers (with the shared folder only the first time) and syncs, following the sync's events.
    func sync() async throws -> SyncReport {
        try await document.registerConfigured()
        let events = document.events()
        let following = Task { @MainActor in
            for await event in events {
                if let line = TodoProgress.line(for: event) { show(line) }
                if case .completed = event { return }
                if case .failed = event { return }
            }
        }
        defer { following.cancel() }
        let report = try await document.synchronize()
        await following.value  // the stream ends with `.completed`, sent before synchronize() returns
        return report
    }

    func reload() throws { lists = try database.lists() }

    private func show(_ line: String) {
        progress = line
        onProgress(line)
    }

    // MARK: DocumentSyncManagerDelegate, on the main actor

    func documentSyncManager(_ manager: DocumentSyncManager, resolve conflict: SyncConflict) -> ConflictResolution? {
        TodoConflicts.resolve(conflict)
    }

    func documentSyncManager(_ manager: DocumentSyncManager, didFinishSynchronizingWith report: SyncReport) {
        lastReport = report
        if report.changesApplied > 0 || report.installedWholeStore != nil { try? reload() }
    }
}

/// The app's own rule for two devices editing the same item at once; FolderSync asks it for every conflict.
enum TodoConflicts {
    /// Done on either device stays done; the higher priority wins; anything else (the title) goes to the later
    /// write (`nil`: FolderSync's last writer wins).
    static func resolve(_ conflict: SyncConflict) -> ConflictResolution? {
        guard conflict.table == "items" else { return nil }
        switch conflict.column {
        case "done":
            return conflict.localValue == .integer(1) ? .localWins : .remoteWins
        case "priority":
            guard case .integer(let local) = conflict.localValue, case .integer(let remote) = conflict.remoteValue
            else { return nil }
            return local >= remote ? .localWins : .remoteWins
        default:
            return nil
        }
    }
}

/// Progress lines from a sync's events.
enum TodoProgress {
    static func line(for event: SyncEvent) -> String? {
        switch event {
        case .phase(.findingRemoteChanges): "looking for changes from other devices"
        case .applyingChangeSet(let index, let count, let changes):
            "applying change set \(index) of \(count) (\(changes) changes)"
        case .phase(.publishingLocalChanges): "publishing this device's changes"
        case .wholeStoreTransfer(let direction, let bytes, let total):
            "\(direction == .download ? "downloading" : "uploading") the whole store: \(bytes) of \(total) bytes"
        case .completed(let report): "done in \(Int(report.duration * 1000)) ms"
        case .failed(let error): "failed: \(error.code)"
        default: nil
        }
    }
}
