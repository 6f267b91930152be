@_spi(ModelAdapter) import FolderSync
import Foundation
import Logging

/// One simulated installation: its store, its helper folder, its clock, and the managers a process would hold.
///
/// ``restart()`` drops the managers and the open store and rebuilds them from
/// what is on disk (helper folder) and what the store committed, as a process
/// that was killed and launched again would.
final class SimulatedClient {
    static let application = "com.example.simulated-notes"
    static let document = "SIMULATED-NOTES"

    let index: Int
    /// The client identifier the app keeps: `client-<index>`, the identifier of the client it was copied from (a
    /// clone), or the new one a re-join after a shared identity took.
    var identifier: String { identity.current }
    /// The identifier, and the installation when it is not the client's first (a copy on a second computer), for logs.
    var name: String { identifier == "client-\(index)" ? identifier : "\(identifier) [installation \(index)]" }
    private let identity: Locked<String>
    let folder: URL
    let now: @Sendable () -> Date
    /// The run's remote, shared by every client.
    let sharedRemote: any RemoteFileSystem
    /// Where this client's syncs are interrupted.
    let interruptions = Interruptions()
    /// ``sharedRemote`` as this client reaches it: through its ``interruptions``.
    let remote: any RemoteFileSystem
    /// Whether this client answers conflicts with a merged value (others let the last writer win).
    let resolvesConflicts: Bool
    /// Whether whole stores are uploaded and downloaded automatically (lifecycle runs on a snapshotting store).
    var usesWholeStores = false
    /// `policy.wholeStoreUploadAfterChangeSets` for this client (`nil`: the default policy).
    var wholeStoreUploadThreshold: Int?
    /// Whether large values travel as attachments from 256 bytes (the simulator's values are small).
    var usesAttachments = false
    /// The reset this client's last sync (or registration) stopped on and that it has not re-joined from yet.
    var reset: FolderSyncError.Code?
    /// The reset codes this client's next sync must stop on (after a wipe, deletion or expiry), or empty.
    var expectedResets: Set<FolderSyncError.Code> = []
    /// The user's answer when the application's folder is gone: whether the remote was really replaced.
    var confirmsReplacedRemote: @Sendable () -> Bool = { false }
    private let identifiers: IdentifierSource
    private let makeApplicationSyncManager: ConvergenceSimulator.ApplicationManagerFactory
    private let makeDocumentSyncManager: ConvergenceSimulator.DocumentManagerFactory
    private(set) var store: any SimulatorStore
    private(set) var document: DocumentSyncManager?
    /// Safeguards switched off in this client's vacuums and deletions.
    private let disabledSafeguards: Set<RemovalSafeguard>
    /// The grace period of this client's vacuums: the shortest in lifecycle runs, so that purges happen in them.
    private let keepsRemovedFilesFor: TimeInterval?

    /// - Parameter identifier: the client identifier (`client-<index>` when `nil`).
    init(
        index: Int, folder: URL, now: @escaping @Sendable () -> Date, remote: any RemoteFileSystem,
        resolvesConflicts: Bool,
        configuration: ConvergenceSimulator.Configuration, identifier: String? = nil
    ) throws {
        self.index = index
        self.identity = Locked(identifier ?? "client-\(index)")
        self.folder = folder
        self.now = now
        self.sharedRemote = remote
        self.remote = interruptions.remote(over: remote)
        self.resolvesConflicts = resolvesConflicts
        self.identifiers = IdentifierSource(client: index)
        self.makeApplicationSyncManager = configuration.makeApplicationSyncManager
        self.makeDocumentSyncManager = configuration.makeDocumentSyncManager
        self.disabledSafeguards = configuration.disabledSafeguards
        self.keepsRemovedFilesFor = configuration.lifecycle ? VacuumOperation.minimumRemovedFileGracePeriod : nil
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        self.store = try configuration.makeStore(folder, now)
    }

