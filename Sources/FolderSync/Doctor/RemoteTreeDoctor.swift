public import Foundation

/// Checks a shared tree against the layout catalog and the invariants, and repairs what is safe.
///
/// It reads with the same code sync uses (``RemoteLayout/entry(matching:kind:)``,
/// ``ChangeSetReader``, ``PropertyListFile``), so its verdict is sync's verdict.
/// `foldersync doctor` is a thin shell around it; an app can run it too.
/// ``examine(document:)`` never writes; ``repair(_:)`` only moves abandoned
/// temporaries and corrupt files into the removed areas and puts back change
/// sets a removed area keeps for a gap, and says what it did.
@_spi(Tooling) public struct RemoteTreeDoctor: Sendable {
    /// The remote whose tree is examined.
    public let fileSystem: any RemoteFileSystem
    /// The layout of the application examined.
    public let layout: RemoteLayout
    /// Temporaries younger than this may belong to a writer that is publishing right now: they are kept.
    public var temporaryFileGracePeriod: TimeInterval = 3600
    /// The clock that ages temporaries and names quarantine folders.
    public var now: @Sendable () -> Date

    /// - Throws: ``FolderSyncError/Code/invalidIdentifier`` for an unsafe application identifier.
    public init(
        fileSystem: any RemoteFileSystem, applicationIdentifier: String,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        self.fileSystem = fileSystem
        self.layout = try RemoteLayout(applicationIdentifier: applicationIdentifier)
        self.now = now
    }

    /// Checks the application's tree, or only the application-level files and one document's folder.
    ///
    /// - Throws: a ``FolderSyncError`` when the tree cannot be checked at all (the application
    ///   folder is missing, the remote cannot be listed or read); problems in files are findings.
    public func examine(document: String? = nil) async throws -> DoctorReport {
        if let document { try Identifier.validate(document, role: "document identifier") }
        var examination = Examination(layout: layout, documentFilter: document)
        guard try await fileSystem.item(at: layout.applicationDirectory)?.kind == .directory else {
            throw FolderSyncError(
                .remoteItemNotFound, "the shared folder holds no application \(layout.applicationIdentifier)",
                path: layout.applicationDirectory.description)
        }
        if let document, try await fileSystem.item(at: layout.documentDirectory(document)) == nil {
            throw FolderSyncError(
                .remoteItemNotFound, "the application has no document \(document)",
                path: layout.documentDirectory(document).description)
        }
        // The version comes first: in a newer layout, nothing else can be judged.
        if try await checkFormatVersion(&examination) {
            try await walk(layout.applicationDirectory, &examination)
            try await checkFiles(&examination)
            try await checkDocuments(&examination)
            try await checkRemovedAreas(&examination)
        }
        let findings = examination.findings.sorted {
            ($0.path, $0.check.rawValue, $0.message) < ($1.path, $1.check.rawValue, $1.message)
        }
        return DoctorReport(
            applicationIdentifier: layout.applicationIdentifier,
            documents: examination.documents.sorted(), findings: findings)
    }

    /// Returns `false` when the tree's layout is newer than this build's.
    private func checkFormatVersion(_ examination: inout Examination) async throws -> Bool {
        let path = layout.formatVersionFile
        do {
            guard let data = try await fileSystem.readIfPresent(path, maximumSize: PropertyListFile.maximumByteCount)
            else {
                examination.add(
                    .warning, .formatVersionMissing, path,
                    "FormatVersion.plist is missing: the tree's creation never finished, or the file was removed")
                return true
            }
            _ = try FormatVersionInfo.decodeSupported(data, path: path.description)
            return true
        } catch FolderSyncError.Code.unsupportedFormatVersion {
            examination.add(
                .error, .formatVersionTooNew, path,
                "the tree uses a layout newer than version \(RemoteLayout.formatVersion), the newest this build understands; "
                    + "nothing else was checked (use a newer foldersync)")
            return false
        } catch FolderSyncError.Code.corruptFile {
            // Not quarantined: every client needs this file to register; restore it by hand.
            examination.add(
                .error, .corruptPropertyList, path, "FormatVersion.plist cannot be decoded; restore it from a backup")
            return true
        }
    }

    // MARK: Walking the tree

    /// Classifies every item under `directory` with the catalog; descends into known folders.
    private func walk(_ directory: RemotePath, _ examination: inout Examination) async throws {
        let items = try await fileSystem.contentsOfDirectoryIfPresent(at: directory).sorted { $0.name < $1.name }
        for item in items {
            let path = directory.appending(item.name)
            let kind: RemoteLayoutEntry.Kind = item.kind == .directory ? .directory : .file
            if let filter = examination.documentFilter, path.parent == layout.documentsDirectory, item.name != filter {
                continue
            }
            if TemporaryName.isTemporary(item.name) {
                checkTemporary(path, item, &examination)
                continue
            }
            guard let entry = RemoteLayout.entry(matching: path, kind: kind) else {
                reportUnknown(path, kind: kind, &examination)
                continue
            }
            if path.parent == layout.quarantineDirectory {
                // A repair's batch: kept for people to inspect, never read or judged.
                examination.add(
                    .info, .quarantined, path, "files quarantined by an earlier repair; delete them once inspected")
                continue
            }
            if entry.pattern.hasSuffix("Removed/<day>/<removal>/") {
                // What it holds was removed: judged by checkRemovedAreas, never as live files.
                continue
            }
            if path.parent == layout.documentsDirectory { examination.documents.insert(item.name) }
            examination.items.append(.init(path: path, entry: entry, item: item))
            if kind == .directory { try await walk(path, &examination) }
        }
    }

