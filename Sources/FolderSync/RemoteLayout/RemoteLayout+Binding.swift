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
        guard components.first == applicationIdentifier else { return RemotePath(trusted: components) }
        if components.count > 3, components[1] == quarantineDirectory.name {
            components.removeSubrange(1...2)
        } else if components.count == 7, components[1] == documentsDirectory.name,
                  components[3] == "TemporaryFiles", components[4] == "WholeStore" {
            components.remove(at: 3)
        }
        return RemotePath(trusted: components)
    }

    /// Whether a file is encrypted in an application that uses encryption: everything but what must be readable
    /// before the key is known (the catalog's `encryptedWhenEnabled`); a file the catalog does not know is encrypted.
    func isEncryptedWhenEnabled(_ path: RemotePath) -> Bool {
        Self.entry(matching: publishedPath(of: path), kind: .file)?.encryptedWhenEnabled ?? true
    }
}
