/// The `relativePathTo…` family of TICoreDataSync's document sync manager.
///
/// Each path is relative to the root of the shared folder and computed by ``RemoteLayout``.
extension DocumentSyncManager {
    private var document: String { documentIdentifier }
    private var client: String { clientIdentifier }

    public var relativePathToClientDevicesDirectory: RemotePath { layout.clientDevicesDirectory }
    public var relativePathToInformationDirectory: RemotePath { layout.informationDirectory }
    public var relativePathToInformationDeletedDocumentsDirectory: RemotePath { layout.deletedDocumentsDirectory }
    public var relativePathToDeletedDocumentsThisDocumentIdentifierPlistFile: RemotePath { layout.deletedDocumentFile(document) }
    public var relativePathToDocumentsDirectory: RemotePath { layout.documentsDirectory }
    public var relativePathToThisDocumentDirectory: RemotePath { layout.documentDirectory(document) }
    public var relativePathToThisDocumentInfoPlistFile: RemotePath { layout.documentInfoFile(document) }
    public var relativePathToThisDocumentIntegrityKeyDirectory: RemotePath { layout.integrityKeyDirectory(document) }
    public var relativePathToThisDocumentDeletedClientsDirectory: RemotePath { layout.deletedClientsDirectory(document) }
    public var relativePathToThisDocumentDeletedClientsThisClientPlistFile: RemotePath {
        layout.deletedClientFile(document, client: client)
    }
    public var relativePathToThisDocumentSyncChangesDirectory: RemotePath { layout.syncChangesDirectory(document) }
    public var relativePathToThisDocumentSyncChangesThisClientDirectory: RemotePath {
        layout.syncChangesDirectory(document, client: client)
    }
    public var relativePathToThisDocumentSyncCommandsDirectory: RemotePath { layout.syncCommandsDirectory(document) }
    public var relativePathToThisDocumentSyncCommandsThisClientDirectory: RemotePath {
        layout.syncCommandsDirectory(document, client: client)
    }
    public var relativePathToThisDocumentWholeStoreDirectory: RemotePath { layout.wholeStoreDirectory(document) }
    public var relativePathToThisDocumentWholeStoreThisClientDirectory: RemotePath {
        layout.wholeStoreDirectory(document, client: client)
    }
    public var relativePathToThisDocumentWholeStoreThisClientDirectoryWholeStoreFile: RemotePath {
        layout.wholeStoreFile(document, client: client)
    }
    public var relativePathToThisDocumentWholeStoreThisClientDirectoryAppliedSyncChangeSetsFile: RemotePath {
        layout.appliedSyncChangeSetsFile(document, client: client)
    }
    public var relativePathToThisDocumentTemporaryFilesDirectory: RemotePath { layout.temporaryFilesDirectory(document) }
    public var relativePathToThisDocumentTemporaryWholeStoreDirectory: RemotePath { layout.temporaryWholeStoreDirectory(document) }
    public var relativePathToThisDocumentTemporaryWholeStoreThisClientDirectory: RemotePath {
        layout.temporaryWholeStoreDirectory(document, client: client)
    }
    public var relativePathToThisDocumentTemporaryWholeStoreThisClientDirectoryWholeStoreFile: RemotePath {
        layout.temporaryWholeStoreFile(document, client: client)
    }
    public var relativePathToThisDocumentTemporaryWholeStoreThisClientDirectoryAppliedSyncChangeSetsFile: RemotePath {
        layout.temporaryAppliedSyncChangeSetsFile(document, client: client)
    }
    public var relativePathToThisDocumentRecentSyncsDirectory: RemotePath { layout.recentSyncsDirectory(document) }
    public var relativePathToThisDocumentRecentSyncsDirectoryThisClientFile: RemotePath {
        layout.recentSyncFile(document, client: client)
    }
}
