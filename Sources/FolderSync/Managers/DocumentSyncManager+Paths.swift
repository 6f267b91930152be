/// The `relativePathTo…` family of TICoreDataSync's document sync manager.
///
/// Each path is relative to the root of the shared folder and computed by ``RemoteLayout``.
extension DocumentSyncManager {
    private var document: String { documentIdentifier }
    private var client: String { clientIdentifier }

    /// `<appID>/ClientDevices/`: one folder per registered client.
    public var relativePathToClientDevicesDirectory: RemotePath { layout.clientDevicesDirectory }
    /// `<appID>/Information/`: application-wide information.
    public var relativePathToInformationDirectory: RemotePath { layout.informationDirectory }
    /// `<appID>/Information/DeletedDocuments/`: markers of deleted documents.
    public var relativePathToInformationDeletedDocumentsDirectory: RemotePath { layout.deletedDocumentsDirectory }
    /// `Information/DeletedDocuments/<document>.plist`: the marker written if this document is deleted.
    public var relativePathToDeletedDocumentsThisDocumentIdentifierPlistFile: RemotePath {
        layout.deletedDocumentFile(document)
    }
    /// `<appID>/Documents/`: one folder per synchronized document.
    public var relativePathToDocumentsDirectory: RemotePath { layout.documentsDirectory }
    /// `Documents/<document>/`: this document's folder.
    public var relativePathToThisDocumentDirectory: RemotePath { layout.documentDirectory(document) }
    /// `<document>/documentInfo.plist`: this document's description, user info and integrity key.
    public var relativePathToThisDocumentInfoPlistFile: RemotePath { layout.documentInfoFile(document) }
    /// `<document>/IntegrityKey/`: holds the one file named by this document's integrity key.
    public var relativePathToThisDocumentIntegrityKeyDirectory: RemotePath { layout.integrityKeyDirectory(document) }
    /// `<document>/DeletedClients/`: markers of clients deleted from this document.
    public var relativePathToThisDocumentDeletedClientsDirectory: RemotePath {
        layout.deletedClientsDirectory(document)
    }
    /// `<document>/DeletedClients/<client>.plist`: the marker written if this client is deleted from the document.
    public var relativePathToThisDocumentDeletedClientsThisClientPlistFile: RemotePath {
        layout.deletedClientFile(document, client: client)
    }
    /// `<document>/SyncChanges/`: every client's change sets, one folder per client.
    public var relativePathToThisDocumentSyncChangesDirectory: RemotePath { layout.syncChangesDirectory(document) }
    /// `<document>/SyncChanges/<client>/`: the change sets this client publishes.
    public var relativePathToThisDocumentSyncChangesThisClientDirectory: RemotePath {
        layout.syncChangesDirectory(document, client: client)
    }
    /// `<document>/SyncCommands/`: commands for clients (kept for TICoreDataSync's layout).
    public var relativePathToThisDocumentSyncCommandsDirectory: RemotePath { layout.syncCommandsDirectory(document) }
    /// `<document>/SyncCommands/<client>/`: commands addressed to this client.
    public var relativePathToThisDocumentSyncCommandsThisClientDirectory: RemotePath {
        layout.syncCommandsDirectory(document, client: client)
    }
    /// `<document>/WholeStore/`: whole stores, one folder per client that uploaded one.
    public var relativePathToThisDocumentWholeStoreDirectory: RemotePath { layout.wholeStoreDirectory(document) }
    /// `<document>/WholeStore/<client>/`: this client's whole store.
    public var relativePathToThisDocumentWholeStoreThisClientDirectory: RemotePath {
        layout.wholeStoreDirectory(document, client: client)
    }
    /// `<document>/WholeStore/<client>/WholeStore.ticdsync`: this client's snapshot.
    public var relativePathToThisDocumentWholeStoreThisClientDirectoryWholeStoreFile: RemotePath {
        layout.wholeStoreFile(document, client: client)
    }
    /// `<document>/WholeStore/<client>/AppliedSyncChangeSets.ticdsync`: the manifest of this client's snapshot.
    public var relativePathToThisDocumentWholeStoreThisClientDirectoryAppliedSyncChangeSetsFile: RemotePath {
        layout.appliedSyncChangeSetsFile(document, client: client)
    }
    /// `<document>/TemporaryFiles/`: the document's staging area.
    public var relativePathToThisDocumentTemporaryFilesDirectory: RemotePath {
        layout.temporaryFilesDirectory(document)
    }
    /// `<document>/TemporaryFiles/WholeStore/`: where whole stores are staged.
    public var relativePathToThisDocumentTemporaryWholeStoreDirectory: RemotePath {
        layout.temporaryWholeStoreDirectory(document)
    }
    /// `TemporaryFiles/WholeStore/<client>/`: where this client stages its next whole store.
    public var relativePathToThisDocumentTemporaryWholeStoreThisClientDirectory: RemotePath {
        layout.temporaryWholeStoreDirectory(document, client: client)
    }
    /// `TemporaryFiles/WholeStore/<client>/WholeStore.ticdsync`: this client's snapshot being staged.
    public var relativePathToThisDocumentTemporaryWholeStoreThisClientDirectoryWholeStoreFile: RemotePath {
        layout.temporaryWholeStoreFile(document, client: client)
    }
    /// `TemporaryFiles/WholeStore/<client>/AppliedSyncChangeSets.ticdsync`: the manifest being staged with it.
    public var relativePathToThisDocumentTemporaryWholeStoreThisClientDirectoryAppliedSyncChangeSetsFile: RemotePath {
        layout.temporaryAppliedSyncChangeSetsFile(document, client: client)
    }
    /// `<document>/RecentSyncs/`: one recent-sync marker per client.
    public var relativePathToThisDocumentRecentSyncsDirectory: RemotePath { layout.recentSyncsDirectory(document) }
    /// `<document>/RecentSyncs/<client>.recentsync`: this client's recent-sync marker.
    public var relativePathToThisDocumentRecentSyncsDirectoryThisClientFile: RemotePath {
        layout.recentSyncFile(document, client: client)
    }
}
