@_spi(Tooling) import FolderSync
import Foundation

/// Prints any FolderSync property list, decoded and verified by `PropertyListFile.decode`.
///
/// JSON: `{"file", "kind", "contents"}`, where `contents` is the payload with its own keys.
struct PropertyListPrinter {
    let file: String
    let data: Data
    let json: Bool

    func print() throws {
        guard let kind = PropertyListFile.kind(of: data) else {
            throw ToolFailure("\(file): not a FolderSync file (neither a change set nor a FolderSync property list)")
        }
        switch kind {
        case FormatVersionInfo.kind: try show(FormatVersionInfo.decodeSupported(data, path: file))
        case DeviceInfo.kind: try show(decode(DeviceInfo.self))
        case DocumentInfo.kind: try show(decode(DocumentInfo.self))
        case DeletedDocumentInfo.kind: try show(decode(DeletedDocumentInfo.self))
        case DeletedClientInfo.kind: try show(decode(DeletedClientInfo.self))
        case RecentSync.kind: try show(decode(RecentSync.self))
        case WholeStoreManifest.kind: try show(decode(WholeStoreManifest.self))
        default:
            throw ToolFailure("\(file): a FolderSync property list of kind \(kind), which this build does not know")
        }
    }

    private func decode<Payload: PropertyListPayload>(_ type: Payload.Type) throws -> Payload {
        try PropertyListFile.decode(type, from: data, path: file)
    }

    private struct Output<Payload: Encodable>: Encodable {
        let file: String
        let kind: String
        let contents: Payload
    }

    private func show<Payload: PropertyListPayload>(_ payload: Payload) throws {
        if json {
            try JSONOutput.print(Output(file: file, kind: Payload.kind, contents: payload))
            return
        }
        // The payload's own keys, through its Codable form, so every kind prints without a printer of its own.
        let object =
            try JSONSerialization.jsonObject(with: JSONOutput.encoder(pretty: false).encode(payload)) as? [String: Any]
            ?? [:]
        var table = TextTable()
        table.append("kind", Payload.kind)
        for key in object.keys.sorted() { table.append(key, Self.text(object[key]!)) }
        Swift.print("\(file)\n" + table.render(indent: "  "), terminator: "")
    }

    private static func text(_ value: Any) -> String {
        switch value {
        case let dictionary as [String: Any]:
            dictionary.isEmpty
                ? "(none)" : dictionary.keys.sorted().map { "\($0)=\(text(dictionary[$0]!))" }.joined(separator: ", ")
        case let array as [Any]: array.map(text).joined(separator: ", ")
        case let number as NSNumber: number.stringValue
        default: "\(value)"
        }
    }
}
