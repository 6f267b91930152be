import FolderSyncTesting
import Foundation
import GRDB
import Testing

@_spi(Tooling) @testable import FolderSync
@testable import TestSupport

/// A backend's operation subclasses, built as the docs show (`init(copying:)` of the standard operation), receive
/// every setting the manager made: the policy's attachment threshold and downloads, the whole-store compression,
/// and the progress events. Before the operation context, a subclass built from the standard operation's
/// properties ran with the defaults (64 KiB threshold, eager downloads, stored whole stores) and emitted nothing.
@Suite("Operation subclasses")
struct OperationSubclassTests {
    @Test("Every document operation built through a subclass runs with the manager's policy and emits its events")
    func subclassesKeepEverySetting() async throws {
        let directory = TemporaryDirectory()
        let root = directory.subdirectory("remote")
        let log = StepLog()
        let a = try await Self.client("A", root: root, in: directory, log: log)
        let b = try await Self.client("B", root: root, in: directory, log: log)

        // 2,000 bytes: an attachment under the policy's 1,000-byte threshold, inline under the default 64 KiB; and
        // an attached file, which the policy's lazy downloads leave on the remote until asked for.
        let value = pseudoRandomBytes(2_000, seed: 7)
        let file = directory.url.appendingPathComponent("scan.pdf")
        try pseudoRandomBytes(5_000, seed: 8).write(to: file)
        let reference = try a.document.attachFile(at: file)
        try await a.store.database.write { db in
            try db.execute(
                sql: "INSERT INTO notes(id, title, body) VALUES ('n1', ?, ?)",
                arguments: [value, reference.databaseValue])
        }
        let syncEvents = a.document.events()
        let sent = try await a.document.synchronize()
        var phases = 0
        for await event in syncEvents {
            if case .phase = event { phases += 1 }
            if case .completed = event { break }
        }
        #expect(phases >= 3, "the sync's phases reached the manager's event stream")
        #expect(sent.attachmentsUploaded == 2, "the policy's threshold reached the subclass: the value and the file")
        #expect(try remoteAttachments(root).count == 2)

        let uploadEvents = a.document.events()
        let manifest = try #require(try await a.document.uploadWholeStore())
        var uploaded: [Int64] = []
        for await case .wholeStoreTransfer(.upload, let bytes, let total) in uploadEvents {
            uploaded.append(bytes)
            if bytes == total { break }
        }
        #expect(uploaded == [0, manifest.wholeStoreByteCount], "the upload's progress reached the event stream")
        let wholeStore = root.appendingPathComponent(
            "com.example.notes/Documents/DOC/WholeStore/client-A/WholeStore.ticdsync")
        let header = try WholeStoreFile.read(
            wholeStore, to: directory.url.appendingPathComponent("snapshot.sqlite"), path: "whole store")
        #expect(header.compression == .zlib, "the policy's compression reached the subclass")

        let downloadEvents = b.document.events()
        _ = try #require(try await b.document.downloadWholeStore())
        var downloaded: [Int64] = []
        for await case .wholeStoreTransfer(.download, let bytes, let total) in downloadEvents {
            downloaded.append(bytes)
            if bytes == total { break }
        }
        #expect(downloaded.first == 0 && downloaded.last == manifest.wholeStoreByteCount, "\(downloaded)")
        #expect(
            try await b.store.database.read { try Data.fetchOne($0, sql: "SELECT title FROM notes WHERE id = 'n1'") }
                == value)
        #expect(
            b.document.localFile(for: reference) == nil,
            "lazy downloads (the policy) reached the subclass: the file waits")
        #expect(try Data(contentsOf: try await b.document.requestDownload(for: reference)) == Data(contentsOf: file))

        _ = try await a.document.vacuum()
        #expect(
            log.steps == ["registration", "sync", "upload", "download", "vacuum"],
            "every factory's subclass ran: \(log.steps)")
    }

    /// A client whose manager builds every document operation through a logging subclass.
    private static func client(_ name: String, root: URL, in directory: TemporaryDirectory, log: StepLog) async throws
        -> TestClient
    {
        let folder = directory.subdirectory(name)
        let environment = Fixture.quietEnvironment()
        let store = try NotesSchema.open(folder.appendingPathComponent("notes.sqlite"), now: environment.now)
        let app = ApplicationSyncManager(remote: FileManagerFileSystem(rootURL: root), environment: environment)
        try await app.register(
            .init(
                applicationIdentifier: "com.example.notes", clientIdentifier: "client-\(name)", clientDescription: name)
        )
        let manager = try SubclassingManager(
            applicationSyncManager: app,
            configuration: .init(
                documentIdentifier: "DOC", documentDescription: "Notes",
                helperDirectory: folder.appendingPathComponent("helper")),
            store: store, log: log)
        manager.policy.attachmentThreshold = 1_000
        manager.policy.attachmentDownloads = .lazy
        manager.policy.wholeStoreCompression = .zlib
        manager.policy.wholeStoreUploadAfterChangeSets = nil  // each step run by the test, in its order
        manager.policy.vacuumsAfterWholeStoreUpload = false
        manager.remoteDocumentCreationHandler = { _ in true }
        try await manager.registerConfigured()
        return TestClient(app: app, document: manager, store: store)
    }
}

