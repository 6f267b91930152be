/// The safeguards of vacuum and client deletion against the wrong beliefs once found in them, each of which a test
/// can switch off (``VacuumOperation/Options/disabledSafeguards``) to replay its defect and show that the removed area alone
/// still keeps every write (issue 39). Not API: `package`, a seam for tests.
package enum RemovalSafeguard: Hashable, Sendable, CaseIterable {
    /// A whole store counts as covering anything only once read whole and matched against its manifest (issue 19,
    /// item 1: a damaged store was trusted).
    case verifiesWholeStores
    /// A store an earlier vacuum verified is read again before anything is removed on its word (issue 38, item 3).
    case rereadsRememberedStores
    /// A deleted client's whole store goes only when another sound store holds every vacuumed change set it holds
    /// (issue 38, item 4).
    case keepsOnlyStoreOfDeletedClient
    /// A dominated store is removed by its identifier, and change sets only once the kept stores are still the
    /// planned ones (issue 24, item 3: two vacuums at once removed every whole store).
    case removesWhatItPlanned
}
