/// How a table settles a delete against a concurrent update.
public enum DeletePolicy: Sendable, Hashable {
    /// A deleted row stays deleted: concurrent and later changes to it are dropped (and reported), and its sync ID
    /// is refused while its tombstone is kept (for ever, with ``SyncedTable/reusesSyncIDs``). The default.
    case deleteWins
    /// The newer of the delete and the update wins, by hybrid logical clock: a row is alive when its newest column
    /// write is newer than its newest delete. An update made after a delete it did not see brings the row back,
    /// with every column's newest value; a deleted sync ID can be inserted again.
    case lastWriterWins
}
