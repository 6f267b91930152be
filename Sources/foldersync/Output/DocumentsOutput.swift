@_spi(Tooling) import FolderSync
import Foundation

/// What `documents list` prints. JSON: `{"application", "documents": [D]}`, where D is
/// `{"identifier", "description"?, "userInfo", "clients": [ID], "lastActivity"?, "byteCount"}`.
struct DocumentsOutput: Encodable {
    struct Document: Encodable {
        let identifier: String
        let description: String?
        let userInfo: [String: String]
        /// Registered clients that are not deleted.
        let clients: [String]
        /// The newest last sync among its clients.
        let lastActivity: Date?
        /// Bytes of every file in the document's remote folder.
        let byteCount: Int64

        init(_ document: SynchronizedDocument) {
            identifier = document.identifier
            description = document.documentDescription
            userInfo = document.userInfo
            clients = document.clients
            lastActivity = document.lastActivityDate
            byteCount = document.byteCount
        }
    }

    let application: String
    let documents: [Document]

    func text(now: Date = Date()) -> String {
        guard !documents.isEmpty else { return "\(application) has no documents.\n" }
        var table = TextTable()
        table.append("DOCUMENT", "DESCRIPTION", "CLIENTS", "SIZE", "LAST ACTIVITY")
        for document in documents {
            table.append(
                document.identifier, document.description ?? "-", String(document.clients.count),
                Formatting.bytes(document.byteCount), Formatting.dateAndAge(document.lastActivity, now: now))
        }
        return "\(application): \(Formatting.count(documents.count, "document"))\n" + table.render()
    }
}
