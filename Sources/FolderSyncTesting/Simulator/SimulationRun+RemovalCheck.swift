@_spi(ModelAdapter) import FolderSync
import Foundation

/// Invariant 10, checked after every step of a lifecycle run: no change set ever leaves the shared folder except by a
/// vacuum purging the removal that kept it, more than the grace period after the removal was made, by the folder's
/// own clock. Until then every write stays recoverable, whatever vacuum, client deletion or expiry believed.
extension SimulationRun {
    /// Where a change set was at the last check: its folder, or a removal of the document's removed area.
    struct KeptChangeSet {
        var path: RemotePath
        /// The removal that kept it, with the date the folder records for its record; `nil` in its own folder.
        var removal: (folder: RemotePath, date: Date?)?
    }

    /// Lists every change set of the document, in its place and in the removed area, and fails the run if one seen at
    /// the last check is gone without its removal having outlived the grace period. A wiped or restored folder (the
    /// user's doing, not a removal) starts the record afresh.
    func checkNothingRemovedTooSoon() async throws {
        guard let remote, !configuration.restores else { return }
        let layout = try layout
        let document = SimulatedClient.document
        var found: [String: KeptChangeSet] = [:]
        func collect(_ changes: RemotePath, removal: (folder: RemotePath, date: Date?)?) async throws {
            for client in try await remote.contentsOfDirectoryIfPresent(at: changes) where client.kind == .directory {
                let folder = changes.appending(client.name)
                for file in try await remote.contentsOfDirectoryIfPresent(at: folder)
                where file.kind == .file && RemoteLayout.parseChangeSetFileName(file.name) != nil {
                    found[file.name] = KeptChangeSet(path: folder.appending(file.name), removal: removal)
                }
            }
        }
        try await collect(layout.syncChangesDirectory(document), removal: nil)
        let area = layout.removedDirectory(document)
        for day in try await remote.contentsOfDirectoryIfPresent(at: area) where day.kind == .directory {
            for removal in try await remote.contentsOfDirectoryIfPresent(at: area.appending(day.name))
            where removal.kind == .directory {
                let folder = area.appending(day.name).appending(removal.name)
                let record = try await remote.item(at: folder.appending(RemoteLayout.removalRecordFileName))
                let changes = layout.syncChangesDirectory(document).components.dropFirst(
                    layout.documentDirectory(document).components.count
                )
                .reduce(folder) { $0.appending($1) }
                try await collect(changes, removal: (folder, record?.modificationDate))
            }
        }
        let now = time.clock(skew: 0)()
        let grace = VacuumOperation.minimumRemovedFileGracePeriod
        for (name, kept) in keptChangeSets where found[name] == nil {
            guard let removal = kept.removal else {
                throw SimulationFailure.Detail(
                    "change set \(kept.path) left its folder without going into the removed area")
            }
            guard let made = removal.date, now.timeIntervalSince(made) > grace else {
                throw SimulationFailure.Detail(
                    "change set \(kept.path) was purged \(removal.date.map { "\(Int(now.timeIntervalSince($0) / 60)) min" } ?? "at an unknown time") "
                        + "after its removal, inside the grace period of \(Int(grace / 3600)) h")
            }
            summary.changeSetsPurged += 1
        }
        summary.changeSetsInRemovedArea = max(
            summary.changeSetsInRemovedArea, found.values.filter { $0.removal != nil }.count)
        keptChangeSets = found
    }
}
