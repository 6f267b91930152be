import Foundation

/// What a row of the pending table says changed in one synced row: column names, and the whole-row marks
/// ``StoreSchema/createdMarker`` and ``StoreSchema/deletedMarker``, packed into its `marks` BLOB.
///
/// One pending row per synced row (and per sequence it was staged in), not one per column: staging and
/// publishing touch a tenth of the B-tree rows they would otherwise. The encoding is the names one after
/// another, each as a varint length and UTF-8, in the order they were first marked.
struct PendingMarks: Equatable {
    private(set) var names: [String] = []

    init() {}

    init(_ names: some Sequence<String>) {
        for name in names { insert(name) }
    }

    /// Decodes a `marks` value; `nil` is no mark.
    init(_ blob: Data?) throws {
        guard let blob, !blob.isEmpty else { return }
        names = try blob.withUnsafeBytes { bytes in
            var reader = BlobReader(bytes: bytes)
            var names: [String] = []
            while reader.remaining > 0 {
                let name = try reader.string(what: "pending mark")
                if !names.contains(name) { names.append(name) }
            }
            return names
        }
    }

    var encoded: Data {
        var sink = ByteSink()
        for name in names { sink.appendString(name) }
        return Data(sink.bytes)
    }

    var isEmpty: Bool { names.isEmpty }

    func contains(_ name: String) -> Bool { names.contains(name) }

    mutating func insert(_ name: String) {
        if !names.contains(name) { names.append(name) }
    }

    mutating func remove(_ name: String) {
        names.removeAll { $0 == name }
    }

    mutating func formUnion(_ other: PendingMarks) {
        for name in other.names { insert(name) }
    }
}
