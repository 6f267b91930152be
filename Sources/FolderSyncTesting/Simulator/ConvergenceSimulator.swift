@_spi(ModelAdapter) public import FolderSync
public import Foundation

/// A seeded, deterministic multi-client simulation of FolderSync that checks invariants 1 and 2.
///
/// From one seed it derives 3–8 clients (some with clocks a day off, some
/// with a conflict resolver), registers them through the real managers on one
/// remote, then plays a random schedule: inserts, updates and deletes of
/// folders, notes and tags, relationship changes (a note's folder, note–tag
/// join rows), concurrent inserts of one sync ID, refused re-inserts of deleted
/// IDs, syncs in random order, duplicated syncs, syncs cancelled at a random
/// remote request, and process restarts. Then every client syncs twice in turn,
/// and the run checks that
/// - every replica holds the same rows (convergence), and
/// - every committed write still holds its value, or a value with a newer
///   stamp, or its row was deleted (no committed write lost); every committed
///   delete is a tombstone everywhere; nothing is left unpublished. Under
///   ``Configuration/deletePolicy`` `lastWriterWins`, a row holds its writes or
///   was deleted later than them, and a deleted row is gone or written later.
///
/// With ``Configuration/lifecycle`` (stores that take whole stores, such as
/// `GRDBStore`), the schedule also has the document lifecycle: explicit and
/// automatic whole-store uploads, bootstraps of late joiners, vacuums (some
/// expiring silent clients), operator client deletions, remote wipes, and the
/// re-joins that recover from them. Its write journal says what "no write lost"
/// means after each of those.
///
/// A failure is a ``SimulationFailure`` naming the seed; the same seed replays the same schedule.
public struct ConvergenceSimulator: Sendable {
    /// Opens a client's store in `folder` (the same folder across restarts), with `now` as its wall clock.
    public typealias StoreFactory =
        @Sendable (_ folder: URL, _ now: @escaping @Sendable () -> Date) throws -> any SimulatorStore

    /// The remote the simulated clients share.
    public enum Remote: Sendable {
        /// An ``InMemoryFileSystem``.
        case inMemory
        /// A ``/FolderSync/FileManagerFileSystem`` in a `remote` folder of the scratch directory.
        case fileManager
        /// A backend of your own (a server, a mounted share), empty, shared by every client of the run.
        case custom(any RemoteFileSystem)
    }

    /// Builds a client's application sync manager on its remote (the run's remote, wrapped to interrupt syncs).
    public typealias ApplicationManagerFactory =
        @Sendable (_ remote: any RemoteFileSystem, _ environment: SyncEnvironment)
        -> ApplicationSyncManager
    /// Builds a client's document sync manager (not registered yet).
    public typealias DocumentManagerFactory =
        @Sendable (
            _ application: ApplicationSyncManager,
            _ configuration: DocumentSyncManager.Configuration,
            _ store: any ModelAdapter
        ) throws -> DocumentSyncManager

