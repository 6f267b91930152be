import Foundation

/// The removed areas (layout version 2): what they keep, and the gaps they can fill.
extension RemoteTreeDoctor {
    /// For each checked document (and the application) with a removed area, one line on what it keeps; and each change
    /// set a client's sequence lacks in the folder, above every sound whole store's coverage and up to what the client
    /// published, that a removal keeps: an error `repair` fixes by putting it back (readers heal from it meanwhile).
    /// Only what the area holds is looked at, so a marker claiming a huge sequence costs nothing.
    func checkRemovedAreas(_ examination: inout Examination) async throws {
        var areas = examination.documents.sorted().map {
            (RemovedArea(fileSystem: fileSystem, layout: layout, document: $0), Optional($0))
        }
        if examination.documentFilter == nil {
            areas.append((RemovedArea(fileSystem: fileSystem, layout: layout), nil))
        }
        for (area, document) in areas {
            let removals = try await area.removals()
            guard !removals.isEmpty else { continue }
            let oldest = removals.compactMap(\.date).min()
            examination.add(
                .info, .removedArea, area.root,
                "\(removals.count == 1 ? "1 removal" : "\(removals.count) removals") kept"
                    + (oldest.map { ", the oldest made \(Self.describe(max(0, now().timeIntervalSince($0)))) ago" }
                        ?? "")
                    + "; a vacuum purges each once older than its grace period (14 days by default)")
            guard let document, let facts = examination.documentFacts[document] else { continue }
            for client in Set(facts.changeSets.keys).union(facts.recentSyncs.keys).sorted() {
                let present = Set((facts.changeSets[client] ?? []).map(\.sequence))
                let covered = facts.manifests.compactMap { $0.covers[client] }.max() ?? 0
                let published = max(present.max() ?? 0, facts.recentSyncs[client]?.publishedSequence ?? 0)
                let kept = try await area.changeSets(of: client, document: document)
                for (sequence, found) in kept.sorted(by: { $0.key < $1.key })
                where sequence > covered && sequence <= published && !present.contains(sequence) {
                    examination.add(
                        .error, .removedFillsGap, found.path,
                        "change set \(sequence) of client \(client) is missing from its folder and no whole store covers it; "
                            + "this removal keeps it (readers heal from it), and --repair puts it back",
                        repair: .restore)
                }
            }
        }
    }
}