/// The operations whose subclass ran a step.
private final class StepLog: Sendable {
    private let ran = Locked<Set<String>>([])

    func record(_ step: String) { ran.withLock { _ = $0.insert(step) } }

    var steps: Set<String> { ran.current }
}

private final class SubclassingManager: DocumentSyncManager, @unchecked Sendable {
    let log: StepLog

    init(
        applicationSyncManager: ApplicationSyncManager, configuration: Configuration, store: any ModelAdapter,
        log: StepLog
    ) throws {
        self.log = log
        try super.init(applicationSyncManager: applicationSyncManager, configuration: configuration, store: store)
    }

    override func documentRegistrationOperation(options: DocumentRegistrationOperation.Options)
        -> DocumentRegistrationOperation
    {
        LoggingRegistration(log: log, standard: super.documentRegistrationOperation(options: options))
    }

    override func synchronizationOperation(
        store: any ModelAdapter,
        options: SynchronizationOperation.Options
    ) -> SynchronizationOperation {
        LoggingSynchronization(log: log, standard: super.synchronizationOperation(store: store, options: options))
    }

    override func wholeStoreUploadOperation(store: any SnapshottingModelAdapter) -> WholeStoreUploadOperation {
        LoggingUpload(log: log, standard: super.wholeStoreUploadOperation(store: store))
    }

    override func wholeStoreDownloadOperation(
        store: any SnapshottingModelAdapter,
        options: WholeStoreDownloadOperation.Options
    ) -> WholeStoreDownloadOperation {
        LoggingDownload(log: log, standard: super.wholeStoreDownloadOperation(store: store, options: options))
    }

    override func documentMaintenance(options: DocumentMaintenance.Options) throws -> DocumentMaintenance {
        try LoggingMaintenance(log: log, standard: super.documentMaintenance(options: options))
    }
}

private final class LoggingRegistration: DocumentRegistrationOperation, @unchecked Sendable {
    let log: StepLog

    init(log: StepLog, standard: DocumentRegistrationOperation) {
        self.log = log
        super.init(copying: standard)
    }

    override func fetchDocumentInfoFile() async throws -> Data? {
        log.record("registration")
        return try await super.fetchDocumentInfoFile()
    }
}

private final class LoggingSynchronization: SynchronizationOperation, @unchecked Sendable {
    let log: StepLog

    init(log: StepLog, standard: SynchronizationOperation) {
        self.log = log
        super.init(copying: standard)
    }

    override func publishChangeSet(from url: URL, name: String) async throws {
        log.record("sync")
        try await super.publishChangeSet(from: url, name: name)
    }
}

private final class LoggingUpload: WholeStoreUploadOperation, @unchecked Sendable {
    let log: StepLog

    init(log: StepLog, standard: WholeStoreUploadOperation) {
        self.log = log
        super.init(copying: standard)
    }

    override func uploadStagedFile(from url: URL, name: String) async throws {
        log.record("upload")
        try await super.uploadStagedFile(from: url, name: name)
    }
}

private final class LoggingDownload: WholeStoreDownloadOperation, @unchecked Sendable {
    let log: StepLog

    init(log: StepLog, standard: WholeStoreDownloadOperation) {
        self.log = log
        super.init(copying: standard)
    }

    override func fetchWholeStoreClients() async throws -> [String] {
        log.record("download")
        return try await super.fetchWholeStoreClients()
    }
}

private final class LoggingMaintenance: DocumentMaintenance, @unchecked Sendable {
    let log: StepLog

    init(log: StepLog, standard: DocumentMaintenance) throws {
        self.log = log
        try super.init(context: standard.context, options: standard.options)
    }

    override func vacuumOperation(options: VacuumOperation.Options) -> VacuumOperation {
        LoggingVacuum(log: log, standard: super.vacuumOperation(options: options))
    }
}

private final class LoggingVacuum: VacuumOperation, @unchecked Sendable {
    let log: StepLog

    init(log: StepLog, standard: VacuumOperation) {
        self.log = log
        super.init(copying: standard)
    }

    override func fetchDocumentTree() async throws -> [RemotePath: [RemoteItem]] {
        log.record("vacuum")
        return try await super.fetchDocumentTree()
    }
}
