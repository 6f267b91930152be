/// The checks across a document's files: integrity key, sequences, schema versions, registration.
extension RemoteTreeDoctor {
    func checkDocuments(_ examination: inout Examination) {
        for document in examination.documents.sorted() {
            let facts = examination.documentFacts[document] ?? DocumentFacts()
            if !facts.hasDocumentInfo {
                examination.add(.error, .documentInfoMissing, layout.documentInfoFile(document),
                                "documentInfo.plist is missing: clients cannot register this document")
            }
            checkIntegrityKey(document, facts, &examination)
            for client in Set(facts.changeSets.keys).union(facts.recentSyncs.keys).sorted() {
                checkSequences(document, client: client, facts, &examination)
            }
            checkSchemaVersions(facts, &examination)
            for client in facts.clients.subtracting(facts.deletedClients).subtracting(examination.registeredClients).sorted() {
                examination.add(.warning, .clientNotRegistered, layout.deviceInfoFile(client),
                                "client \(client) has files in document \(document) but no deviceInfo.plist (not registered, and not deleted)")
            }
        }
    }

    private func checkIntegrityKey(_ document: String, _ facts: DocumentFacts, _ examination: inout Examination) {
        let directory = layout.integrityKeyDirectory(document)
        let keys = facts.integrityKeys.sorted()
        let expected = facts.integrityKeyInInfo.map { " (documentInfo.plist says \($0))" } ?? ""
        switch keys.count {
        case 0:
            examination.add(.error, .integrityKeyMissing, directory,
                            "no integrity key\(expected): every client will think the remote document was reset")
        case 1:
            if let info = facts.integrityKeyInInfo, info != keys[0] {
                examination.add(.error, .integrityKeyMismatch, directory.appending(keys[0]),
                                "integrity key \(keys[0]) differs from \(info) in documentInfo.plist")
            }
        default:
            examination.add(.error, .integrityKeyDuplicated, directory,
                            "\(keys.count) integrity keys (\(keys.joined(separator: ", ")))\(expected): "
                            + "clients of different epochs would mix; remove the wrong one by hand")
        }
    }

    /// Each client's sequences must run from 1 to its highest, except below what a whole store covers (vacuum removes those).
    private func checkSequences(_ document: String, client: String, _ facts: DocumentFacts, _ examination: inout Examination) {
        let directory = layout.syncChangesDirectory(document, client: client)
        let sets = facts.changeSets[client] ?? []
        for (sequence, copies) in Dictionary(grouping: sets, by: \.sequence) where copies.count > 1 {
            examination.add(.error, .duplicateSequence, directory,
                            "\(copies.count) change sets carry sequence \(sequence): " + copies.map(\.path.name).sorted().joined(separator: ", "))
        }
        let present = Set(sets.map(\.sequence))
        let covered = facts.manifests.compactMap { $0.covers[client] }.max() ?? 0
        let published = facts.recentSyncs[client]?.publishedSequence ?? 0
        let highest = max(present.max() ?? 0, published)
        guard highest > covered else { return }
        // The ranges between the sets present, found from the sets (a marker may claim any number: a loop over the
        // range it claims would run as long as the claim).
        var missing: [ClosedRange<Int64>] = []
        var previous = covered
        for sequence in present.filter({ $0 > covered }).sorted() + [highest + 1] {
            if sequence > previous + 1 { missing.append((previous + 1)...(sequence - 1)) }
            previous = sequence
        }
        for range in missing {
            let single = range.count == 1
            let which = single ? "sequence \(range.lowerBound)" : "sequences \(range.lowerBound)–\(range.upperBound)"
            let it = single ? "it" : "them"
            let cover = covered > 0 ? "whole stores cover up to \(covered)" : "no whole store covers \(it)"
            examination.add(.error, .sequenceGap, directory,
                            "\(which) of client \(client) \(single ? "is" : "are") missing (highest \(highest); \(cover)): "
                            + "clients that have not applied \(it) cannot apply this client's later change sets until a whole store covers \(it)")
        }
    }

    /// Kept simple: a change set is unappliable for now when its schema version is above the highest
    /// schema version any client's recent sync reports (no client has been upgraded to read it).
    private func checkSchemaVersions(_ facts: DocumentFacts, _ examination: inout Examination) {
        guard let newest = facts.recentSyncs.values.map(\.schemaVersion).max() else { return }
        for set in facts.changeSets.values.joined() {
            guard let header = set.header, header.schemaVersion > newest else { continue }
            examination.add(.warning, .schemaTooNew, set.path,
                            "recorded with schema version \(header.schemaVersion), above every client's (\(newest)): parked until a client upgrades")
        }
    }
}
