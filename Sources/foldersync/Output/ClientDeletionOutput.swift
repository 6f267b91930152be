@_spi(Tooling) import FolderSync

/// What `clients delete` prints. JSON: `{"application", "document", "client", "alreadyDeleted", "removed": [path],
/// "removalFolder"?, "kept": [{"path", "reason"}]}`; paths are relative to `--remote`; what was removed is in
/// `removalFolder`, the document's removed area, until a vacuum purges it.
struct ClientDeletionOutput: Encodable {
    struct Kept: Encodable {
        let path: String
        let reason: String
    }

    let application: String
    let document: String
    let client: String
    /// The client was deleted before this run; nothing was written.
    let alreadyDeleted: Bool
    let removed: [String]
    var removalFolder: String?
    let kept: [Kept]

    var text: String {
        if alreadyDeleted { return "Client \(client) was already deleted from document \(document); nothing to do.\n" }
        var table = TextTable()
        for path in removed { table.append("removed", path) }
        if let removalFolder {
            table.append("moved", "into " + removalFolder + " (kept until a vacuum purges it after its grace period)")
        }
        for item in kept { table.append("kept", item.path + " (" + item.reason + ")") }
        return
            "Deleted client \(client) from document \(document); it stops with clientDeleted at its next sync and keeps its local data.\n"
            + table.render(indent: "  ")
    }
}
