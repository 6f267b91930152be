import Foundation

/// The encoding of one ``SyncChange`` in a change set's body.
///
/// ```
/// kind               1 byte: 1 insert, 2 update, 3 delete
/// table, syncID      varint length + UTF-8 each
/// deletionTimestamp  UInt64 LE, deletes only
/// column count       varint
/// per column         name (varint length + UTF-8), timestamp (UInt64 LE), value tag (1 byte), payload
/// ```
/// Payloads: null none; integer zigzag varint; real IEEE 754 bits as UInt64 LE;
/// text and blob varint length + bytes.
enum ChangeSetRecord {
    /// Why `change` cannot be written or was not read as one well-formed change; `nil` when it is fine.
    ///
    /// Writer and reader apply the same rules, so whatever one accepts the other does too.
    static func problem(with change: SyncChange) -> String? {
        if change.table.isEmpty { return "a change has an empty table name" }
        if change.syncID.isEmpty { return "a change of table \(change.table) has an empty sync ID" }
        var row: String { "\(change.table)/\(change.syncID)" }
        switch change.kind {
        case .delete:
            // Columns of a delete are the row's writes not published before it was deleted (last writer wins).
            if change.deletionTimestamp == nil { return "the delete of \(row) has no deletion timestamp" }
        case .insert, .update:
            if change.deletionTimestamp != nil { return "the \(change.kind) of \(row) has a deletion timestamp" }
            if change.kind == .update && change.columns.isEmpty { return "the update of \(row) changes no column" }
        }
        // A few columns are compared pairwise: no set to allocate and hash per change.
        var names = change.columns.count > 16 ? Set<String>() : nil
        for (index, column) in change.columns.enumerated() {
            if column.column.isEmpty { return "\(row) has a column with an empty name" }
            let repeated =
                if names != nil {
                    !names!.insert(column.column).inserted
                } else {
                    change.columns[..<index].contains { $0.column == column.column }
                }
            if repeated { return "\(row) carries column \(column.column) twice" }
        }
        return nil
    }

    /// Appends `change`'s record; the caller has checked it with ``problem(with:)``.
    static func encode(_ change: SyncChange, into sink: inout ByteSink) {
        sink.bytes.append(change.kind.rawValue)
        sink.appendString(change.table)
        sink.appendString(change.syncID)
        if change.kind == .delete { sink.appendUInt64(change.deletionTimestamp?.rawValue ?? 0) }
        sink.appendVarint(UInt64(change.columns.count))
        for column in change.columns {
            sink.appendString(column.column)
            sink.appendUInt64(column.timestamp.rawValue)
            switch column.value {
            case .null:
                sink.bytes.append(ChangeSetFile.ValueTag.null.rawValue)
            case .integer(let value):
                sink.bytes.append(ChangeSetFile.ValueTag.integer.rawValue)
                sink.appendZigZag(value)
            case .real(let value):
                sink.bytes.append(ChangeSetFile.ValueTag.real.rawValue)
                sink.appendUInt64(value.bitPattern)
            case .text(let value):
                sink.bytes.append(ChangeSetFile.ValueTag.text.rawValue)
                sink.appendString(value)
            case .blob(let value):
                sink.bytes.append(ChangeSetFile.ValueTag.blob.rawValue)
                sink.appendBytes(value)
            }
        }
    }

    /// The size of `change`'s record, computed without encoding it (the splitter asks before every append).
    static func byteCount(of change: SyncChange) -> Int {
        func varint(_ value: UInt64) -> Int { (64 - (value | 1).leadingZeroBitCount + 6) / 7 }
        func string(_ value: String) -> Int {
            let count = value.utf8.count
            return varint(UInt64(count)) + count
        }
        var total = 1 + string(change.table) + string(change.syncID) + (change.kind == .delete ? 8 : 0)
        total += varint(UInt64(change.columns.count))
        for column in change.columns {
            total += string(column.column) + 8 + 1
            switch column.value {
            case .null: break
            case .integer(let value): total += varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
            case .real: total += 8
            case .text(let value): total += string(value)
            case .blob(let value): total += varint(UInt64(value.count)) + value.count
            }
        }
        return total
    }

    /// Which records a pass over a change set needs decoded.
    enum Selection {
        /// Every change, whole and checked.
        case all
        /// Only deletes, whole; other records are skipped.
        case deletes
        /// Only the `BLOB` values (attachment references live there): each record that has one, with its table, sync
        /// ID and blob columns only; other values and records are skipped. Not checked beyond its shape.
        case blobValues
        /// Deletes whole, and the `BLOB` values of the other records as ``blobValues`` reads them: what a sync checks
        /// before it applies a set, in one pass.
        case deletesAndBlobValues
    }