    /// What to simulate: the seed, the scratch folder, the ranges the seed draws from, the remote and the stores.
    public struct Configuration: Sendable {
        /// The seed every random choice derives from; the same seed replays the same schedule.
        public var seed: UInt64
        /// A scratch folder for the clients' helper folders (and the remote, for ``Remote/fileManager``).
        public var directory: URL
        /// The range the number of clients is drawn from.
        public var clients: ClosedRange<Int> = 3...8
        /// The range the number of schedule steps is drawn from (before the final syncs).
        public var steps: ClosedRange<Int> = 30...70
        /// Where the clients' shared remote lives; in memory by default.
        public var remote: Remote = .inMemory
        /// Opens each client's store; ``ConvergenceSimulator/inMemoryStore`` by default. Its tables must have
        /// ``deletePolicy``.
        public var makeStore: StoreFactory = ConvergenceSimulator.inMemoryStore
        /// The delete policy of every table of the stores ``makeStore`` opens (delete wins by default). Under last
        /// writer wins the schedule inserts deleted sync IDs again instead of expecting a refusal, and the final check
        /// takes the newer of a delete and a write as the one that must hold.
        public var deletePolicy: DeletePolicy = .deleteWins
        /// Adds the lifecycle steps; the store must be a ``SnapshottingSimulatorStore``. Off, a seed plays as before.
        public var lifecycle = false
        /// Adds writes that carry attachments: note bodies that are large values (above a 256-byte threshold) and
        /// attached files, a few contents shared by many rows; at the end every client must get each attached
        /// file intact. Off, a seed plays as before.
        public var attachments = false
        /// The wall-clock skews each client draws one of (seconds; a day either way by default). Clocks years apart
        /// show that replicas converge and no write is lost whatever the clocks say.
        public var clockSkews: [TimeInterval] = [0, 0, 86_400, -86_400]
        /// Adds, to the lifecycle steps, backups and restores of clients' stores (with and without their helper
        /// folders) and of the shared folder (file-manager remote): each must heal with no write lost. The store
        /// must be a ``SnapshottingSimulatorStore``. Off, a seed plays as before.
        public var restores = false
        /// Adds, to the lifecycle steps, vacuum hazards (file-manager remote): a whole store damaged in place (same
        /// file, size and times) right after a vacuum verified it, then more syncs and a vacuum that must not remove
        /// anything on its word; or, while it is damaged, a client joining (which uploads a store of its own covering
        /// little), the bytes put back, and the damaged store's uploader deleted, whose store must stay while it alone
        /// holds vacuumed sets. Off, a seed plays as before.
        public var vacuumHazards = false
        /// The safeguards of vacuum and client deletion switched off in every client (``RemovalSafeguard``), to replay
        /// the defects they guard against: the removed area alone must then keep every write.
        package var disabledSafeguards: Set<RemovalSafeguard> = []
        /// Adds outages: the shared folder goes away for a stretch of steps (an empty mount point, the folder moved
        /// away, a server that does not answer) while clients keep writing, syncing and relaunching. Every sync then
        /// must say `remoteUnavailable` and change nothing, nothing may be written into the folder, and no outage
        /// may end in a reset. Off, a seed plays as before.
        public var outages = false
        /// Adds churn to the lifecycle steps: notes inserted and deleted again and again, and explicit tombstone
        /// collections beside the vacuums' (FolderSync's article "Tombstone collection"); after the final rounds,
        /// every client collects once more. The invariants must hold with tombstones gone. Off, a seed plays as before.
        public var churn = false
        /// Adds, to the lifecycle steps, hazards to a client's identity: a client's store (with its helper folder or
        /// without) copied to a new installation of the same client used beside it, which must find out and take a new
        /// identity; one client's change-set folder put back from an older copy, which its author must cover with a
        /// whole store; and a marker forged to acknowledge another client's sets up to a hostile number. Every one must
        /// leave the invariants as they are. The store must be a ``SnapshottingSimulatorStore``; a client folder is put
        /// back only on a file-manager remote. Off, a seed plays as before.
        public var identityHazards = false
        /// Faults injected into every client's remote requests during the random steps (their syncs may then fail
        /// with the injected error, and the next one catches up); off for the final rounds.
        public var faults: FaultMix?
        /// Whether some syncs are cancelled at a random remote request (on by default). A sync makes some requests at
        /// once, so which of them comes Nth, and so whether the sync ends cancelled, can depend on timing: runs that
        /// are compared for equality turn this off (off, a seed plays as if every such step were a plain sync).
        public var interruptions = true
        /// Builds each client's application sync manager: the standard one, or a backend's subclass (which builds its
        /// operation subclasses).
        public var makeApplicationSyncManager: ApplicationManagerFactory = {
            ApplicationSyncManager(remote: $0, environment: $1)
        }
        /// Builds each client's document sync manager: the standard one, or a backend's subclass.
        public var makeDocumentSyncManager: DocumentManagerFactory = {
            try DocumentSyncManager(applicationSyncManager: $0, configuration: $1, store: $2)
        }

        /// A configuration with default ranges, an in-memory remote and in-memory stores.
        /// - Parameters:
        ///   - seed: The seed of the schedule.
        ///   - directory: A scratch folder for the clients' helper folders (and a file-manager remote).
        public init(seed: UInt64, directory: URL) {
            self.seed = seed
            self.directory = directory
        }
    }

