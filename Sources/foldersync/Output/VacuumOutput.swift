@_spi(Tooling) import FolderSync
import Foundation

/// What `vacuum` prints: per document, what it removed (or would), who holds what back, who expired, what it skipped.
///
/// JSON: `{"application", "dryRun", "expireClientsAfter"?, "documents": [D], "removedCount", "bytesFreed", "failed"}`,
/// where D is `{"identifier", "removed": [{"path", "reason", "bytes"}], "bytesFreed", "heldBack": {client: H},
/// "expiredClients": [ID], "skipped": [{"path", "reason"}], "failures": [{"path", "error"}], "wholeStores": W,
/// "folderTime": T, "removalFolder"?, "keepRemovedFor" (seconds), "purgedRemovals": [path], "error"?}`; `bytesFreed`
/// counts the bytes removed from their places (moved into `removalFolder`, freed when a later vacuum purges it);
/// W is `{"verified", "verifiedEarlier", "bytesRead", "damaged": [{"path", "reason"}]}`; T (`folderTime`) is
/// `{"now"?, "measured", "skew"?}`, the shared folder's clock that judged every age; `reason` is
/// `changeSet`, `dominatedWholeStore`, `staleTemporary`, `deletedClientRecentSync` or `deletedClientFolder`, H as in
/// ``HeldBackJSON``. `error` is set when the document could not be vacuumed at all; `failed` is true when any
/// document has an `error` or `failures`.
struct VacuumOutput: Encodable {
    struct Removal: Encodable {
        let path: String
        let reason: String
        let bytes: Int64
    }

    struct Skipped: Encodable {
        let path: String
        let reason: String
    }

    struct Failure: Encodable {
        let path: String
        let error: String
    }

    /// What checking the whole stores cost and found (``VacuumReport/WholeStoreCheck``).
    struct WholeStores: Encodable {
        var verified = 0
        var verifiedEarlier = 0
        var bytesRead: Int64 = 0
        var damaged: [Skipped] = []
    }

    /// The shared folder's clock as the run read it (``VacuumReport/FolderTime``).
    struct FolderTime: Encodable {
        let now: Date?
        let measured: Bool
        /// This computer's clock minus the folder's, in seconds.
        let skew: Double?
    }

    struct Document: Encodable {
        let identifier: String
        var removed: [Removal] = []
        var bytesFreed: Int64 = 0
        var heldBack: [String: HeldBackJSON] = [:]
        var expiredClients: [String] = []
        var skipped: [Skipped] = []
        var failures: [Failure] = []
        var wholeStores = WholeStores()
        var folderTime: FolderTime?
        var removalFolder: String?
        var keepRemovedFor: Double?
        var purgedRemovals: [String] = []
        var error: String?
        /// Kept for the text, which shows the same numbers in words.
        private var report: VacuumReport?

        private enum CodingKeys: String, CodingKey {
            case identifier, removed, bytesFreed, heldBack, expiredClients, skipped, failures, wholeStores, folderTime
            case removalFolder, keepRemovedFor, purgedRemovals, error
        }

        init(identifier: String, report: VacuumReport) {
            self.identifier = identifier
            self.report = report
            removed = report.removed.map {
                .init(path: $0.path.description, reason: $0.reason.rawValue, bytes: $0.byteCount)
            }
            bytesFreed = report.bytesFreed
            heldBack = report.heldBack.mapValues(HeldBackJSON.init)
            expiredClients = report.expiredClients
            skipped = report.skipped.map { .init(path: $0.path.description, reason: $0.reason) }
            failures = report.failures.map { .init(path: $0.path.description, error: $0.error.description) }
            let check = report.wholeStoreCheck
            wholeStores = WholeStores(
                verified: check.verified, verifiedEarlier: check.verifiedEarlier, bytesRead: check.bytesRead,
                damaged: check.damaged.map { .init(path: $0.path.description, reason: $0.reason) })
            let time = report.folderTime
            folderTime = FolderTime(now: time.now, measured: time.isMeasured, skew: time.skew)
            removalFolder = report.removalFolder?.description
            keepRemovedFor = report.keepRemovedFor
            purgedRemovals = report.purgedRemovals.map(\.description)
        }

        init(identifier: String, error: String) {
            self.identifier = identifier
            self.error = error
        }

        var hasFailed: Bool { error != nil || !failures.isEmpty }

