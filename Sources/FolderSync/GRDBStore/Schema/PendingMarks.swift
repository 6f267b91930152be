import Foundation

/// What a row of the pending table says changed in one synced row: column names, and the marks
/// ``StoreSchema/createdMarker``, ``StoreSchema/deletedMarker`` and ``StoreSchema/allColumnsMarker``, packed into
/// its `marks` BLOB.
///
/// One pending row per synced row (and per sequence it was staged in), not one per column: staging and
/// publishing touch a tenth of the B-tree rows they would otherwise. The encoding is the names one after
/// another, each as a varint length and UTF-8, in the order they were first marked.
///
/// ``StoreSchema/allColumnsMarker`` (bookkeeping version 6) marks every column of the row's table, as they are when
/// the marks are read: a new row's marks are `#created #all` (14 bytes) instead of `#created` and each column's
/// name (39 bytes for ten columns named `c0`…`c9`). Marks written before it name their columns.
///
/// A row of a delete-wins table deleted by the app is marked `#deleted #at=T` (bookkeeping version 9), `T` the
/// delete's timestamp: change capture writes nothing else in the app's transaction, and the delete's other
/// bookkeeping (its tombstone, its registers removed) follows when it is settled (``GRDBStore/settleDeletions(_:)``),
/// which leaves `#deleted` alone. Those marks are stored in 9 bytes, a zero byte (an empty name, which the encoding
/// of names never writes) and `T` big-endian, smaller than a new row's: a delete's one write never grows its row.
struct PendingMarks: Equatable {
    private(set) var names: [String] = []

    init() {}

    /// The marks of a delete not yet settled, made at `timestamp`.
    static func deletion(at timestamp: UInt64) -> PendingMarks {
        PendingMarks([StoreSchema.deletedMarker, StoreSchema.deletionTimeMarker + String(timestamp)])
    }

    /// The length of ``deletion(at:)``'s encoding.
    static let deletionByteCount = 9

    /// Appends the encoding of ``deletion(at:)`` to `bytes` (what change capture writes for every deleted row).
    static func appendDeletion(at timestamp: UInt64, to bytes: inout [UInt8]) {
        bytes.append(0)
        withUnsafeBytes(of: timestamp.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// Whether the marks name a delete not settled yet (alone, or with staged marks of the same row).
    var holdsUnsettledDeletion: Bool { names.contains { $0.hasPrefix(StoreSchema.deletionTimeMarker) } }

    /// The timestamp of a delete not yet settled: marks that are exactly ``deletion(at:)``'s.
    var deletionTimestamp: UInt64? {
        guard names.count == 2, names[0] == StoreSchema.deletedMarker,
            names[1].hasPrefix(StoreSchema.deletionTimeMarker)
        else { return nil }
        return UInt64(names[1].dropFirst(StoreSchema.deletionTimeMarker.count))
    }

    init(_ names: some Sequence<String>) {
        for name in names { insert(name) }
    }

    /// Decodes a `marks` value; `nil` is no mark.
    init(_ blob: Data?) throws {
        guard let blob, !blob.isEmpty else { return }
        if blob.first == 0 {
            guard blob.count == Self.deletionByteCount else {
                throw FormatViolation("a pending delete's marks are \(blob.count) bytes, not \(Self.deletionByteCount)")
            }
            self = .deletion(at: blob.dropFirst().reduce(0) { $0 << 8 | UInt64($1) })
            return
        }
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
        if let deletionTimestamp {
            var bytes: [UInt8] = []
            Self.appendDeletion(at: deletionTimestamp, to: &bytes)
            return Data(bytes)
        }
        var sink = ByteSink()
        for name in names { sink.appendString(name) }
        return Data(sink.bytes)
    }

    var isEmpty: Bool { names.isEmpty }

    /// Whether `name` is marked: a mark by its name, or a column (a name not starting with `#`) of marks that mark
    /// every column.
    func contains(_ name: String) -> Bool {
        names.contains(name) || (!StoreSchema.isMarker(name) && names.contains(StoreSchema.allColumnsMarker))
    }

    /// The same marks with ``StoreSchema/allColumnsMarker`` replaced, where it stands, by the columns of `columns`
    /// not named yet: marks that name each marked column, so that one of them can be removed.
    func expanded(columns: [String]) -> PendingMarks {
        guard let all = names.firstIndex(of: StoreSchema.allColumnsMarker) else { return self }
        var expanded = PendingMarks()
        for (index, name) in names.enumerated() {
            if index == all {
                for column in columns where !names.contains(column) { expanded.insert(column) }
            } else {
                expanded.insert(name)
            }
        }
        return expanded
    }

    mutating func insert(_ name: String) {
        if !names.contains(name) { names.append(name) }
    }

    /// Removes the mark `name` (a column marked by ``StoreSchema/allColumnsMarker`` stays marked: see
    /// ``expanded(columns:)``).
    mutating func remove(_ name: String) {
        names.removeAll { $0 == name }
    }

    mutating func formUnion(_ other: PendingMarks) {
        for name in other.names { insert(name) }
    }
}
