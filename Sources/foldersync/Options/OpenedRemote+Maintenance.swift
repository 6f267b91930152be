import Crypto
@_spi(Tooling) import FolderSync
import Foundation
import Logging

/// The library's managers for the commands that list, delete and vacuum: the tool runs their operations, never its own.
extension RemoteOptions.Opened {
    /// The name written as `deletedBy` in the markers the tool writes (client deletion, expiry).
    static let actorIdentifier = "foldersync"

    /// Logging off: the tool reports through its own output, each warning and error once.
    /// `FOLDERSYNC_LOG_LEVEL` (`debug`, `info`, `warning`…) turns the library's log on, on standard error.
    static var environment: SyncEnvironment {
        var environment = SyncEnvironment.live
        environment.logger.logLevel =
            ProcessInfo.processInfo.environment["FOLDERSYNC_LOG_LEVEL"]
            .flatMap { .init(rawValue: $0) } ?? .critical
        return environment
    }

    /// Configured, never registered: listing writes nothing, and the operator never becomes
    /// a client whose missing syncs would hold vacuum back.
    func applicationManager() throws -> ApplicationSyncManager {
        let manager = ApplicationSyncManager(remote: fileSystem, environment: Self.environment)
        try manager.configure(
            .init(
                applicationIdentifier: applicationIdentifier, clientIdentifier: Self.actorIdentifier,
                clientDescription: "foldersync maintenance tool"))
        return manager
    }

    /// Vacuum, client listing and client deletion of one document, without registering.
    func maintenance(document: String) throws -> DocumentMaintenance {
        let context = DocumentOperationContext(
            fileSystem: fileSystem, layout: try RemoteLayout(applicationIdentifier: applicationIdentifier),
            documentIdentifier: document, clientIdentifier: Self.actorIdentifier,
            environment: Self.environment)
        return try DocumentMaintenance(
            context: context,
            options: DocumentMaintenance.Options(verificationCacheFile: verificationCacheFile(document: document)))
    }

    /// Where vacuums of this folder's `document` remember the whole stores they read and found sound, so that a cron
    /// job reads each store once, not at every run: `$XDG_CACHE_HOME/foldersync` (or `~/.cache/foldersync`), one file
    /// per folder, application and document. Local bookkeeping only; losing it costs one more read.
    private func verificationCacheFile(document: String) -> URL {
        let environment = ProcessInfo.processInfo.environment
        let base =
            environment["XDG_CACHE_HOME"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache")
        let name = SHA256.hash(data: Data([location, applicationIdentifier, document].joined(separator: "\n").utf8))
            .map { String(format: "%02x", $0) }.joined()
        return base.appendingPathComponent("foldersync/verified-whole-stores/\(name).json")
    }

    /// The application's documents (deleted ones left out), sorted by identifier.
    func documents() async throws -> [SynchronizedDocument] {
        try await applicationManager().previouslySynchronizedDocuments()
    }

    /// The documents a command works on: the one `--document` names, or every document.
    ///
    /// - Throws: a ``ToolFailure`` naming the document when it does not exist or was deleted.
    func documents(selecting identifier: String?) async throws -> [SynchronizedDocument] {
        let all = try await documents()
        guard let identifier else { return all }
        if let document = all.first(where: { $0.identifier == identifier }) { return [document] }
        throw try await unknownDocument(identifier, found: all.map(\.identifier))
    }

    /// For `doctor`, which checks a document's folder even when its files are damaged: refuses, with the message every
    /// command gives, a `--document` that has no folder.
    func requireDocumentFolder(_ identifier: String) async throws {
        let layout = try RemoteLayout(applicationIdentifier: applicationIdentifier)
        _ = try maintenance(document: identifier)  // refuses an unsafe identifier before it becomes a path
        if try await fileSystem.item(at: layout.documentDirectory(identifier))?.kind == .directory { return }
        throw try await unknownDocument(identifier, found: try await documents().map(\.identifier))
    }

    /// The documents `removed` works on: the one `--document` names, deleted or not, or every document that is there
    /// and, with `includingDeleted`, every deleted one (whose folder the application's removed area may keep).
    func removedAreaDocuments(selecting identifier: String?, includingDeleted: Bool) async throws -> [(
        identifier: String, deleted: Bool
    )] {
        if let identifier, try await isDeleted(identifier) { return [(identifier, true)] }
        let present = try await documents(selecting: identifier).map { (identifier: $0.identifier, deleted: false) }
        guard identifier == nil, includingDeleted else { return present }
        let layout = try RemoteLayout(applicationIdentifier: applicationIdentifier)
        let deleted = try await fileSystem.contentsOfDirectoryIfPresent(at: layout.deletedDocumentsDirectory).compactMap
        { item in
            item.kind == .file && item.name.hasSuffix(".plist") ? String(item.name.dropLast(".plist".count)) : nil
        }.filter { name in (try? maintenance(document: name)) != nil && !present.contains { $0.identifier == name } }
        return (present + deleted.map { (identifier: $0, deleted: true) }).sorted { $0.identifier < $1.identifier }
    }

    /// Whether the document was deleted (its marker is there).
    private func isDeleted(_ identifier: String) async throws -> Bool {
        _ = try maintenance(document: identifier)  // refuses an unsafe identifier before it becomes a path
        return try await fileSystem.exists(
            try RemoteLayout(applicationIdentifier: applicationIdentifier).deletedDocumentFile(identifier))
    }

    /// The one message for a `--document` that names no document: deleted, or never there (with those that are).
    private func unknownDocument(_ identifier: String, found: [String]) async throws -> ToolFailure {
        if try await isDeleted(identifier) {
            return ToolFailure("--document \(identifier): the document was deleted from \(applicationIdentifier)")
        }
        let listing = found.isEmpty ? "" : " (found: \(found.joined(separator: ", ")))"
        return ToolFailure("--document \(identifier): no such document in \(applicationIdentifier)" + listing)
    }
}