    private func checkTemporary(_ path: RemotePath, _ item: RemoteItem, _ examination: inout Examination) {
        let what = item.kind == .directory ? "temporary folder" : "temporary file"
        guard let modified = item.modificationDate else {
            examination.add(.warning, .temporaryFile, path, "\(what) of unknown age: kept, it may be being written")
            return
        }
        let age = now().timeIntervalSince(modified)
        if age > temporaryFileGracePeriod {
            examination.add(
                .warning, .temporaryFile, path,
                "\(what) abandoned \(Self.describe(age)) ago by an interrupted writer", repair: .remove)
        } else {
            examination.add(
                .info, .temporaryFile, path,
                "\(what) \(Self.describe(max(0, age))) old: a writer may be publishing it now")
        }
    }

    private func reportUnknown(_ path: RemotePath, kind: RemoteLayoutEntry.Kind, _ examination: inout Examination) {
        let other: RemoteLayoutEntry.Kind = kind == .file ? .directory : .file
        if RemoteLayout.entry(matching: path, kind: other) != nil {
            examination.add(
                .warning, .misplacedFile, path,
                kind == .file ? "a file where the layout expects a folder" : "a folder where the layout expects a file")
        } else if let look = Self.lookalike(path.name) {
            examination.add(
                .warning, .misplacedFile, path,
                "looks like \(look) but is not where the layout puts one; sync ignores it")
        } else {
            examination.add(
                .warning, .unknownFile, path,
                "the layout has no such \(kind == .file ? "file" : "folder"); sync ignores it (left in place)")
        }
    }

    /// What a misplaced file seems to be, judged by its name.
    private static func lookalike(_ name: String) -> String? {
        if RemoteLayout.parseChangeSetFileName(name) != nil { return "a change set" }
        if RemoteLayout.parseRecentSyncFileName(name) != nil { return "a recent-sync marker" }
        if name.hasSuffix(".ticdsync") { return "a whole-store file" }
        if ["deviceInfo.plist", "documentInfo.plist", "FormatVersion.plist"].contains(name) { return "a \(name)" }
        return nil
    }

    static func describe(_ interval: TimeInterval) -> String {
        switch interval {
        case ..<120: return "\(Int(interval)) s"
        case ..<7200: return "\(Int(interval / 60)) min"
        case ..<172_800: return "\(Int(interval / 3600)) h"
        default: return "\(Int(interval / 86400)) days"
        }
    }
}

/// What one run of the doctor has seen and found so far.
struct Examination {
    struct Walked {
        var path: RemotePath
        var entry: RemoteLayoutEntry
        var item: RemoteItem
    }

    let layout: RemoteLayout
    let documentFilter: String?
    var findings: [DoctorFinding] = []
    var documents = Set<String>()
    /// Every item the catalog knows, folders included, in walk order.
    var items: [Walked] = []
    /// Per document, what the file checks decoded.
    var documentFacts: [String: DocumentFacts] = [:]
    /// Clients with a `deviceInfo.plist`.
    var registeredClients = Set<String>()
    /// Documents with a deletion marker (`Information/DeletedDocuments/<document>.plist`), readable or not.
    var deletedDocuments = Set<String>()

    mutating func add(
        _ severity: DoctorFinding.Severity, _ check: DoctorFinding.Check, _ path: RemotePath, _ message: String,
        repair: DoctorFinding.Repair? = nil
    ) {
        findings.append(DoctorFinding(severity, check, path: path.description, message, repair: repair))
    }
}

/// What the doctor learned about one document from its files.
struct DocumentFacts {
    struct ChangeSet {
        var path: RemotePath
        var sequence: Int64
        /// `nil` when the file failed verification.
        var header: ChangeSetHeader?
    }

    var hasDocumentInfo = false
    var documentInfo: DocumentInfo?
    var integrityKeyInInfo: String? { documentInfo?.integrityKey }
    var integrityKeys: [String] = []
    /// Per client folder of `SyncChanges/`.
    var changeSets: [String: [ChangeSet]] = [:]
    var recentSyncs: [String: RecentSync] = [:]
    var manifests: [WholeStoreManifest] = []
    var deletedClients = Set<String>()
    /// Clients with any file or folder of their own in the document.
    var clients = Set<String>()
}
