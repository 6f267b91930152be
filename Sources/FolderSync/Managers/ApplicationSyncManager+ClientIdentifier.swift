public import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ApplicationSyncManager {
    /// The name of the file ``persistentClientIdentifier(in:)`` keeps.
    static let clientIdentifierFileName = "ClientIdentifier"

    /// This installation's client identifier: a UUID made at the first call and kept in `directory` (a file
    /// `ClientIdentifier`, `0600`), the same at every later call, also when two processes ask at once. Pass it as
    /// ``Configuration/clientIdentifier`` at every launch; `directory` is the app's own (Application Support, say),
    /// made if missing.
    ///
    /// - Throws: ``FolderSyncError/Code/corruptFile`` naming the file when it holds no usable identifier (it is left
    ///   as it is: a new identity would make this device a stranger to the folder), and
    ///   ``FolderSyncError/Code/localStoreFailed`` when it cannot be read or written.
    public static func persistentClientIdentifier(in directory: URL) throws -> String {
        let file = directory.appendingPathComponent(clientIdentifierFileName)
        if let existing = try storedClientIdentifier(at: file) { return existing }
        try LocalFiles.createDirectory(directory)
        // Written under a temporary name, then linked into place only if no one else did first.
        let temporary = directory.appendingPathComponent(TemporaryName.make(for: clientIdentifierFileName))
        defer { unlink(temporary.path) }
        try LocalFiles.writeDurably(Data((UUID().uuidString + "\n").utf8), to: temporary)
        guard link(temporary.path, file.path) == 0 || errno == EEXIST else {
            throw LocalFiles.error("create", path: file.path)
        }
        LocalFiles.syncDirectory(directory.path)
        guard let stored = try storedClientIdentifier(at: file) else {
            throw FolderSyncError(
                .localStoreFailed, "the client identifier file vanished while being made", path: file.path)
        }
        return stored
    }

    /// Replaces the identifier ``persistentClientIdentifier(in:)`` keeps in `directory` by `identifier` (durably, in
    /// place): what an app that keeps its identifier there sets as ``clientIdentifierChangeHandler``:
    /// ```swift
    /// app.clientIdentifierChangeHandler = { identifier in
    ///     try ApplicationSyncManager.replacePersistentClientIdentifier(in: directory, with: identifier)
    /// }
    /// ```
    /// - Throws: ``FolderSyncError/Code/invalidIdentifier`` for an unsafe identifier,
    ///   ``FolderSyncError/Code/localStoreFailed`` when the file cannot be written.
    public static func replacePersistentClientIdentifier(in directory: URL, with identifier: String) throws {
        try Identifier.validate(identifier, role: "client identifier")
        try LocalFiles.createDirectory(directory)
        let file = directory.appendingPathComponent(clientIdentifierFileName)
        try LocalFiles.writeDurably(Data((identifier + "\n").utf8), to: file)
    }

    /// The identifier kept in `file`, or `nil` when there is no file.
    private static func storedClientIdentifier(at file: URL) throws -> String? {
        let fd = open(file.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw LocalFiles.error("open", path: file.path)
        }
        defer { close(fd) }
        // a UUID and a newline; never a big file
        let data = try LocalFiles.read(fd, path: file.path, maximumSize: 256)
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty, (try? Identifier.validate(text, role: "client identifier")) != nil else {
            throw FolderSyncError(.corruptFile, "holds no usable client identifier", path: file.path)
        }
        return text
    }
}
