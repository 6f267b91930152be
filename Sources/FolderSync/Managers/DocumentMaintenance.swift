public import Foundation

/// Maintenance of one document on a remote, without a local store or a registration: vacuum, client listing, client
/// deletion.
///
/// The `foldersync` tool uses it directly, so that inspecting a document
/// never registers the operator as a client (a registered client that never
/// syncs would hold vacuum back for ever). ``DocumentSyncManager``'s
/// maintenance methods forward to one. Subclass it and override the factory
/// methods to run backend subclasses of the operations.
///
/// `@unchecked Sendable`: an `open` class cannot be checked `Sendable`; its context and options are `let`s.
open class DocumentMaintenance: DocumentOperation, @unchecked Sendable {
    /// What the maintenance keeps between the operations it runs: where vacuums remember what they verified, and the
    /// safeguards in force. Set before the object is made.
    public struct Options: Sendable {
        /// Where vacuums remember the whole stores they verified (``VacuumOperation/Options/verificationCacheFile``);
        /// `nil` reads every whole store at every vacuum.
        public var verificationCacheFile: URL?
        /// Safeguards switched off in the vacuums and client deletions this runs, for tests that replay their defects.
        package var disabledSafeguards: Set<RemovalSafeguard> = []

        /// Options; see the properties for each argument.
        public init(verificationCacheFile: URL? = nil) {
            self.verificationCacheFile = verificationCacheFile
        }
    }

    /// The shared folder, the document, and who acts (``DocumentOperationContext/clientIdentifier``: a client
    /// identifier or an operator's name, written in the markers this writes).
    public let context: DocumentOperationContext
    /// What the operations this runs share.
    public let options: Options

    /// - Throws: ``FolderSyncError/Code/invalidIdentifier`` for an unsafe document identifier.
    public init(context: DocumentOperationContext, options: Options = Options()) throws {
        _ = try Identifier.validate(context.documentIdentifier, role: "document identifier")
        self.context = context
        self.options = options
    }

    /// Removes what nobody needs any more; in a dry run, only reports it.
    ///
    /// - Parameters:
    ///   - dryRun: compute and report the same plan, deleting and writing nothing.
    ///   - expireClientsAfter: marks clients deleted whose last sync is older than this (they reset when they return).
    ///   - temporaryFileAge: temporaries older than this are interrupted writes.
    ///   - keepRemovedFor: what the vacuum removes stays this long in the document's removed area, and removals older
    ///     than this are purged for good (at least a day; 14 days by default).
    public func vacuum(
        dryRun: Bool = false, expireClientsAfter: TimeInterval? = nil,
        temporaryFileAge: TimeInterval = VacuumOperation.defaultTemporaryFileAge,
        keepRemovedFor: TimeInterval = VacuumOperation.defaultRemovedFileGracePeriod
    ) async throws -> VacuumReport {
        do {
            // Passed to the factory, so that a backend's subclass gets them too.
            var vacuum = VacuumOperation.Options(
                dryRun: dryRun, expireClientsAfter: expireClientsAfter,
                temporaryFileAge: temporaryFileAge, keepRemovedFor: keepRemovedFor,
                verificationCacheFile: options.verificationCacheFile)
            vacuum.disabledSafeguards = options.disabledSafeguards
            return try await vacuumOperation(options: vacuum).run()
        } catch let error as FolderSyncError where error.code == .remoteItemNotFound {
            // A folder that is away (an unmounted share is an empty folder) is not a document without files.
            if try await !fileSystem.exists(layout.formatVersionFile) {
                throw FolderSyncError.applicationFolderAway(layout)
            }
            throw error
        } catch {
            throw FolderSyncError.wrapping(error, "vacuuming document \(documentIdentifier) failed")
                .unavailableIfUnreachable
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
            var deletion = DocumentClientDeletionOperation.Options(deletedClient: identifier)
            deletion.disabledSafeguards = options.disabledSafeguards
            return try await documentClientDeletionOperation(options: deletion).run()
        } catch {
            throw FolderSyncError.wrapping(
                error, "deleting client \(identifier) from document \(documentIdentifier) failed")
        }
    }

    // MARK: Operation factories

    /// Builds the vacuum operation with `options`. Override to return a backend subclass, built with
    /// ``VacuumOperation/init(copying:)`` from the operation this returns.
    open func vacuumOperation(options: VacuumOperation.Options) -> VacuumOperation {
        VacuumOperation(context: context, options: options)
    }

    /// Builds the client listing operation. Override to return a backend subclass.
    open func listOfDocumentRegisteredClientsOperation() -> ListOfDocumentRegisteredClientsOperation {
        ListOfDocumentRegisteredClientsOperation(context: context)
    }

    /// Builds the client deletion operation with `options` (the client to delete). Override to return a backend
    /// subclass, built with ``DocumentClientDeletionOperation/init(copying:)`` from the operation this returns.
    open func documentClientDeletionOperation(options: DocumentClientDeletionOperation.Options)
        -> DocumentClientDeletionOperation
    {
        DocumentClientDeletionOperation(context: context, options: options)
    }
}
