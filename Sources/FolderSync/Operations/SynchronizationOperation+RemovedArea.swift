import Foundation

/// Healing from the removed area: a change set this client needs that is gone from its folder, when no whole store
/// filled the gap, is applied from where a vacuum, client deletion or repair moved it (invariant 10).
extension SynchronizationOperation {
    /// The change sets of `client` numbered `first`, `first + 1`… (before `end`, the first still in its folder), as
    /// long as the removed area keeps each: what this sync applies in place of the gap, with a
    /// ``SyncWarning/Kind/recoveredFromRemoved`` warning naming the removal. Each is checked exactly as a set read
    /// from its folder: its sealed bytes are bound to that folder, its header to its name and client.
    func changeSetsInRemovedArea(of client: String, from first: Int64, before end: Int64?, _ run: inout Run)
        async throws -> [Available]
    {
        let area = RemovedArea(fileSystem: fileSystem, layout: layout, document: documentIdentifier)
        let kept = try await area.changeSets(of: client, document: documentIdentifier)
        run.report.remoteRequests += 1
        var found: [Available] = []
        var sequence = first
        while end.map({ sequence < $0 }) ?? true, let (path, _) = kept[sequence] {
            found.append(Available(client: client, sequence: sequence, name: path.name, path: path))
            sequence += 1
        }
        guard let last = found.last, let removal = kept[first]?.removal else { return [] }
        let record = await area.record(of: removal)
        let who =
            record.map { "\(RemovedArea.describe($0.operation)) by \($0.removedBy) on \(Self.day($0.removalDate))" }
            ?? "a removal"
        run.report.warnings.append(
            SyncWarning(
                kind: .recoveredFromRemoved,
                message:
                    "change sets \(first == last.sequence ? "\(first)" : "\(first)–\(last.sequence)") of client \(client) were gone "
                    + "from its folder and no usable whole store held them; applied from the removed area, where \(who) had moved them",
                path: removal.folder.description))
        return found
    }

    private static func day(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm'Z'"
        return formatter.string(from: date)
    }

    /// Downloads a change set kept in the removed area.
    func downloadRemovedChangeSet(_ path: RemotePath, to url: URL) async throws {
        try await fileSystem.download(path, toLocalFile: url)
    }
}