    /// What a run did, to show that the schedule exercised what it should.
    public struct Summary: Sendable, Hashable {
        /// How many clients the run had.
        public var clients = 0
        /// How many schedule steps it played, before the final syncs.
        public var steps = 0
        /// App writes: inserts, updates and deletes, refused re-inserts excluded.
        public var writes = 0
        /// App deletes (counted in ``writes`` too).
        public var deletes = 0
        /// Syncs that completed, the final ones included.
        public var syncs = 0
        /// Steps that asked for two syncs, at once or one after the other.
        public var duplicatedSyncs = 0
        /// Syncs cancelled at a remote request.
        public var interruptedSyncs = 0
        /// Simulated process restarts (a store reopened from what it committed).
        public var restarts = 0
        /// Conflicts reported by completed syncs.
        public var conflicts = 0
        /// Inserts of a deleted sync ID that the store refused, as it must under delete wins.
        public var refusedReinserts = 0
        /// Inserts of a deleted sync ID under last writer wins, which bring the row back.
        public var reinserts = 0
        /// Rows every replica holds at the end.
        public var finalRows = 0
        /// Lifecycle steps (zero unless ``Configuration/lifecycle``).
        public var wholeStoreUploads = 0
        /// Whole stores uploaded by syncs, following the upload policy.
        public var automaticWholeStoreUploads = 0
        /// Whole stores installed, by a download or by a sync's bootstrap.
        public var wholeStoreInstalls = 0
        /// Vacuums run.
        public var vacuums = 0
        /// Change sets those vacuums removed.
        public var changeSetsVacuumed = 0
        /// Silent clients those vacuums expired.
        public var expiredClients = 0
        /// Clients deleted by an operator.
        public var clientDeletions = 0
        /// Remote wipes (the document's remote data removed or the document deleted).
        public var wipes = 0
        /// Clients stopped by a reset (``/FolderSync/FolderSyncError`` with a backup kept).
        public var resets = 0
        /// Stopped clients that re-joined.
        public var rejoins = 0
        /// Tombstones collected by explicit collections (zero unless ``Configuration/churn``; the automatic ones
        /// after vacuums are not counted).
        public var tombstonesCollected = 0
        /// Writes of large values and of attached files (zero unless ``Configuration/attachments``).
        public var attachmentWrites = 0
        /// Syncs that failed with an injected fault.
        public var faultedSyncs = 0
        /// Syncs that reported a change stamped far ahead of the syncing client's clock
        /// (``/FolderSync/SyncWarning/Kind/clockSkew``).
        public var clockSkewWarnings = 0
        /// Clients' stores put back to an earlier copy of themselves, as a restore from a backup does (lifecycle).
        public var storeRestores = 0
        /// Syncs that found their store restored and continued after what it had published.
        public var restoredStoresNoticed = 0
        /// The shared folder put back to an earlier copy of itself (lifecycle, file-manager remote).
        public var folderRestores = 0
        /// Outages of the shared folder (zero unless ``Configuration/outages``).
        public var outages = 0
        /// Syncs that found the shared folder away and said so
        /// (``/FolderSync/FolderSyncError/Code/remoteUnavailable``).
        public var unavailableSyncs = 0
        /// Vacuums that removed change sets on the word of a store damaged in place, their safeguards being off
        /// (the configuration's `disabledSafeguards`): the removed area alone kept those writes.
        public var removalsOnDamagedStores = 0
        /// Syncs that applied change sets from the removed area
        /// (``/FolderSync/SyncWarning/Kind/recoveredFromRemoved``).
        public var syncsRecoveredFromRemoved = 0
        /// Change sets a vacuum purged from the removed area, each after the grace period (lifecycle runs).
        public var changeSetsPurged = 0
        /// The most change sets the removed area kept at once (not added up by `+`: the largest of the runs).
        public var changeSetsInRemovedArea = 0
        /// Whole stores damaged in place by a vacuum hazard (zero unless ``Configuration/vacuumHazards``).
        public var storesDamagedInPlace = 0
        /// Vacuums after such damage that read the damaged store and refused it.
        public var damagedStoresRefused = 0
        /// Clients deleted right after another client's join met their damaged store.
        public var deletionsAfterFailedJoin = 0
        /// Installations made as copies of a client's store (zero unless ``Configuration/identityHazards``).
        public var clones = 0
        /// Syncs that stopped because another installation shares their client's identity.
        public var sharedIdentitiesFound = 0
        /// Clients' change-set folders put back from an older copy.
        public var clientFolderRestores = 0
        /// Markers forged to acknowledge another client's sets up to a hostile number.
        public var forgedMarkers = 0
        /// The faults injected, by kind (zero unless ``Configuration/faults``).
        public var faultsInjected: [String: Int] = [:]
        /// The converged rows (not added up by `+`).
        public var rows: [CanonicalRow] = []

