extension RemoteLayout {
    /// The path a file's contents belong to, which encryption binds them to, so a file moved or swapped fails to open.
    ///
    /// Most files are written where they are read. Three kinds are written elsewhere first and moved, so they are
    /// bound to where they end up: a temporary (``TemporaryName``) to the name it is published under, a staged
    /// whole-store file (`TemporaryFiles/WholeStore/<client>/`) to `WholeStore/<client>/`, and a quarantined file
    /// (`Quarantine/<timestamp>/`) to the place it was moved from.
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
