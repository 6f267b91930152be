/// Application-wide maintenance: what TICoreDataSync's application sync manager offered beyond registration.
///
/// These tasks need the manager to be configured, not registered, so a
/// read-only tool can list without writing its own device folder.
extension ApplicationSyncManager {
    private func configuredLayout(_ task: String) throws -> RemoteLayout {
        guard let layout else {
            throw FolderSyncError(.invalidConfiguration, "configure the application sync manager before \(task)")
        }
        return layout
    }

    /// Every client registered with the application, with the documents each is registered with.
    public func registeredClients() async throws -> [ApplicationRegisteredClient] {
        let layout = try configuredLayout("listing clients")
        do {
            return try await listOfApplicationRegisteredClientsOperation(layout: layout).run()
        } catch {
            throw FolderSyncError.wrapping(error, "listing registered clients failed")
        }
    }

    /// The documents on the remote, to pick one to download or delete.
    public func previouslySynchronizedDocuments() async throws -> [SynchronizedDocument] {
        let layout = try configuredLayout("listing documents")
        do {
            return try await listOfPreviouslySynchronizedDocumentsOperation(layout: layout).run()
        } catch {
            throw FolderSyncError.wrapping(error, "listing documents failed")
        }
    }

    /// Deletes a document for every client: they stop with ``FolderSyncError/Code/documentDeleted`` and keep their
    /// data.
    public func deleteDocument(identifier: String) async throws {
        let layout = try configuredLayout("deleting a document")
        do {
            try await documentDeletionOperation(layout: layout, documentIdentifier: identifier).run()
        } catch {
            throw FolderSyncError.wrapping(error, "deleting document \(identifier) failed")
        }
    }

    /// Removes the application's whole remote folder. Clients keep their local data and must register again.
    public func removeAllRemoteSyncData() async throws {
        let layout = try configuredLayout("removing remote data")
        do {
            try await removeAllRemoteSyncDataOperation(layout: layout).run()
        } catch {
            throw FolderSyncError.wrapping(error, "removing all remote sync data failed")
        }
    }
}
