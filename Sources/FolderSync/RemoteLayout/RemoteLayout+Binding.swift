extension RemoteLayout {
    /// The path a file's contents belong to, which encryption binds them to, so a file moved or swapped fails to open.
    ///
    /// Most files are written where they are read. Some are written elsewhere first and moved, so they are bound to
    /// where they end up: a temporary (``TemporaryName``) to the name it is published under, a staged whole-store
    /// file (`TemporaryFiles/WholeStore/<client>/`) to `WholeStore/<client>/`. Others are moved away and stay bound
    /// to the place they were moved from: a quarantined file (`Quarantine/<timestamp>/`) and a removed one
    /// (`Removed/<day>/<removal>/`, of a document or of the application), which is therefore checked, wherever it
    /// is read from, exactly as the file it was.
    func publishedPath(of path: RemotePath) -> RemotePath {
        var components = path.components
        if let last = components.last, let final = TemporaryName.finalName(of: last) {
            components[components.count - 1] = final
        }
        let named = RemotePath(trusted: components)
        guard components.first == applicationIdentifier else { return named }
        if components.count > 3, components[1] == quarantineDirectory.name {
            components.removeSubrange(1...2)
            return RemotePath(trusted: components)
        }
        // A removed area keeps each file bound to where it was published: `Removed/<day>/<removal>/` drops out.
        if components.count > 4, components[1] == Self.removedFolderName {
            components.removeSubrange(1...3)
            return RemotePath(trusted: components)
        }
        if components.count > 6, components[1] == documentsDirectory.name, components[3] == Self.removedFolderName {
            components.removeSubrange(3...5)
            return RemotePath(trusted: components)
        }
        if components.count == 7, named.parent == temporaryWholeStoreDirectory(components[2], client: components[5]) {
            return wholeStoreDirectory(components[2], client: components[5]).appending(named.name)
        }
        return named
    }

    /// Whether a file is encrypted in an application that uses encryption: everything but what must be readable
    /// before the key is known (the catalog's `encryptedWhenEnabled`); a file the catalog does not know is encrypted.
    func isEncryptedWhenEnabled(_ path: RemotePath) -> Bool {
        Self.entry(matching: publishedPath(of: path), kind: .file)?.encryptedWhenEnabled ?? true
    }
}