        /// An empty summary, to add runs' summaries to.
        public init() {}

        /// Adds up the counts of two runs; keeps the left side's ``rows``.
        public static func + (lhs: Summary, rhs: Summary) -> Summary {
            var sum = lhs
            sum.clients += rhs.clients
            sum.steps += rhs.steps
            sum.writes += rhs.writes
            sum.deletes += rhs.deletes
            sum.syncs += rhs.syncs
            sum.duplicatedSyncs += rhs.duplicatedSyncs
            sum.interruptedSyncs += rhs.interruptedSyncs
            sum.restarts += rhs.restarts
            sum.conflicts += rhs.conflicts
            sum.refusedReinserts += rhs.refusedReinserts
            sum.reinserts += rhs.reinserts
            sum.finalRows += rhs.finalRows
            sum.wholeStoreUploads += rhs.wholeStoreUploads
            sum.automaticWholeStoreUploads += rhs.automaticWholeStoreUploads
            sum.wholeStoreInstalls += rhs.wholeStoreInstalls
            sum.vacuums += rhs.vacuums
            sum.changeSetsVacuumed += rhs.changeSetsVacuumed
            sum.expiredClients += rhs.expiredClients
            sum.clientDeletions += rhs.clientDeletions
            sum.wipes += rhs.wipes
            sum.resets += rhs.resets
            sum.rejoins += rhs.rejoins
            sum.attachmentWrites += rhs.attachmentWrites
            sum.tombstonesCollected += rhs.tombstonesCollected
            sum.faultedSyncs += rhs.faultedSyncs
            sum.clockSkewWarnings += rhs.clockSkewWarnings
            sum.storeRestores += rhs.storeRestores
            sum.restoredStoresNoticed += rhs.restoredStoresNoticed
            sum.folderRestores += rhs.folderRestores
            sum.outages += rhs.outages
            sum.unavailableSyncs += rhs.unavailableSyncs
            sum.storesDamagedInPlace += rhs.storesDamagedInPlace
            sum.damagedStoresRefused += rhs.damagedStoresRefused
            sum.deletionsAfterFailedJoin += rhs.deletionsAfterFailedJoin
            sum.changeSetsPurged += rhs.changeSetsPurged
            sum.syncsRecoveredFromRemoved += rhs.syncsRecoveredFromRemoved
            sum.removalsOnDamagedStores += rhs.removalsOnDamagedStores
            sum.changeSetsInRemovedArea = max(sum.changeSetsInRemovedArea, rhs.changeSetsInRemovedArea)
            sum.clones += rhs.clones
            sum.sharedIdentitiesFound += rhs.sharedIdentitiesFound
            sum.clientFolderRestores += rhs.clientFolderRestores
            sum.forgedMarkers += rhs.forgedMarkers
            sum.faultsInjected.merge(rhs.faultsInjected, uniquingKeysWith: +)
            return sum
        }
    }

    /// The built-in store: an ``InMemoryModelAdapter`` with the ``SimulatedNotes`` tables.
    public static let inMemoryStore: StoreFactory = inMemoryStore(deletePolicy: .deleteWins)

    /// The built-in store with every ``SimulatedNotes`` table under `deletePolicy`.
    public static func inMemoryStore(deletePolicy: DeletePolicy) -> StoreFactory {
        { _, now in InMemoryModelAdapter(tables: SimulatedNotes.tables(deletePolicy: deletePolicy), now: now) }
    }

    /// What this simulator plays.
    public let configuration: Configuration

    /// A simulator of the given configuration; nothing runs before ``run()``.
    public init(_ configuration: Configuration) { self.configuration = configuration }

    /// Plays the schedule of the seed and checks the invariants.
    /// - Throws: ``SimulationFailure`` naming the seed.
    @discardableResult
    public func run() async throws -> Summary {
        let run = SimulationRun(configuration)
        do {
            try await run.play()
            return run.summary
        } catch let failure as SimulationFailure {
            throw failure
        } catch {
            throw SimulationFailure(seed: configuration.seed, message: String(describing: error), trace: run.trace)
        }
    }
}
