/// The safeguards of vacuum and client deletion against the wrong beliefs once found in them, each of which a test can
/// switch off (``VacuumOperation/Options/disabledSafeguards``) to replay its defect and show that the removed area
/// alone still keeps every write. Not API: `package`, a seam for tests.
package enum RemovalSafeguard: Hashable, Sendable, CaseIterable {
    /// A whole store counts as covering anything only once read whole and matched against its manifest: a damaged
    /// store must not be trusted.
    case verifiesWholeStores
    /// A store an earlier vacuum verified is read again before anything is removed on its word: a byte changed in
    /// place since can leave its size and version tag as they were.
    case rereadsRememberedStores
    /// A deleted client's whole store goes only when another sound store holds every vacuumed change set it holds:
    /// another store that verifies may cover less.
    case keepsOnlyStoreOfDeletedClient
    /// A dominated store is removed by its identifier, and change sets only once the kept stores are still the
    /// planned ones: two vacuums at once could otherwise remove every whole store.
    case removesWhatItPlanned
}
