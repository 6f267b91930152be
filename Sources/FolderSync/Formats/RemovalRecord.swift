public import Foundation

/// `Removed/<day>/<removal>/Removal.plist`: who removed the files of one removal, how and when.
///
/// Written before anything is moved into the removal's folder, so a removal interrupted half-way still says what it
/// was. Its modification date, as the folder records it, starts the grace period (a date inside it is for people).
/// What was removed is what the folder holds: each file under its path relative to the document (or application).
public struct RemovalRecord: PropertyListPayload, Hashable {
    public static let kind = "removal"
    public static let formatVersion = 1

    /// What removed the files.
    public enum Operation: String, Codable, Sendable, Hashable, CaseIterable {
        /// A vacuum: change sets, dominated whole stores, deleted clients' markers, stale temporaries, attachments.
        case vacuum
        /// A client deletion: the client's recent sync and whole store.
        case clientDeletion
        /// A document deletion: the document's folder.
        case documentDeletion
        /// `foldersync doctor --repair`: corrupt files and abandoned temporaries.
        case repair
    }

    /// Who removed them: a client identifier, or an operator's name (`foldersync`).
    public var removedBy: String
    /// What removed them.
    public var operation: Operation
    /// When, by the remover's clock; for people only.
    public var removalDate: Date

    /// A record; see the properties for each argument.
    public init(removedBy: String, operation: Operation, removalDate: Date) {
        self.removedBy = removedBy
        self.operation = operation
        self.removalDate = removalDate
    }
}
