import Foundation

/// Everything a document's operations receive from their manager, in one value: where and as whom they work,
/// the manager's policy, and where their progress events go.
///
/// A backend subclass is built from the standard operation the manager's factory made
/// (``SynchronizationOperation/init(copying:)`` and the like), so it receives this same context and the same
/// options, and with them every setting, including those a later version adds.
public struct DocumentOperationContext: Sendable {
    /// The remote the operations work on: the backend, or the encrypting file system wrapped around it.
    public var fileSystem: any RemoteFileSystem
    /// Where the application's files are in the remote tree.
    public var layout: RemoteLayout
    /// The document concerned: the name of its folder in `Documents/`.
    public var documentIdentifier: String
    /// This client's identifier, naming the files only it writes.
    public var clientIdentifier: String
    /// This client's helper folder for the document.
    public var localLayout: LocalLayout
    /// The clock, identifier source and logger the operations use.
    public var environment: SyncEnvironment
    /// The manager's policy: attachment threshold and downloads, whole-store compression.
    public var policy: SyncPolicy
    /// Publishes progress events to the manager's ``DocumentSyncManager/events()`` streams.
    public var emit: @Sendable (SyncEvent) -> Void

    /// A context; see the properties for each argument.
    public init(
        fileSystem: any RemoteFileSystem, layout: RemoteLayout, documentIdentifier: String, clientIdentifier: String,
        localLayout: LocalLayout, environment: SyncEnvironment, policy: SyncPolicy = SyncPolicy(),
        emit: @escaping @Sendable (SyncEvent) -> Void = { _ in }
    ) {
        self.fileSystem = fileSystem
        self.layout = layout
        self.documentIdentifier = documentIdentifier
        self.clientIdentifier = clientIdentifier
        self.localLayout = localLayout
        self.environment = environment
        self.policy = policy
        self.emit = emit
    }

    /// A context for the operations that keep nothing on this device: vacuum, the client listing, client and document
    /// deletion, run by the `foldersync` tool or by a manager. `clientIdentifier` is who acts (a client identifier or
    /// an operator's name), written in the markers they write. They have no helper folder: ``localLayout`` is one
    /// under the system's temporary folder, which none of them reads or writes.
    public init(
        fileSystem: any RemoteFileSystem, layout: RemoteLayout, documentIdentifier: String, clientIdentifier: String,
        environment: SyncEnvironment = .live
    ) {
        let unused = FileManager.default.temporaryDirectory.appendingPathComponent(
            "FolderSync-no-helper-folder", isDirectory: true)
        self.init(
            fileSystem: fileSystem, layout: layout, documentIdentifier: documentIdentifier,
            clientIdentifier: clientIdentifier, localLayout: LocalLayout(helperDirectory: unused),
            environment: environment)
    }
}

/// An operation on one document, set up by a ``DocumentOperationContext``: what its steps read of the context.
/// Every document operation takes one, and its settings in an `Options` value of its own when it has any.
///
/// The operation classes are `@unchecked Sendable`, and need to be: a run calls its steps from several tasks or
/// threads at once (a sync uploads four change sets at a time and encodes staged changes on a thread of its own,
/// a vacuum deletes eight files at a time), so the operation is shared between them, and an `open` class cannot
/// be checked `Sendable`. What they share is immutable (the context, the store, the options); what a run changes
/// (its report, what it downloaded) is a value of that run, changed only by the task that runs `run()`.
public protocol DocumentOperation: AnyObject {
    /// Where and as whom the operation works, the manager's policy, and where events go.
    var context: DocumentOperationContext { get }
}

extension DocumentOperation {
    /// The remote the operation works on; the default backend steps call it.
    public var fileSystem: any RemoteFileSystem { context.fileSystem }
    /// Where the application's files are in the remote tree.
    public var layout: RemoteLayout { context.layout }
    /// The document concerned: the name of its folder in `Documents/`.
    public var documentIdentifier: String { context.documentIdentifier }
    /// This client's identifier, naming the files only it writes.
    public var clientIdentifier: String { context.clientIdentifier }
    /// This client's helper folder for the document.
    public var localLayout: LocalLayout { context.localLayout }
    /// The clock, identifier source and logger the operation uses.
    public var environment: SyncEnvironment { context.environment }
    /// Publishes progress events to the manager's ``DocumentSyncManager/events()`` streams.
    public var emit: @Sendable (SyncEvent) -> Void { context.emit }
    /// `BLOB` values of at least this many bytes travel as attachments, in change sets and whole stores (`nil`: never).
    var attachmentThreshold: Int? { context.policy.attachmentThreshold }
    /// When attached files are fetched (``SyncPolicy/attachmentDownloads``).
    var attachmentDownloads: AttachmentDownloadPolicy { context.policy.attachmentDownloads }
}
