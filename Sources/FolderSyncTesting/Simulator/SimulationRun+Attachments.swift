@_spi(ModelAdapter) import FolderSync
import Foundation

extension SimulationRun {
    /// After convergence: no column still holds a large value's reference (each client got the bytes), and
    /// every client gets each attached file its rows reference, verified by its SHA-256.
    func checkAttachments() async throws {
        for client in clients {
            guard let document = client.document else { continue }
            for row in try client.store.allRows() {
                for (column, value) in row.values {
                    guard case .blob(let bytes) = value, let reference = AttachmentReference(databaseValue: bytes)
                    else { continue }
                    let key = "\(row.table)[\(row.syncID)].\(column)"
                    if reference.isInlineValue {
                        throw SimulationFailure.Detail(
                            "\(client.name) holds a reference instead of the large value of \(key)")
                    }
                    do {
                        try await document.requestDownload(for: reference)
                    } catch {
                        throw SimulationFailure.Detail(
                            "\(client.name) cannot get the file attached to \(key): \(error)")
                    }
                }
            }
        }
    }
}
