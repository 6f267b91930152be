@_spi(Tooling) import FolderSync
import Foundation

/// What `removed list` prints. JSON: `{"application", "documents": [{"identifier", "deleted", "removals": [R]}]}`,
/// where R is `{"folder", "removedBy"?, "operation"?, "removalDate"? (the remover's clock), "date"? (the folder's),
/// "bytes", "files": [{"path", "originalPath", "kind", "bytes"}]}`; `kind` is `changeSet`, `wholeStore`,
/// `wholeStoreManifest`, `recentSync`, `attachment`, `temporary` or `other`.
struct RemovedOutput: Encodable {
    struct File: Encodable {
        let path: String
        let originalPath: String
        let kind: String
        let bytes: Int64
    }

    struct Removal: Encodable {
        let folder: String
        let removedBy: String?
        let operation: String?
        let removalDate: Date?
        let date: Date?
        let bytes: Int64
        let files: [File]

        init(_ listing: RemovalListing) {
            folder = listing.folder.description
            removedBy = listing.record?.removedBy
            operation = listing.record?.operation.rawValue
            removalDate = listing.record?.removalDate
            date = listing.date
            bytes = listing.byteCount
            files = listing.files.map {
                File(
                    path: $0.path.description, originalPath: $0.originalPath.description,
                    kind: Self.kind(of: $0.originalPath), bytes: $0.byteCount)
            }
        }

        /// What a removed file was, by its original path.
        static func kind(of path: RemotePath) -> String {
            let name = path.name
            if TemporaryName.isTemporary(name) { return "temporary" }
            if RemoteLayout.parseChangeSetFileName(name) != nil { return "changeSet" }
            if name == RemoteLayout.wholeStoreFileName { return "wholeStore" }
            if name == RemoteLayout.appliedSyncChangeSetsFileName { return "wholeStoreManifest" }
            if RemoteLayout.parseRecentSyncFileName(name) != nil { return "recentSync" }
            if path.parent.name == "Attachments" { return "attachment" }
            return "other"
        }
    }

    struct Document: Encodable {
        let identifier: String
        /// Deleted: its folder is kept by the application's removed area, in a removal listed here.
        let deleted: Bool
        let removals: [Removal]
    }

    let application: String
    let documents: [Document]

    /// Per document, one line per removal, then its files: change sets one line per author's folder with their
    /// sequences, other files one line each.
    func text(now: Date = Date()) -> String {
        guard !documents.isEmpty else { return "\(application) has no documents.\n" }
        var text = ""
        for document in documents {
            text +=
                "Document \(document.identifier)\(document.deleted ? " (deleted)" : ""): "
                + (document.removals.isEmpty
                    ? "nothing removed is kept\n" : "\(Formatting.count(document.removals.count, "removal")) kept\n")
            for removal in document.removals {
                let how = [removal.operation, removal.removedBy.map { "by \($0)" }].compactMap { $0 }.joined(
                    separator: " ")
                text +=
                    "  " + TerminalText.escaped(removal.folder) + ": " + (how.isEmpty ? "no readable record" : how)
                    + ", \(Formatting.dateAndAge(removal.date, now: now)), \(Formatting.count(removal.files.count, "file")), "
                    + Formatting.bytes(removal.bytes) + "\n"
                var table = TextTable()
                let sets = Dictionary(grouping: removal.files.filter { $0.kind == "changeSet" }) {
                    $0.originalPath.split(separator: "/").dropLast().joined(separator: "/")
                }
                for (folder, files) in sets.sorted(by: { $0.key < $1.key }) {
                    let sequences = files.compactMap {
                        RemoteLayout.parseChangeSetFileName(String($0.originalPath.split(separator: "/").last ?? ""))?
                            .sequence
                    }
                    table.append(
                        Formatting.count(files.count, "change set"),
                        Formatting.bytes(files.reduce(0) { $0 + $1.bytes }),
                        "\(folder) (\(sequences.count == 1 ? "sequence" : "sequences") \(Formatting.ranges(sequences)))"
                    )
                }
                for file in removal.files where file.kind != "changeSet" {
                    table.append(file.kind, Formatting.bytes(file.bytes), file.originalPath)
                }
                text += table.render(indent: "    ")
            }
        }
        return text
    }
}

/// What `removed restore` prints. JSON: `{"application", "documents": [{"identifier", "restored": [path],
/// "skipped": [{"path", "reason"}]}]}`.
struct RestoreOutput: Encodable {
    struct Skipped: Encodable {
        let path: String
        let reason: String
    }

    struct Document: Encodable {
        let identifier: String
        let restored: [String]
        let skipped: [Skipped]

        init(identifier: String, report: RemovalRestoreReport) {
            self.identifier = identifier
            restored = report.restored.map(\.description)
            skipped = report.skipped.map { .init(path: $0.path.description, reason: $0.reason) }
        }
    }

    let application: String
    let documents: [Document]

    var text: String {
        var text = ""
        for document in documents {
            text += "Document \(document.identifier): restored \(Formatting.count(document.restored.count, "file"))\n"
            var table = TextTable()
            for path in document.restored { table.append("restored", path) }
            for item in document.skipped { table.append("left", item.path + " (" + item.reason + ")") }
            text += table.render(indent: "  ")
        }
        return text.isEmpty ? "\(application) has no documents.\n" : text
    }
}
