extension RemoteLayout {
    /// The applications a shared folder holds: the top-level folders with a valid identifier
    /// that hold `FormatVersion.plist`, `ClientDevices/` or `Documents/`, sorted.
    ///
    /// Tools use it to pick the application when the operator names none; other top-level
    /// folders (a `lost+found`, a desktop agent's own folder) are not applications.
    public static func applicationIdentifiers(in fileSystem: some RemoteFileSystem) async throws -> [String] {
        var found: [String] = []
        for item in try await fileSystem.contentsOfDirectory(at: .root) where item.kind == .directory {
            guard let layout = try? RemoteLayout(applicationIdentifier: item.name) else { continue }
            let names = Set(
                try await fileSystem.contentsOfDirectoryIfPresent(at: layout.applicationDirectory).map(\.name))
            if !names.isDisjoint(with: ["FormatVersion.plist", "ClientDevices", "Documents"]) {
                found.append(item.name)
            }
        }
        return found.sorted()
    }
}
