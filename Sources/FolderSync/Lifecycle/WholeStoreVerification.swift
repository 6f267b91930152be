import Foundation

/// The whole stores a vacuum verified, remembered between runs in a small local file, so that a store is read
/// whole again only once it changed (a different identifier, size or version tag) or once a run removes something
/// on its strength: a remembered verification only spares reading a store that nothing removed relies on, since
/// a store can be damaged in place without its size or version tag changing (``VacuumOperation``).
/// Only stores found good are remembered; one found damaged is forgotten.
///
/// Without a version tag (a backend that gives none), nothing is remembered: the store is read at every run.
struct WholeStoreVerificationCache {
    private let url: URL?
    private var entries: Set<String>
    private var changed = false

    /// The cache kept in `url` (`nil`: remembers nothing between runs).
    init(url: URL?) {
        self.url = url
        let saved = url.flatMap { try? LocalFiles.read($0) }.flatMap {
            try? JSONDecoder().decode([String].self, from: $0)
        }
        entries = Set(saved ?? [])
    }

    static func key(client: String, manifest: WholeStoreManifest, item: RemoteItem?) -> String? {
        guard let item, let etag = item.etag, let size = item.size else { return nil }
        return [client, manifest.wholeStoreIdentifier, String(manifest.wholeStoreByteCount), String(size), etag].joined(
            separator: " ")
    }

    func contains(_ key: String?) -> Bool { key.map(entries.contains) ?? false }

    mutating func insert(_ key: String?) {
        guard let key, entries.insert(key).inserted else { return }
        changed = true
    }

    mutating func remove(_ key: String?) {
        guard let key, entries.remove(key) != nil else { return }
        changed = true
    }

    /// Keeps only the stores seen in this run, and writes the file if anything changed. Best effort: a cache that
    /// cannot be written costs a verification next time, nothing else.
    mutating func save(keeping seen: Set<String>) {
        let kept = entries.intersection(seen)
        guard let url, changed || kept != entries else { return }
        entries = kept
        if let data = try? JSONEncoder().encode(entries.sorted()) {
            try? LocalFiles.createDirectory(url.deletingLastPathComponent())
            try? LocalFiles.writeDurably(data, to: url)
        }
    }
}
