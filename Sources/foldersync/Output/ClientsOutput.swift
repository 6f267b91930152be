@_spi(Tooling) import FolderSync
import Foundation

/// What `clients list` prints: the clients of each document, then the clients registered with no document.
///
/// JSON: `{"application", "documents": [{"identifier", "description"?, "clients": [C]}], "clientsWithoutDocuments":
/// [A]}`, where C is `{"identifier", "description"?, "userInfo", "deleted", "lastSync"? (by the client's clock),
/// "lastSeen"? (when the shared folder last saw it write, by the folder's clock), "wholeStoreDate"?,
/// "publishedSequence"?, "acknowledgement": {client: sequence}, "holdsVacuumBack", "heldBack": H}` (H as in
/// ``HeldBackJSON``) and A is `{"identifier", "description"?, "registrationDate"?}`. `clientsWithoutDocuments` is empty
/// with `--document`.
struct ClientsOutput: Encodable {
    struct Client: Encodable {
        let identifier: String
        let description: String?
        let userInfo: [String: String]
        let deleted: Bool
        let lastSync: Date?
        let lastSeen: Date?
        let wholeStoreDate: Date?
        let publishedSequence: Int64?
        /// Per author, the highest sequence up to which this client has applied every change set.
        let acknowledgement: [String: Int64]
        let holdsVacuumBack: Bool
        let heldBack: HeldBackJSON
        private let rawHeldBack: VacuumReport.HeldBack

        init(_ client: RegisteredClient) {
            identifier = client.identifier
            description = client.clientDescription
            userInfo = client.userInfo
            deleted = client.isDeleted
            lastSync = client.lastSyncDate
            lastSeen = client.lastSeenDate
            wholeStoreDate = client.wholeStoreDate
            publishedSequence = client.publishedSequence
            acknowledgement = client.acknowledgement
            holdsVacuumBack = client.holdsVacuumBack
            heldBack = HeldBackJSON(client.heldBack)
            rawHeldBack = client.heldBack
        }

        private enum CodingKeys: String, CodingKey {
            case identifier, description, userInfo, deleted, lastSync, lastSeen, wholeStoreDate, publishedSequence,
                acknowledgement
            case holdsVacuumBack, heldBack
        }

        /// `client-A 3, client-B 5`: the author's identifier and the sequence applied up to, by author.
        var acknowledgementText: String {
            acknowledgement.isEmpty
                ? "-"
                : acknowledgement.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        }

        var heldBackText: String { deleted ? "deleted" : HeldBackJSON.text(rawHeldBack) }
    }

    struct Document: Encodable {
        let identifier: String
        let description: String?
        let clients: [Client]
    }

    struct UnattachedClient: Encodable {
        let identifier: String
        let description: String?
        let registrationDate: Date?
    }

    let application: String
    let documents: [Document]
    let clientsWithoutDocuments: [UnattachedClient]

    func text(now: Date = Date()) -> String {
        guard !documents.isEmpty || !clientsWithoutDocuments.isEmpty else {
            return "\(application) has no documents and no clients.\n"
        }
        var text = ""
        for document in documents {
            let title = TerminalText.escaped(
                document.description.map { "\(document.identifier) (\($0))" } ?? document.identifier)
            let live = document.clients.filter { !$0.deleted }.count
            let deleted = document.clients.count - live
            text +=
                "Document \(title): \(Formatting.count(live, "client"))" + (deleted == 0 ? "" : ", \(deleted) deleted")
                + "\n"
            guard !document.clients.isEmpty else { continue }
            var table = TextTable()
            table.append(
                "CLIENT", "DESCRIPTION", "LAST SYNC", "WHOLE STORE", "HOLDS VACUUM BACK",
                "ACKNOWLEDGED (AUTHOR SEQUENCE)")
            for client in document.clients {
                // When the folder saw it write, by the folder's clock: a device's own clock may be days off. A device
                // whose clock says a time ahead of this computer's is shown by that time, which says so.
                let clockAhead = client.lastSync.map { $0 > now } ?? false
                let lastSync = clockAhead ? client.lastSync : client.lastSeen ?? client.lastSync
                table.append(
                    client.identifier, client.description ?? "-", Formatting.dateAndAge(lastSync, now: now),
                    Formatting.date(client.wholeStoreDate), client.heldBackText, client.acknowledgementText)
            }
            text += table.render(indent: "  ")
        }
        if !clientsWithoutDocuments.isEmpty {
            text +=
                "Registered with \(application) but with no document: \(Formatting.count(clientsWithoutDocuments.count, "client"))\n"
            var table = TextTable()
            table.append("CLIENT", "DESCRIPTION", "REGISTERED")
            for client in clientsWithoutDocuments {
                table.append(client.identifier, client.description ?? "-", Formatting.date(client.registrationDate))
            }
            text += table.render(indent: "  ")
        }
        return text
    }
}
