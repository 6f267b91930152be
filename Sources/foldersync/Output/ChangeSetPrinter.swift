@_spi(Tooling) import FolderSync
import Foundation

/// Prints a change set as it streams out of `ChangeSetReader`: header first, then one change per line.
///
/// JSON is one document written in pieces, `{"file", "kind": "changeSet", "header", "changes": [...]}`,
/// one change object per line, so memory does not grow with the file.
struct ChangeSetPrinter {
    let file: String
    let url: URL
    let json: Bool

    func print() throws {
        // Verifies the header and the whole file's checksum before anything is printed.
        let header = try ChangeSetReader.verify(at: url, path: file)
        if json {
            let head = try JSONOutput.line(HeaderJSON(header))
            Swift.print(
                "{\"file\":\(try JSONOutput.line(file)),\"kind\":\"changeSet\",\"header\":\(head),\"changes\":[")
            var first = true
            try ChangeSetReader.forEachChange(at: url, path: file) { change in
                Swift.print((first ? "" : ",\n") + (try JSONOutput.line(ChangeJSON(change))), terminator: "")
                first = false
            }
            Swift.print(first ? "]}" : "\n]}")
        } else {
            Swift.print(headerText(header), terminator: "")
            try ChangeSetReader.forEachChange(at: url, path: file) { Swift.print(TerminalText.escaped(Self.text($0))) }
        }
    }

    private func headerText(_ header: ChangeSetHeader) -> String {
        var table = TextTable()
        table.append("change set", header.changeSetIdentifier)
        table.append("client", header.clientIdentifier)
        table.append("sequence", String(header.sequence))
        table.append("schema version", String(header.schemaVersion))
        table.append("created", JSONOutput.isoString(header.createdAt))
        let dependencies = header.dependencies.sorted { $0.key < $1.key }.map { "\($0.key) up to \($0.value)" }
        table.append("depends on", dependencies.isEmpty ? "nothing" : dependencies.joined(separator: ", "))
        table.append("changes", String(header.changeCount))
        return "\(file)\n" + table.render(indent: "  ")
    }

    /// `update notes 42 title="Hi"@2026-01-02T03:04:05.123Z#0 …`
    static func text(_ change: SyncChange) -> String {
        var parts = ["\(change.kind)", change.table, change.syncID]
        if let deleted = change.deletionTimestamp { parts.append("@" + TimestampJSON(deleted).text) }
        parts += change.columns.map { "\($0.column)=\(text($0.value))@\(TimestampJSON($0.timestamp).text)" }
        return parts.joined(separator: " ")
    }

    static func text(_ value: SyncValue) -> String {
        switch value {
        case .null: return "NULL"
        case .integer(let value): return String(value)
        case .real(let value): return String(value)
        case .text(let value): return (try? JSONOutput.line(value)) ?? value
        case .blob(let data) where AttachmentReference(databaseValue: data) != nil:
            let reference = AttachmentReference(databaseValue: data)!
            let metadata = reference.metadata.keys.sorted().map { ", \($0)=\(reference.metadata[$0]!)" }.joined()
            return
                "attachment(\(reference.sha256), \(reference.size) bytes\(reference.isInlineValue ? ", inline value" : "")\(metadata))"
        case .blob(let data):
            let hex = data.prefix(32).map { String(format: "%02x", $0) }.joined()
            return "x'\(hex)'" + (data.count > 32 ? "…(\(data.count) bytes)" : "")
        }
    }
}

/// `{"changeCount", "changeSetIdentifier", "clientIdentifier", "createdAt", "dependencies", "schemaVersion",
/// "sequence"}`.
struct HeaderJSON: Encodable {
    let changeSetIdentifier: String
    let clientIdentifier: String
    let sequence: Int64
    let schemaVersion: Int
    let changeCount: Int
    let createdAt: Date
    let dependencies: [String: Int64]

    init(_ header: ChangeSetHeader) {
        changeSetIdentifier = header.changeSetIdentifier
        clientIdentifier = header.clientIdentifier
        sequence = header.sequence
        schemaVersion = header.schemaVersion
        changeCount = header.changeCount
        createdAt = header.createdAt
        dependencies = header.dependencies
    }
}

/// `{"kind", "table", "syncID", "columns": [{"column", "value", "timestamp"}], "deletionTimestamp"?}`.
struct ChangeJSON: Encodable {
    struct Column: Encodable {
        let column: String
        let value: ValueJSON
        let timestamp: TimestampJSON
    }

    let kind: String
    let table: String
    let syncID: String
    let columns: [Column]
    let deletionTimestamp: TimestampJSON?

    init(_ change: SyncChange) {
        kind = "\(change.kind)"
        table = change.table
        syncID = change.syncID
        columns = change.columns.map {
            Column(column: $0.column, value: ValueJSON($0.value), timestamp: TimestampJSON($0.timestamp))
        }
        deletionTimestamp = change.deletionTimestamp.map(TimestampJSON.init)
    }
}

/// `{"type": "null"}`, `{"type": "integer", "value": 42}`, `{"type": "real", "value": 1.5}`,
/// `{"type": "text", "value": "Hi"}`, `{"type": "blob", "base64": "…"}`: SQLite's storage classes, kept apart.
struct ValueJSON: Encodable {
    let value: SyncValue
    init(_ value: SyncValue) { self.value = value }

    private enum Keys: String, CodingKey { case type, value, base64 }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        switch value {
        case .null: try container.encode("null", forKey: .type)
        case .integer(let number):
            try container.encode("integer", forKey: .type)
            try container.encode(number, forKey: .value)
        case .real(let number):
            try container.encode("real", forKey: .type)
            try container.encode(number, forKey: .value)
        case .text(let text):
            try container.encode("text", forKey: .type)
            try container.encode(text, forKey: .value)
        case .blob(let data):
            try container.encode("blob", forKey: .type)
            try container.encode(data.base64EncodedString(), forKey: .base64)
        }
    }
}

/// `{"hlc": raw 64-bit value, "time": "2026-01-02T03:04:05.123Z", "counter": 0}`: exact for machines, readable for
/// people.
struct TimestampJSON: Encodable {
    let hlc: UInt64
    let time: String
    let counter: UInt16

    init(_ timestamp: HybridTimestamp) {
        hlc = timestamp.rawValue
        time = JSONOutput.isoString(Date(timeIntervalSince1970: Double(timestamp.milliseconds) / 1000))
        counter = timestamp.counter
    }

    var text: String { HybridTimestamp(rawValue: hlc).description }
}