        /// Expiries first (they happen first), then removals with each author's change sets on one line, then who holds
        /// what back and what was left alone. The JSON lists every path; people get a line per kind and folder.
        func text(dryRun: Bool, expiry: String?) -> String {
            if let error { return "Document \(identifier): could not vacuum: " + TerminalText.escaped(error) + "\n" }
            var text = "Document \(identifier): "
            text +=
                removed.isEmpty
                ? "nothing to remove\n"
                : "\(dryRun ? "would remove" : "removed") \(Formatting.count(removed.count, "item")) "
                    + "(\(Formatting.bytes(bytesFreed))), kept \(Formatting.age(keepRemovedFor ?? 0)) in the removed area before a vacuum purges them\n"
            if let removalFolder { text += "  moved into " + TerminalText.escaped(removalFolder) + "\n" }
            for purged in purgedRemovals {
                text +=
                    "  \(dryRun ? "would purge" : "purged") " + TerminalText.escaped(purged)
                    + " (removed more than \(Formatting.age(keepRemovedFor ?? 0)) ago)\n"
            }
            for client in expiredClients {
                let silence = expiry.map { "silent for longer than \($0)" } ?? "silent too long"
                text +=
                    dryRun
                    ? "  would expire client \(client): \(silence); it would be marked deleted\n"
                    : "  expired client \(client): \(silence); marked deleted, it resets at its next sync\n"
            }
            if let skew = report?.folderTime.notableSkew {
                text +=
                    "  this computer's clock is \(Formatting.age(abs(skew))) \(skew > 0 ? "ahead of" : "behind") the shared "
                    + "folder's: ages are judged by the folder's clock\n"
            }
            if let report, report.folderTime.now == nil, expiry != nil {
                text +=
                    "  the shared folder records no modification dates: no client's silence can be judged, none expired\n"
            }
            text += removalTable().render(indent: "  ")
            for (client, held) in (report?.heldBack ?? [:]).sorted(by: { $0.key < $1.key }) {
                text += "  held back by client \(client): \(HeldBackJSON.text(held))\n"
            }
            if wholeStores.verified + wholeStores.verifiedEarlier > 0 {
                text +=
                    "  whole stores verified: \(wholeStores.verified) (\(Formatting.bytes(wholeStores.bytesRead)) read), "
                    + "\(wholeStores.verifiedEarlier) unchanged since verified earlier\n"
            }
            for item in wholeStores.damaged {
                text += "  damaged whole store " + TerminalText.escaped("\(item.path): \(item.reason)") + "\n"
            }
            for item in skipped { text += "  skipped " + TerminalText.escaped("\(item.path): \(item.reason)") + "\n" }
            for failure in failures {
                text += "  failed " + TerminalText.escaped("\(failure.path): \(failure.error)") + "\n"
            }
            return text
        }

        /// One row per removal, except change sets: one row per author's folder, with the sequences.
        private func removalTable() -> TextTable {
            var table = TextTable()
            let changeSets = Dictionary(
                grouping: report?.removed.filter { $0.reason == .changeSet } ?? [], by: \.path.parent)
            var shown: Set<RemotePath> = []
            for removal in report?.removed ?? [] {
                guard removal.reason == .changeSet else {
                    table.append(
                        VacuumOutput.label(removal.reason.rawValue), Formatting.bytes(removal.byteCount),
                        removal.path.description)
                    continue
                }
                let folder = removal.path.parent
                guard shown.insert(folder).inserted, let sets = changeSets[folder] else { continue }
                let sequences = sets.compactMap { RemoteLayout.parseChangeSetFileName($0.path.name)?.sequence }
                table.append(
                    Formatting.count(sets.count, "change set"), Formatting.bytes(sets.reduce(0) { $0 + $1.byteCount }),
                    "\(folder) (\(sequences.count == 1 ? "sequence" : "sequences") \(Formatting.ranges(sequences)))")
            }
            return table
        }
    }

    let application: String
    let dryRun: Bool
    let expireClientsAfter: String?
    let documents: [Document]
    var removedCount: Int { documents.reduce(0) { $0 + $1.removed.count } }
    var bytesFreed: Int64 { documents.reduce(0) { $0 + $1.bytesFreed } }
    var failed: Bool { documents.contains(where: \.hasFailed) }

    private enum CodingKeys: String, CodingKey {
        case application, dryRun, expireClientsAfter, documents, removedCount, bytesFreed, failed
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(application, forKey: .application)
        try container.encode(dryRun, forKey: .dryRun)
        try container.encodeIfPresent(expireClientsAfter, forKey: .expireClientsAfter)
        try container.encode(documents, forKey: .documents)
        try container.encode(removedCount, forKey: .removedCount)
        try container.encode(bytesFreed, forKey: .bytesFreed)
        try container.encode(failed, forKey: .failed)
    }

    var text: String {
        var text = dryRun ? "Dry run of vacuum in \(application): nothing is removed or written.\n" : ""
        if documents.isEmpty { return text + "\(application) has no documents.\n" }
        text += documents.map { $0.text(dryRun: dryRun, expiry: expireClientsAfter) }.joined()
        let verb = dryRun ? "would remove" : "removed"
        text += "Total: \(verb) \(Formatting.count(removedCount, "item")) (\(Formatting.bytes(bytesFreed)))"
        return text + " in \(Formatting.count(documents.count, "document")).\n"
    }

    /// The reason as a short phrase for the table.
    static func label(_ reason: String) -> String {
        switch VacuumReport.Reason(rawValue: reason) {
        case .changeSet: "change set"
        case .dominatedWholeStore: "old whole store"
        case .staleTemporary: "stale temporary"
        case .deletedClientRecentSync: "deleted client's recent sync"
        case .deletedClientFolder: "deleted client's folder"
        case .unreferencedAttachment: "unreferenced attachment"
        case nil: reason
        }
    }
}
