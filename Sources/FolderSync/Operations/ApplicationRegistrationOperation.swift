public import Foundation

/// Registers a client with an application on the remote, creating the application's tree the first time.
///
/// The algorithm (``run()``) is fixed; the backend steps it calls are
/// `open`, each with a default written against ``RemoteFileSystem``. A
/// backend that can do better overrides steps; a plain backend overrides nothing.
///
/// The first client creates the folders and `ReadMe.txt`, then publishes
/// `FormatVersion.plist` last, so a tree with a format version is complete.
/// Later clients only write their own `ClientDevices/<client>/` folder.
open class ApplicationRegistrationOperation: @unchecked Sendable {
    /// The remote the operation works on; the default backend steps call it.
    public let fileSystem: any RemoteFileSystem
    /// Where the application's files are in the remote tree.
    public let layout: RemoteLayout
    /// What this client writes to `ClientDevices/<client>/deviceInfo.plist`.
    public let deviceInfo: DeviceInfo
    /// The clock, identifier source and logger the operation uses.
    public let environment: SyncEnvironment

    /// An operation ready to ``run()``; see the properties for each argument.
    public init(fileSystem: any RemoteFileSystem, layout: RemoteLayout, deviceInfo: DeviceInfo, environment: SyncEnvironment) {
        self.fileSystem = fileSystem
        self.layout = layout
        self.deviceInfo = deviceInfo
        self.environment = environment
    }

    /// Runs the registration algorithm.
    public func run() async throws {
        let versionPath = layout.formatVersionFile
        if let data = try await fetchFormatVersionFile() {
            try checkFormatVersion(data, path: versionPath)
        } else {
            environment.logger.info("Creating the remote tree of \(layout.applicationIdentifier)")
            try await createApplicationDirectories()
            try await writeReadMeFileIfAbsent(Data(Self.readMe(for: layout.applicationIdentifier).utf8))
            let info = FormatVersionInfo(layoutVersion: RemoteLayout.formatVersion,
                                         createdByClient: deviceInfo.clientIdentifier,
                                         creationDate: environment.now().wholeSeconds)
            let data = try PropertyListFile.encode(info)
            if try await !publishFormatVersionFileIfAbsent(data) {
                // Another client created the tree at the same moment: check its version instead.
                guard let existing = try await fetchFormatVersionFile() else {
                    throw FolderSyncError(.remoteIOFailed, "the format version file vanished while being created", path: versionPath.description)
                }
                try checkFormatVersion(existing, path: versionPath)
            }
        }
        try await createClientDeviceDirectory()
        try await writeDeviceInfoFile(try PropertyListFile.encode(deviceInfo))
    }

    private func checkFormatVersion(_ data: Data, path: RemotePath) throws {
        _ = try FormatVersionInfo.decodeSupported(data, path: path.description)
    }

    // MARK: Backend steps

    /// Reads `FormatVersion.plist`, or returns `nil` when the application has no tree yet.
    open func fetchFormatVersionFile() async throws -> Data? {
        try await fileSystem.readIfPresent(layout.formatVersionFile)
    }

    /// Creates the application's folders (idempotent).
    open func createApplicationDirectories() async throws {
        for directory in [layout.applicationDirectory, layout.clientDevicesDirectory,
                          layout.deletedDocumentsDirectory, layout.documentsDirectory] {
            try await fileSystem.createDirectory(at: directory)
        }
    }

    /// Writes `ReadMe.txt` unless some client already did.
    open func writeReadMeFileIfAbsent(_ data: Data) async throws {
        _ = try await fileSystem.publishIfAbsent(data, to: layout.readMeFile)
    }

    /// Publishes `FormatVersion.plist` if absent; returns `false` when another client published it first.
    open func publishFormatVersionFileIfAbsent(_ data: Data) async throws -> Bool {
        try await fileSystem.publishIfAbsent(data, to: layout.formatVersionFile)
    }

    /// Creates `ClientDevices/<client>/`.
    open func createClientDeviceDirectory() async throws {
        try await fileSystem.createDirectory(at: layout.clientDeviceDirectory(deviceInfo.clientIdentifier))
    }

    /// Writes `ClientDevices/<client>/deviceInfo.plist`, replacing an earlier one.
    open func writeDeviceInfoFile(_ data: Data) async throws {
        try await fileSystem.write(data, to: layout.deviceInfoFile(deviceInfo.clientIdentifier))
    }

    static func readMe(for applicationIdentifier: String) -> String {
        """
        This folder holds the data that FolderSync synchronizes for the application
        "\(applicationIdentifier)" between devices.

        Do not edit, add, move or delete anything in it by hand: every device reads
        these files, and a change made here can stop them syncing. To inspect,
        vacuum, delete a client or repair this folder, use the `foldersync` tool.

        Layout version \(RemoteLayout.formatVersion). See FormatVersion.plist.

        """
    }
}
