/// When a sync must stop and ask before applying remote deletions (Ensembles' and Joplin's mass-deletion guard).
///
/// A sync trips the fail-safe when the change sets it is about to apply would delete more than
/// ``maximumShare`` of the rows of a table that has more than ``minimumTableRows`` rows. It then asks
/// ``DocumentSyncManager/massDeletionHandler`` (or the delegate) before applying anything; declining stops the
/// sync with ``FolderSyncError/Code/massDeletionDeclined`` and leaves the local store untouched.
public struct DeletionFailSafe: Sendable, Hashable {
    /// The share of a table's rows (0...1) that a sync may delete without asking. Default: one half.
    public var maximumShare: Double
    /// Tables with at most this many rows never trip the fail-safe. Default: 100.
    public var minimumTableRows: Int

    /// A fail-safe that asks when a sync would delete more than `maximumShare` of a table with more than
    /// `minimumTableRows` rows.
    public init(maximumShare: Double = 0.5, minimumTableRows: Int = 100) {
        self.maximumShare = maximumShare
        self.minimumTableRows = minimumTableRows
    }

    /// Whether deleting `deletion.rowsDeleted` rows of that table needs the app's consent.
    func trips(_ deletion: MassDeletion.Table) -> Bool {
        deletion.rowCount > minimumTableRows && Double(deletion.rowsDeleted) > maximumShare * Double(deletion.rowCount)
    }

    /// Whether change sets with `changes` changes in all could trip it (saves reading them twice when not).
    func couldTrip(changes: Int) -> Bool {
        Double(changes) > maximumShare * Double(minimumTableRows + 1)
    }
}

/// The deletions a sync is about to apply, offered to the app when they trip the ``DeletionFailSafe``.
public struct MassDeletion: Sendable, Hashable, CustomStringConvertible {
    /// What the pending change sets would delete from one table.
    public struct Table: Sendable, Hashable {
        /// The synced table's name.
        public var table: String
        /// Existing local rows the change sets delete.
        public var rowsDeleted: Int
        /// Rows the table has now.
        public var rowCount: Int

        /// The figures of one table; syncs build these, tests and custom operations may too.
        public init(table: String, rowsDeleted: Int, rowCount: Int) {
            self.table = table
            self.rowsDeleted = rowsDeleted
            self.rowCount = rowCount
        }
    }

    /// The tables that trip the fail-safe, sorted by name.
    public var tables: [Table]
    /// The change sets the sync is about to apply, as remote paths.
    public var changeSets: [String]

    /// The tables that trip the fail-safe and the change sets that would delete their rows.
    public init(tables: [Table], changeSets: [String]) {
        self.tables = tables
        self.changeSets = changeSets
    }

    public var description: String {
        tables.map { "\($0.rowsDeleted) of \($0.rowCount) rows of \($0.table)" }.joined(separator: ", ")
    }
}
