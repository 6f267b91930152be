public import Foundation

/// Maintenance of one document on a remote, without a local store or a registration: vacuum, client listing, client deletion.
///
/// The `foldersync` tool uses it directly, so that inspecting a document
/// never registers the operator as a client (a registered client that never
/// syncs would hold vacuum back for ever). ``DocumentSyncManager``'s
/// maintenance methods forward to one. Subclass it and override the factory
/// methods to run backend subclasses of the operations.
open class DocumentMaintenance: @unchecked Sendable {
    /// The shared folder holding the document.
    public let remote: any RemoteFileSystem
    /// The layout of the application tree the document belongs to.
    public let layout: RemoteLayout
    /// The document maintained: the name of its folder in `Documents/`.
    public let documentIdentifier: String
    /// Who acts (a client identifier or an operator's name), written in the markers this writes.
    public let actorIdentifier: String
    /// Time, identifiers and logging for the operations this runs.
    public let environment: SyncEnvironment
    /// Where vacuums remember the whole stores they verified (``VacuumOperation/verificationCacheFile``); `nil`
    /// reads every whole store at every vacuum.
    public var verificationCacheFile: URL?
    /// Safeguards switched off in the vacuums and client deletions this runs, for tests that replay their defects.
    package var disabledSafeguards: Set<RemovalSafeguard> = []

    /// - Throws: ``FolderSyncError/Code/invalidIdentifier`` for an unsafe document identifier.
    public init(remote: any RemoteFileSystem, layout: RemoteLayout, documentIdentifier: String,
                actorIdentifier: String = "foldersync", environment: SyncEnvironment = .live) throws {
        self.remote = remote
        self.layout = layout
        self.documentIdentifier = try Identifier.validate(documentIdentifier, role: "document identifier")
        self.actorIdentifier = actorIdentifier
        self.environment = environment
    }

    /// Removes what nobody needs any more; in a dry run, only reports it.
    ///
    /// - Parameters:
    ///   - dryRun: compute and report the same plan, deleting and writing nothing.
    ///   - expireClientsAfter: marks clients deleted whose last sync is older than this (they reset when they return).
    ///   - temporaryFileAge: temporaries older than this are interrupted writes.
    ///   - keepRemovedFor: what the vacuum removes stays this long in the document's removed area, and removals older
    ///     than this are purged for good (at least a day; 14 days by default).
    public func vacuum(dryRun: Bool = false, expireClientsAfter: TimeInterval? = nil,
                       temporaryFileAge: TimeInterval = VacuumOperation.defaultTemporaryFileAge,
                       keepRemovedFor: TimeInterval = VacuumOperation.defaultRemovedFileGracePeriod) async throws -> VacuumReport {
        do {
            // Set here, not in the factory, so that a backend's subclass gets them too.
            let operation = vacuumOperation(dryRun: dryRun, expireClientsAfter: expireClientsAfter, temporaryFileAge: temporaryFileAge)
            operation.verificationCacheFile = verificationCacheFile
            operation.keepRemovedFor = keepRemovedFor
            operation.disabledSafeguards = disabledSafeguards
            return try await operation.run()
        } catch let error as FolderSyncError where error.code == .remoteItemNotFound {
            // A folder that is away (an unmounted share is an empty folder) is not a document without files.
            if try await !remote.exists(layout.formatVersionFile) {
                throw FolderSyncError.applicationFolderAway(layout)
            }
            throw error
        } catch {
            throw FolderSyncError.wrapping(error, "vacuuming document \(documentIdentifier) failed").unavailableIfUnreachable
        }
    }

    /// The clients registered with the document, deleted ones included, with what each holds back.
    public func registeredClients() async throws -> [RegisteredClient] {
        do {
            return try await listOfDocumentRegisteredClientsOperation().run()
        } catch {
            throw FolderSyncError.wrapping(error, "listing the clients of document \(documentIdentifier) failed")
        }
    }

    /// Deletes a client from the document; its change sets stay until vacuum finds nobody needs them.
    @discardableResult
    public func deleteClient(_ identifier: String) async throws -> ClientDeletionReport {
        do {
            let operation = documentClientDeletionOperation(clientIdentifier: identifier)
            operation.disabledSafeguards = disabledSafeguards
            return try await operation.run()
        } catch {
            throw FolderSyncError.wrapping(error, "deleting client \(identifier) from document \(documentIdentifier) failed")
        }
    }

    // MARK: Operation factories

    /// Builds the vacuum operation. Override to return a backend subclass.
    open func vacuumOperation(dryRun: Bool, expireClientsAfter: TimeInterval?, temporaryFileAge: TimeInterval) -> VacuumOperation {
        VacuumOperation(fileSystem: remote, layout: layout, documentIdentifier: documentIdentifier, dryRun: dryRun,
                        expireClientsAfter: expireClientsAfter, temporaryFileAge: temporaryFileAge,
                        actorIdentifier: actorIdentifier, environment: environment)
    }

    /// Builds the client listing operation. Override to return a backend subclass.
    open func listOfDocumentRegisteredClientsOperation() -> ListOfDocumentRegisteredClientsOperation {
        ListOfDocumentRegisteredClientsOperation(fileSystem: remote, layout: layout, documentIdentifier: documentIdentifier,
                                                 environment: environment)
    }

    /// Builds the client deletion operation. Override to return a backend subclass.
    open func documentClientDeletionOperation(clientIdentifier: String) -> DocumentClientDeletionOperation {
        DocumentClientDeletionOperation(fileSystem: remote, layout: layout, documentIdentifier: documentIdentifier,
                                        clientIdentifier: clientIdentifier, actorIdentifier: actorIdentifier, environment: environment)
    }
}