    /// Reads one record; `nil` when `selection` skips it.
    static func decode(from source: inout some ByteSource, selecting selection: Selection) throws -> SyncChange? {
        switch selection {
        case .all:
            return try decode(from: &source)
        case .deletes:
            let kind = try readKind(from: &source)
            if kind == .delete { return try decode(kind: kind, from: &source) }
            try source.skipLengthPrefixed(what: "table name")
            try source.skipLengthPrefixed(what: "sync ID")
            var remaining = try source.readVarint()
            while remaining > 0 {
                try source.skipLengthPrefixed(what: "column name")
                try source.skipBytes(8)
                try skipValue(from: &source)
                remaining -= 1
            }
            return nil
        case .blobValues:
            return try decodeBlobValues(kind: try readKind(from: &source), from: &source)
        case .deletesAndBlobValues:
            let kind = try readKind(from: &source)
            return kind == .delete
                ? try decode(kind: kind, from: &source) : try decodeBlobValues(kind: kind, from: &source)
        }
    }

    /// The rest of a record as ``Selection/blobValues`` reads it; `nil` when it has no `BLOB` value.
    private static func decodeBlobValues(kind: SyncChange.Kind, from source: inout some ByteSource) throws
        -> SyncChange?
    {
        let table = try source.readString(what: "table name")
        let syncID = try source.readString(what: "sync ID")
        if kind == .delete { try source.skipBytes(8) }
        var remaining = try source.readVarint()
        var columns: [ColumnChange] = []
        while remaining > 0 {
            let name = try source.readString(what: "column name")
            let timestamp = HybridTimestamp(rawValue: try source.readUInt64())
            let tag = try source.readByte()
            if tag == ChangeSetFile.ValueTag.blob.rawValue {
                columns.append(
                    ColumnChange(
                        column: name, value: .blob(Data(try source.readLengthPrefixed(what: "blob value"))),
                        timestamp: timestamp))
            } else {
                try skipPayload(of: tag, from: &source)
            }
            remaining -= 1
        }
        return columns.isEmpty ? nil : SyncChange(kind: kind, table: table, syncID: syncID, columns: columns)
    }

    private static func readKind(from source: inout some ByteSource) throws -> SyncChange.Kind {
        let kindByte = try source.readByte()
        guard let kind = SyncChange.Kind(rawValue: kindByte) else {
            throw FormatViolation("unknown change kind \(kindByte)")
        }
        return kind
    }

    private static func skipValue(from source: inout some ByteSource) throws {
        try skipPayload(of: try source.readByte(), from: &source)
    }

    private static func skipPayload(of tag: UInt8, from source: inout some ByteSource) throws {
        switch ChangeSetFile.ValueTag(rawValue: tag) {
        case .null: break
        case .integer: _ = try source.readVarint()
        case .real: try source.skipBytes(8)
        case .text: try source.skipLengthPrefixed(what: "text value")
        case .blob: try source.skipLengthPrefixed(what: "blob value")
        case nil: throw FormatViolation("unknown value tag \(tag)")
        }
    }

    /// Reads one record and checks it is a well-formed change.
    static func decode(from source: inout some ByteSource) throws -> SyncChange {
        try decode(kind: try readKind(from: &source), from: &source)
    }

    private static func decode(kind: SyncChange.Kind, from source: inout some ByteSource) throws -> SyncChange {
        let table = try source.readString(what: "table name")
        let syncID = try source.readString(what: "sync ID")
        let deletionTimestamp = kind == .delete ? HybridTimestamp(rawValue: try source.readUInt64()) : nil
        let columnCount = try source.readVarint()
        var columns: [ColumnChange] = []
        columns.reserveCapacity(Int(min(columnCount, 64)))
        // Each column takes at least 10 bytes, so a hostile count runs out of input long before memory.
        var remaining = columnCount
        while remaining > 0 {
            let name = try source.readString(what: "column name")
            let timestamp = HybridTimestamp(rawValue: try source.readUInt64())
            let value = try decodeValue(from: &source)
            columns.append(ColumnChange(column: name, value: value, timestamp: timestamp))
            remaining -= 1
        }
        let change = SyncChange(
            kind: kind, table: table, syncID: syncID, columns: columns, deletionTimestamp: deletionTimestamp)
        if let problem = problem(with: change) { throw FormatViolation(problem) }
        return change
    }

    private static func decodeValue(from source: inout some ByteSource) throws -> SyncValue {
        let tagByte = try source.readByte()
        switch ChangeSetFile.ValueTag(rawValue: tagByte) {
        case .null: return .null
        case .integer: return .integer(try source.readZigZag())
        case .real: return .real(Double(bitPattern: try source.readUInt64()))
        case .text: return .text(try source.readString(what: "text value"))
        case .blob: return .blob(Data(try source.readLengthPrefixed(what: "blob value")))
        case nil: throw FormatViolation("unknown value tag \(tagByte)")
        }
    }
}
