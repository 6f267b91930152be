public import Foundation

/// The local changes of a document that no other device has received yet: pending, or staged in a change set not
/// published.
public struct UnpublishedChanges: Sendable, Hashable, CustomStringConvertible {
    /// Per synced table, how many of its rows hold such a change (an insert, an update or a delete).
    public var rowsByTable: [String: Int]

    /// Changes counted per table; see ``rowsByTable``.
    public init(rowsByTable: [String: Int] = [:]) { self.rowsByTable = rowsByTable }

    /// Whether every local change has reached the shared folder.
    public var isEmpty: Bool { rowCount == 0 }
    /// How many rows hold an unpublished change, in all tables.
    public var rowCount: Int { rowsByTable.values.reduce(0, +) }

    /// `3 rows (notes 2, tags 1)`, or `none`.
    public var description: String {
        guard !isEmpty else { return "none" }
        let tables = rowsByTable.keys.sorted().map { "\($0) \(rowsByTable[$0]!)" }.joined(separator: ", ")
        return "\(rowCount) row\(rowCount == 1 ? "" : "s") (\(tables))"
    }
}

/// What stopping sync left of a document
/// (``GRDBStore/stopTracking(documentAt:helperDirectory:keepingUnpublishedChanges:)``,
/// ``DocumentSyncManager/stopSyncing(removingTracking:publishingFirst:)``).
public struct DetachReport: Sendable, Hashable {
    /// The local changes no other device had received when the detach began; with
    /// ``DocumentSyncManager/stopSyncing(removingTracking:publishingFirst:)`` they were published first unless the app
    /// said otherwise (``publishedFirst``). Counted by table by a ``GRDBStore``; empty for an adapter that does not
    /// count them.
    public var unpublishedChanges = UnpublishedChanges()
    /// Whether a last sync published ``unpublishedChanges`` before the device left.
    public var publishedFirst = false
    /// The tables whose change capture was removed, sorted (empty when tracking was kept).
    public var untrackedTables: [String] = []
    /// What stays of the helper folder because it is the user's data: reset backups, and the attachment files that
    /// rows still reference. Empty when the folder was removed whole.
    public var keptHelperItems: [URL] = []
    /// Whether this device was deleted from the shared folder's client list (``DocumentSyncManager`` only).
    public var leftSharedFolder = false

    /// An empty report; the detach fills it in.
    public init() {}
}
