package import Foundation

/// Writes the remote files of one document directly, without clients or syncs: thousands of change sets in
/// seconds, for the vacuum and listing tests and the vacuum benchmark. Not API: `package`, so that both reach it.
package struct DocumentFabricator {
    package let remote: any RemoteFileSystem
    package let layout: RemoteLayout
    package let document: String
    /// The date written in markers, manifests and deletion markers unless a call gives another.
    package let date: Date

    package init(_ remote: any RemoteFileSystem, applicationIdentifier: String, document: String, date: Date) throws {
        self.remote = remote
        self.layout = try RemoteLayout(applicationIdentifier: applicationIdentifier)
        self.document = document
        self.date = date
    }

    package func createDocumentFolders() async throws {
        // The application's folder first: a backend makes a folder of its root only when asked for that folder.
        try await remote.createDirectory(at: layout.applicationDirectory)
        for path in [
            layout.syncChangesDirectory(document), layout.recentSyncsDirectory(document),
            layout.deletedClientsDirectory(document),
            layout.wholeStoreDirectory(document), layout.integrityKeyDirectory(document),
        ] {
            try await remote.createDirectory(at: path)
        }
    }

    package func recentSync(
        _ client: String, acknowledgement: [String: Int64], published: Int64 = 0, lastSync: Date? = nil
    ) async throws {
        let recent = RecentSync(
            clientIdentifier: client, lastSyncDate: lastSync ?? date, publishedSequence: published,
            acknowledgement: acknowledgement, schemaVersion: 1)
        try await remote.write(try PropertyListFile.encode(recent), to: layout.recentSyncFile(document, client: client))
    }

    /// A whole store of `client` that contains `covers`: a valid whole-store file (its snapshot a few dummy bytes:
    /// vacuum reads the file through, never the SQLite inside) and the manifest that describes it.
    package func wholeStore(_ client: String, covers: [String: Int64], created: Date? = nil) async throws {
        try await remote.createDirectory(at: layout.wholeStoreDirectory(document, client: client))
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("fabricated-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let snapshot = scratch.appendingPathComponent("snapshot")
        let file = scratch.appendingPathComponent("store")
        try Data("dummy snapshot of \(client)".utf8).write(to: snapshot)
        let identifier = "ws-\(client)-\(covers.values.reduce(0, +))"
        let written = try WholeStoreFile.write(
            snapshot: snapshot, to: file,
            header: .init(
                wholeStoreIdentifier: identifier, clientIdentifier: client, schemaVersion: 1,
                snapshotByteCount: UInt64(try Data(contentsOf: snapshot).count), compression: .none,
                snapshotSchemaVersion: 2, covers: covers))
        try await remote.write(try Data(contentsOf: file), to: layout.wholeStoreFile(document, client: client))
        let manifest = WholeStoreManifest(
            clientIdentifier: client, wholeStoreIdentifier: identifier, creationDate: created ?? date,
            schemaVersion: 1, covers: covers, wholeStoreByteCount: written.byteCount,
            wholeStoreChecksum: written.checksum, contentChecksum: written.contentChecksum)
        try await remote.write(
            try PropertyListFile.encode(manifest), to: layout.appliedSyncChangeSetsFile(document, client: client))
    }

    package func deletedClient(_ client: String) async throws {
        let info = DeletedClientInfo(clientIdentifier: client, deletedBy: "test", deletionDate: date)
        try await remote.write(
            try PropertyListFile.encode(info), to: layout.deletedClientFile(document, client: client))
    }

    /// The path of change set `sequence` of `client` (a fixed identifier derived from both).
    package func changeSetPath(_ client: String, _ sequence: Int64) -> RemotePath {
        let identifier = String(format: "%08x", UInt32(truncatingIfNeeded: sequence &* 2_654_435_761))
        return layout.syncChangesDirectory(document, client: client)
            .appending(RemoteLayout.changeSetFileName(sequence: sequence, changeSetIdentifier: identifier))
    }

    package func changeSet(_ client: String, _ sequence: Int64, bytes: Int = 24) async throws {
        try await remote.createDirectory(at: layout.syncChangesDirectory(document, client: client))
        try await remote.write(
            Data(repeating: UInt8(sequence & 0x7F), count: bytes), to: changeSetPath(client, sequence))
    }
}
