import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The helper folder's `Installation.plist`: which installation of a client this is, so that two installations that
/// share one client identity find each other.
///
/// A client's identity lives with its data (the app keeps its client identifier, often in its store): copying a
/// device's store, with its helper folder or without, to a second computer and using both gives two installations
/// one identity, which publish different change sets under one number. Each installation carries a random
/// ``identifier`` in every marker it writes (``RecentSync/installation``) and reads its own marker back: a marker
/// another installation wrote after this one announced its own says that the identity is shared
/// (``FolderSyncError/Code/clientIdentityShared``), and one of the two takes a new identity
/// (``DocumentSyncManager/rejoin()``).
///
/// The helper folder can be copied too, so the identifier is bound to where it is (``binding``: the machine, the
/// helper folder's and the store file's device and inode) and made anew when that changes: a copy is a new
/// installation. A store restored in place (the same files put back, or new files on the same machine) may get a
/// new identifier too; it has not announced it yet, so the marker its earlier self wrote is taken for its own past.
struct LocalInstallation: PropertyListPayload {
    static let kind = "localInstallation"
    static let formatVersion = 1

    /// A random identifier (a UUID), carried in every marker this installation writes.
    var identifier: String
    /// Where the identifier was made: the machine, and the device and inode of the helper folder and of the store.
    var binding: String
    /// Whether a marker carrying ``identifier`` was written: from then on, a marker of this client carrying another
    /// identifier was written by another installation.
    var announced: Bool

    /// The installation of the helper folder `layout`, bound to where it is now: the one remembered when its binding
    /// holds, otherwise a new one, saved before it is returned.
    static func current(_ layout: LocalLayout, storePath: String?, makeIdentifier: () -> String) throws
        -> LocalInstallation
    {
        let binding = self.binding(layout, storePath: storePath)
        let file = layout.installationFile
        if let data = try? LocalFiles.read(file),
            let remembered = try? PropertyListFile.decode(LocalInstallation.self, from: data, path: file.path),
            remembered.binding == binding
        {
            return remembered
        }
        let installation = LocalInstallation(identifier: makeIdentifier(), binding: binding, announced: false)
        try installation.save(layout)
        return installation
    }

    /// Saves the installation durably (a marker that announced it must never be taken for another's).
    func save(_ layout: LocalLayout) throws {
        try LocalFiles.createPrivateDirectory(layout.helperDirectory)
        try LocalFiles.writeDurably(try PropertyListFile.encode(self), to: layout.installationFile)
    }

    /// `<machine> <helper folder device:inode> <store device:inode>`; a part that cannot be read is left empty.
    static func binding(_ layout: LocalLayout, storePath: String?) -> String {
        [machine, fileIdentity(layout.helperDirectory.path), storePath.map(fileIdentity) ?? ""].joined(separator: " ")
    }

    /// The machine: its systemd machine identifier, or its host name.
    static let machine: String = {
        if let id = try? String(contentsOfFile: "/etc/machine-id", encoding: .utf8).trimmingCharacters(
            in: .whitespacesAndNewlines),
            !id.isEmpty
        {
            return id
        }
        var name = [CChar](repeating: 0, count: 256)
        guard gethostname(&name, name.count - 1) == 0 else { return "" }
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }()

    private static func fileIdentity(_ path: String) -> String {
        var info = stat()
        guard stat(path, &info) == 0 else { return "" }
        return "\(info.st_dev):\(info.st_ino)"
    }
}
