import FolderSync
import Foundation

/// What `notes status` prints: read from this device's database and helper folder only, never the shared folder.
///
/// JSON: `{"registered", "unpublishedChanges", "reset"?: {"code", "message", "backupPath"?, "date"}, "lastSync"?,
/// "lastFailure"?, "lastError"?, "waitingFor"?: {client: sequence}}` (dates ISO 8601; a key marked `?` is left out when
/// there is no value).
struct NotesStatus: Encodable {
    struct Reset: Encodable {
        var code: String
        var message: String
        var backupPath: String?
        var date: String
    }

    var registered: Bool
    var unpublishedChanges: Bool
    var reset: Reset?
    var lastSync: String?
    var lastFailure: String?
    var lastError: String?
    /// Per client, the change set this device waits for: missing from the shared folder.
    var waitingFor: [String: Int64]?

    init(_ document: DocumentSyncManager) {
        let dates = ISO8601DateFormatter()
        registered = document.remembersRegistration
        unpublishedChanges = document.hasUnpublishedChanges
        reset = document.resetState.map {
            Reset(
                code: $0.code.description, message: $0.message, backupPath: $0.backupPath,
                date: dates.string(from: $0.date))
        }
        let last = document.lastSynchronization
        lastSync = last.lastSuccess.map(dates.string(from:))
        lastFailure = last.lastFailure.map(dates.string(from:))
        lastError = last.lastError?.description
        waitingFor = last.missingChangeSets.isEmpty ? nil : last.missingChangeSets
    }

    var text: String {
        var lines = [registered ? "registered" : "not registered yet (the first sync registers this device)"]
        lines.append(unpublishedChanges ? "notes wait to be published" : "nothing waits to be published")
        if let reset {
            lines.append("stopped: \(reset.code): \(reset.message) (since \(reset.date); run 'notes rejoin')")
            if let backup = reset.backupPath { lines.append("backup of this device's notes: \(backup)") }
        }
        lines.append("last sync: " + (lastSync ?? "never"))
        if let lastFailure, let lastError { lines.append("last failed sync: \(lastFailure): \(lastError)") }
        for (client, sequence) in (waitingFor ?? [:]).sorted(by: { $0.key < $1.key }) {
            lines.append(
                "waits for change set \(sequence) of device \(client): it is missing from the shared folder "
                    + "(that device covers it with a whole store when it next syncs)")
        }
        return lines.map { NotesOutput.escaped($0) + "\n" }.joined()
    }
}

/// `notes sync`'s progress on a terminal: one line on standard error, rewritten as the sync goes, erased at the end.
final class SyncProgressLine: @unchecked Sendable {
    private var task: Task<Void, Never>?
    private let lock = NSLock()
    private var shown = false

    init(_ events: AsyncStream<SyncEvent>) {
        task = Task { [weak self] in
            for await event in events {
                let line: String? =
                    switch event {
                    case .applyingChangeSet(let index, let count, _): "applying change set \(index) of \(count)"
                    case .wholeStoreTransfer(let direction, let bytes, let total):
                        "\(direction == .upload ? "uploading" : "downloading") the whole store: \(bytes >> 20) of \(max(1, total >> 20)) MiB"
                    case .uploadingAttachment: "uploading an attachment"
                    case .downloadingAttachment: "downloading an attachment"
                    case .phase(.publishingLocalChanges): "publishing this device's changes"
                    default: nil
                    }
                guard let line, let self else { continue }
                self.lock.withLock { self.shown = true }
                FileHandle.standardError.write(Data(("\r\u{1B}[K" + line).utf8))
            }
        }
    }

    func stop() {
        task?.cancel()
        let wasShown = lock.withLock { () -> Bool in
            defer { shown = false }
            return shown
        }
        if wasShown { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}

/// The remote of `notes status`, whose managers read the database and the helper folder only: every request fails,
/// so that nothing of the shared folder can be reached by mistake.
struct NoSharedFolder: RemoteFileSystem {
    private func refuse(_ path: RemotePath) -> FolderSyncError {
        FolderSyncError(.invalidConfiguration, "notes status does not reach the shared folder", path: path.description)
    }

    func contentsOfDirectory(at path: RemotePath) async throws -> [RemoteItem] { throw refuse(path) }
    func item(at path: RemotePath) async throws -> RemoteItem? { throw refuse(path) }
    func read(_ path: RemotePath) async throws -> Data { throw refuse(path) }
    func write(_ data: Data, to path: RemotePath) async throws { throw refuse(path) }
    func move(from source: RemotePath, to destination: RemotePath, replacing: Bool) async throws {
        throw refuse(source)
    }
    func remove(_ path: RemotePath) async throws { throw refuse(path) }
    func createDirectory(at path: RemotePath) async throws { throw refuse(path) }
}
