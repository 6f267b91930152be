/// One problem (or remark) `RemoteTreeDoctor` found in a shared tree, about one path.
///
/// Findings are plain data so that an app can show them and `foldersync doctor --json`
/// can print them; ``check`` is stable across versions, ``message`` is for people.
@_spi(Tooling) public struct DoctorFinding: Hashable, Sendable, Codable {
    /// How bad it is. `info` is not a problem (a file being written right now, quarantined files).
    public enum Severity: String, Hashable, Sendable, Codable, CaseIterable {
        /// Not a problem: worth knowing only (a file being written, quarantined files).
        case info
        /// A problem sync ignores or works around: an unknown or misplaced file, an abandoned temporary, a newer
        /// format.
        case warning
        /// Damage sync cannot work around: a corrupt file, a sequence gap, a missing or mismatched integrity key.
        case error
    }

    /// What `repair` would do about it; `nil` when only a person can fix it. Nothing is deleted: what a repair takes
    /// away goes into a removed area, as vacuum's removals do.
    public enum Repair: String, Hashable, Sendable, Codable {
        /// Move an abandoned temporary file (older than the grace period) into the removed area.
        case remove
        /// Move a corrupt file into the removed area (its document's `Removed/`, or the application's), under its
        /// original path.
        case quarantine
        /// Put a file of a removed area back where it was removed from (a change set a gap lacks), unless something is
        /// there again.
        case restore
        /// Write the key `documentInfo.plist` names into the empty `IntegrityKey/` of a document whose creation
        /// stopped half way (what its creator would have written, and what the next client to sync writes too).
        case writeIntegrityKey
    }

    /// Which check found it: a stable name, safe to compare and persist.
    public struct Check: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(from decoder: any Decoder) throws {
            rawValue = try decoder.singleValueContainer().decode(String.self)
        }
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(rawValue)
        }
        public var description: String { rawValue }

        /// A file or folder the layout catalog does not know.
        public static let unknownFile = Check(rawValue: "unknownFile")
        /// A file that looks like a layout file (a change set, a marker…) but is not where the layout puts it.
        public static let misplacedFile = Check(rawValue: "misplacedFile")
        /// A temporary left by a writer (``TemporaryName``); abandoned when older than the grace period.
        public static let temporaryFile = Check(rawValue: "temporaryFile")
        /// A change set that fails verification (truncated, checksum, malformed header).
        public static let corruptChangeSet = Check(rawValue: "corruptChangeSet")
        /// A property list that fails to decode or fails its checksum.
        public static let corruptPropertyList = Check(rawValue: "corruptPropertyList")
        /// A file in a format version newer than this build reads; left alone, a newer client reads it.
        public static let unsupportedVersion = Check(rawValue: "unsupportedVersion")
        /// A file whose contents name another client or document than its path does.
        public static let identityMismatch = Check(rawValue: "identityMismatch")
        /// An attachment whose name is not a SHA-256, or whose contents do not hash to its name.
        public static let corruptAttachment = Check(rawValue: "corruptAttachment")
        /// A whole store that is missing, damaged or does not match its manifest: it covers nothing.
        public static let corruptWholeStore = Check(rawValue: "corruptWholeStore")
        /// A change set whose header disagrees with its name or folder: no client applies it.
        public static let unappliableChangeSet = Check(rawValue: "unappliableChangeSet")
        /// A change set recorded with a schema version above every client's: nobody can apply it yet.
        public static let schemaTooNew = Check(rawValue: "schemaTooNew")
        /// A client's change sets skip a sequence that no whole store covers.
        public static let sequenceGap = Check(rawValue: "sequenceGap")
        /// Two change sets of one client carry the same sequence.
        public static let duplicateSequence = Check(rawValue: "duplicateSequence")
        /// The document has no integrity key file.
        public static let integrityKeyMissing = Check(rawValue: "integrityKeyMissing")
        /// The document has more than one integrity key file.
        public static let integrityKeyDuplicated = Check(rawValue: "integrityKeyDuplicated")
        /// The integrity key file differs from the key in `documentInfo.plist`.
        public static let integrityKeyMismatch = Check(rawValue: "integrityKeyMismatch")
        /// A document folder without `documentInfo.plist`.
        public static let documentInfoMissing = Check(rawValue: "documentInfoMissing")
        /// The application has no `FormatVersion.plist` (its creation never finished).
        public static let formatVersionMissing = Check(rawValue: "formatVersionMissing")
        /// The tree uses a layout newer than this build's; nothing else was checked.
        public static let formatVersionTooNew = Check(rawValue: "formatVersionTooNew")
        /// A client with files in a document but no `ClientDevices/<client>/deviceInfo.plist`.
        public static let clientNotRegistered = Check(rawValue: "clientNotRegistered")
        /// Files a previous repair quarantined (information only).
        public static let quarantined = Check(rawValue: "quarantined")
        /// A removed area and what it keeps (information only).
        public static let removedArea = Check(rawValue: "removedArea")
        /// A change set a client's sequence lacks in the folder, which no whole store covers, kept in a removed area:
        /// readers heal from it, and `repair` puts it back.
        public static let removedFillsGap = Check(rawValue: "removedFillsGap")
    }

    /// How bad the finding is.
    public var severity: Severity
    /// Which check found it; stable, for code to compare.
    public var check: Check
    /// The path the finding is about, relative to the shared folder's root.
    public var path: String
    /// One line for people, naming the cause.
    public var message: String
    /// What `repair` does about it, if it is safe to do anything.
    public var repair: Repair?

    /// A finding of `check` about `path`, explained by `message`, with the repair that is safe, if any.
    public init(_ severity: Severity, _ check: Check, path: String, _ message: String, repair: Repair? = nil) {
        self.severity = severity
        self.check = check
        self.path = path
        self.message = message
        self.repair = repair
    }

    /// Whether it counts against a healthy tree (every severity but `info`).
    public var isProblem: Bool { severity != .info }
}

/// What `RemoteTreeDoctor.examine` found.
@_spi(Tooling) public struct DoctorReport: Hashable, Sendable, Codable {
    /// The application whose tree was examined.
    public var applicationIdentifier: String
    /// The documents whose folders were checked.
    public var documents: [String]
    /// Sorted by path, then check.
    public var findings: [DoctorFinding]

    /// A report of the findings in the given documents of an application's tree.
    public init(applicationIdentifier: String, documents: [String], findings: [DoctorFinding]) {
        self.applicationIdentifier = applicationIdentifier
        self.documents = documents
        self.findings = findings
    }

    /// No finding is a problem.
    public var isHealthy: Bool { !findings.contains(where: \.isProblem) }

    /// `repair` refuses a tree whose layout is newer than this build's: it cannot judge what is safe there.
    public var isRepairable: Bool { !findings.contains { $0.check == .formatVersionTooNew } }
}

/// One thing `RemoteTreeDoctor.repair` did.
@_spi(Tooling) public struct DoctorRepairAction: Hashable, Sendable, Codable {
    /// Whether the path was removed, quarantined, restored or written.
    public var action: DoctorFinding.Repair
    /// The path acted on.
    public var path: String
    /// Where the file went: into a removed area, or back to its place.
    public var destination: String?

    /// A repair of `path`; give `destination` for a quarantine.
    public init(action: DoctorFinding.Repair, path: String, destination: String? = nil) {
        self.action = action
        self.path = path
        self.destination = destination
    }
}
