/// The checks across a document's files: integrity key, sequences, schema versions, registration.
extension RemoteTreeDoctor {
    func checkDocuments(_ examination: inout Examination) async throws {
        for document in examination.documents.sorted() {
            let facts = examination.documentFacts[document] ?? DocumentFacts()
            if !facts.hasDocumentInfo {
                examination.add(
                    .error, .documentInfoMissing, layout.documentInfoFile(document),
                    "documentInfo.plist is missing: clients cannot register this document")
            }
            checkIntegrityKey(document, facts, &examination)
            for client in Set(facts.changeSets.keys).union(facts.recentSyncs.keys).sorted() {
                try await checkSequences(document, client: client, facts, &examination)
            }
            checkSchemaVersions(facts, &examination)
            for client in facts.clients.subtracting(facts.deletedClients).subtracting(examination.registeredClients)
                .sorted()
            {
                examination.add(
                    .warning, .clientNotRegistered, layout.deviceInfoFile(client),
                    "client \(client) has files in document \(document) but no deviceInfo.plist (not registered, and not deleted)"
                )
            }
        }
    }

    private func checkIntegrityKey(_ document: String, _ facts: DocumentFacts, _ examination: inout Examination) {
        let directory = layout.integrityKeyDirectory(document)
        let keys = facts.integrityKeys.sorted()
        let expected = facts.integrityKeyInInfo.map { " (documentInfo.plist says \($0))" } ?? ""
        switch keys.count {
        case 0:
            let folder = examination.items.contains { $0.path == directory }
            if let key = DocumentInfo.keyCompletingCreation(
                of: document, info: facts.documentInfo,
                keysPresent: folder ? [] : nil,
                deleted: examination.deletedDocuments.contains(document))
            {
                examination.add(
                    .warning, .integrityKeyMissing, directory,
                    "no integrity key (documentInfo.plist says \(key)): the document's creation stopped half way; "
                        + "the next client to sync writes it", repair: .writeIntegrityKey)
            } else {
                examination.add(
                    .error, .integrityKeyMissing, directory,
                    "no integrity key\(expected): every client will think the remote document was reset")
            }
        case 1:
            if let info = facts.integrityKeyInInfo, info != keys[0] {
                examination.add(
                    .error, .integrityKeyMismatch, directory.appending(keys[0]),
                    "integrity key \(keys[0]) differs from \(info) in documentInfo.plist")
            }
        default:
            examination.add(
                .error, .integrityKeyDuplicated, directory,
                "\(keys.count) integrity keys (\(keys.joined(separator: ", ")))\(expected): "
                    + "clients of different epochs would mix; remove the wrong one by hand")
        }
    }

    /// Each client's sequences must run from 1 to its highest, except below what a whole store covers (vacuum removes
    /// those).
    ///
    /// A set being published is not a gap: a marker that carries its sets is written while they upload, and one that
    /// names them is written after them but may be read after a listing that came before them. So the sets a marker
    /// carries count as present, and a gap is looked at a second time (the client's folder listed again) before it
    /// is reported.
    private func checkSequences(
        _ document: String, client: String, _ facts: DocumentFacts,
        _ examination: inout Examination
    ) async throws {
        let directory = layout.syncChangesDirectory(document, client: client)
        let sets = facts.changeSets[client] ?? []
        for (sequence, copies) in Dictionary(grouping: sets, by: \.sequence) where copies.count > 1 {
            examination.add(
                .info, .duplicateSequence, directory,
                "\(copies.count) change sets carry sequence \(sequence) (two devices shared this client's identity): "
                    + copies.map(\.path.name).sorted().joined(separator: ", ") + "; every device applies each of them")
        }
        let carried = (facts.recentSyncs[client]?.changeSetContents ?? [:]).keys
            .compactMap { RemoteLayout.parseChangeSetFileName($0)?.sequence }
        var present = Set(sets.map(\.sequence) + carried)
        var missing = missingRanges(client, present: present, facts)
        if !missing.isEmpty {
            let listing = try await fileSystem.namesOfDirectoryIfPresent(at: directory)
            present.formUnion(listing.compactMap { RemoteLayout.parseChangeSetFileName($0.name)?.sequence })
            missing = missingRanges(client, present: present, facts)
        }
        let covered = facts.manifests.compactMap { $0.covers[client] }.max() ?? 0
        let highest = max(present.max() ?? 0, facts.recentSyncs[client]?.publishedSequence ?? 0)
        for range in missing {
            let single = range.count == 1
            let which = single ? "sequence \(range.lowerBound)" : "sequences \(range.lowerBound)–\(range.upperBound)"
            let it = single ? "it" : "them"
            let cover = covered > 0 ? "whole stores cover up to \(covered)" : "no whole store covers \(it)"
            examination.add(
                .error, .sequenceGap, directory,
                "\(which) of client \(client) \(single ? "is" : "are") missing (highest \(highest); \(cover)): "
                    + "clients that have not applied \(it) cannot apply this client's later change sets until a whole store covers \(it)"
            )
        }
    }

    /// The ranges of `client`'s sequences above what whole stores cover, up to the highest it published, that no set
    /// in `present` holds: found from the sets (a marker may claim any number, and a loop over the range it claims
    /// would run as long as the claim).
    private func missingRanges(_ client: String, present: Set<Int64>, _ facts: DocumentFacts) -> [ClosedRange<Int64>] {
        let covered = facts.manifests.compactMap { $0.covers[client] }.max() ?? 0
        let highest = max(present.max() ?? 0, facts.recentSyncs[client]?.publishedSequence ?? 0)
        guard highest > covered else { return [] }
        var missing: [ClosedRange<Int64>] = []
        var previous = covered
        for sequence in present.filter({ $0 > covered }).sorted() + [highest + 1] {
            if sequence > previous + 1 { missing.append((previous + 1)...(sequence - 1)) }
            previous = sequence
        }
        return missing
    }

    /// Kept simple: a change set is unappliable for now when its schema version is above the highest
    /// schema version any client's recent sync reports (no client has been upgraded to read it).
    private func checkSchemaVersions(_ facts: DocumentFacts, _ examination: inout Examination) {
        guard let newest = facts.recentSyncs.values.map(\.schemaVersion).max() else { return }
        for set in facts.changeSets.values.joined() {
            guard let header = set.header, header.schemaVersion > newest else { continue }
            examination.add(
                .warning, .schemaTooNew, set.path,
                "recorded with schema version \(header.schemaVersion), above every client's (\(newest)): parked until a client upgrades"
            )
        }
    }
}