    /// Launches as an offline-first app does: configures both managers, then registers the document, which needs
    /// the remote only the first time (creating the remote document if it is missing); later launches come up
    /// from the helper folder.
    ///
    /// The document manager is kept even when its registration throws, as an app keeps it to call
    /// ``DocumentSyncManager/rejoin()`` after a reset found at launch.
    func start() async throws {
        var environment = SyncEnvironment.live
        environment.now = now
        environment.makeIdentifier = identifiers.next
        environment.logger.logLevel = .critical
        let app = makeApplicationSyncManager(remote, environment)
        try app.configure(
            .init(
                applicationIdentifier: Self.application, clientIdentifier: identifier,
                clientDescription: "Simulated client \(index)"))
        let confirmsReplacedRemote = self.confirmsReplacedRemote
        app.remoteReplacementHandler = { _ in confirmsReplacedRemote() }
        // The app keeps the identifier a re-join after a shared identity takes, and configures with it from then on.
        app.clientIdentifierChangeHandler = { [identity] new in identity.withLock { $0 = new } }
        let document = try makeDocumentSyncManager(
            app,
            .init(
                documentIdentifier: Self.document, documentDescription: "Simulated notes",
                helperDirectory: helperFolder),
            store.adapter)
        document.remoteDocumentCreationHandler = { _ in true }
        if !usesWholeStores {
            // Record sync only: whole stores are a GRDB-only feature, and the same schedule must make the same
            // remote requests on both adapters.
            document.policy.automaticallyDownloadsWholeStore = false
            document.policy.wholeStoreUploadAfterChangeSets = nil
            document.policy.wholeStoreUploadAfterBytes = nil
        }
        if let wholeStoreUploadThreshold { document.policy.wholeStoreUploadAfterChangeSets = wholeStoreUploadThreshold }
        if usesAttachments { document.policy.attachmentThreshold = 256 }
        if let keepsRemovedFilesFor { document.policy.keepsRemovedFilesFor = keepsRemovedFilesFor }
        document.disabledSafeguards = disabledSafeguards
        // Half the clients publish as clients of marker version 1 did: each set read from its file (and faults
        // injected into those reads), every acknowledgement written at once; the others carry their small sets in
        // their markers and acknowledge at the default delay.
        if index % 2 == 0 {
            document.policy.carriesChangeSetsInMarkers = false
            document.policy.acknowledgementDelay = 0
        }
        if resolvesConflicts {
            document.conflictResolver = { conflict in
                guard case .text(let local) = conflict.localValue, case .text(let remote) = conflict.remoteValue else {
                    return nil
                }
                return .merged(.text([local, remote].sorted().joined(separator: "+")))
            }
        }
        self.document = document
        try await document.registerConfigured()
    }

    /// The helper folder of the client's document.
    var helperFolder: URL { folder.appendingPathComponent("helper", isDirectory: true) }

    /// Kills the "process", puts back the copy of its store (and of its helper folder, or none) made in `backup`,
    /// and starts again, as a device restored from a backup is.
    func restore(from backup: URL, helperFolder withHelperFolder: Bool) async throws {
        guard let store = store as? any SnapshottingSimulatorStore else { return }
        document = nil
        self.store = try store.restored(from: backup.appendingPathComponent("store"))
        try? FileManager.default.removeItem(at: helperFolder)
        if withHelperFolder {
            try FileManager.default.copyItem(at: backup.appendingPathComponent("helper"), to: helperFolder)
        }
        try await start()
    }

    /// Puts the store copied into `copy` (and the helper folder copied into `helper`, when given) in place of this
    /// client's fresh ones: a device copied to a second computer, started as a new installation of the same client.
    func startAsCopy(store copy: URL, helperFolder helper: URL?) async throws {
        guard let store = store as? any SnapshottingSimulatorStore else { return }
        self.store = try store.restored(from: copy)
        try? FileManager.default.removeItem(at: helperFolder)
        if let helper { try FileManager.default.copyItem(at: helper, to: helperFolder) }
        try await start()
    }

    /// Kills the "process": forgets the managers and the open store, then reopens both from what was committed.
    func restart() async throws {
        document = nil
        store = try store.restarted()
        try await start()
    }

    func synchronize() async throws -> SyncReport {
        guard let document else { throw SimulationFailure.Detail("client \(identifier) has no document sync manager") }
        return try await document.synchronize()
    }
}
