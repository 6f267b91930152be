import Foundation
import Logging

/// Attachments in a sync: large values leave change sets at staging, attachments are published before the
/// change set that references them, and fetched before the change set that references them is applied.
extension SynchronizationOperation {
    var attachmentTransfer: AttachmentTransfer {
        AttachmentTransfer(
            fileSystem: fileSystem, layout: layout, documentIdentifier: documentIdentifier,
            local: localLayout.attachmentStore, emit: emit)
    }

    /// Replaces each `BLOB` value at or above the threshold by the reference of a local attachment holding it.
    func storingLargeValues(of change: SyncChange) throws -> SyncChange {
        guard let threshold = attachmentThreshold else { return change }
        var stored = change
        // The store (a URL built from the layout) only when a value needs it: this runs for every staged change.
        var local: LocalAttachmentStore?
        // Read from `change`, written to `stored`: reading through `stored` copied every change's columns (shared with
        // the batch the change came in), a copy per staged change.
        for (index, column) in change.columns.enumerated() {
            guard case .blob(let data) = column.value, data.count >= threshold,
                !AttachmentReference.looksLikeReference(data)
            else { continue }
            if local == nil { local = localLayout.attachmentStore }
            stored.columns[index].value = .blob(try local!.add(value: data).databaseValue)
        }
        return stored
    }

    /// Puts back the bytes of each large value this client has, or this sync fetched (`fetched`, by SHA-256); one it
    /// lacks (gone) stays a reference.
    func restoringLargeValues(of change: SyncChange, fetched: [String: URL]) throws -> SyncChange {
        var restored = change
        // The store (a URL built from the layout) only when a value needs it: this runs for every applied change.
        var local: LocalAttachmentStore?
        // Read from `change`, written to `restored`, as in storingLargeValues(of:): no copy of a change without one.
        for (index, column) in change.columns.enumerated() {
            guard case .blob(let data) = column.value, let reference = AttachmentReference(databaseValue: data),
                reference.isInlineValue
            else { continue }
            let url: URL
            if let scratch = fetched[reference.sha256] {
                url = scratch
            } else {
                if local == nil { local = localLayout.attachmentStore }
                guard local!.contains(reference) else { continue }
                url = local!.url(for: reference.sha256)
            }
            restored.columns[index].value = .blob(try LocalFiles.read(url))
        }
        return restored
    }

    /// Uploads what a staged change set references and the remote lacks, before the change set is published.
    func publishAttachments(referencedBy url: URL, _ run: inout Run) async throws {
        let transfer = attachmentTransfer
        for (reference, keys) in try AttachmentScan.references(inChangeSet: url, path: url.path)
        where !run.attachmentsOnRemote.contains(reference.sha256) {
            try Task.checkCancellation()
            run.report.remoteRequests += 1
            let gone = keys.map {
                GoneAttachment(key: $0, reference: reference, path: transfer.remotePath(reference).description)
            }
            let publication: AttachmentTransfer.Publication
            do {
                publication = try await transfer.publish(reference)
            } catch let error as FolderSyncError where error.code == .attachmentChanged {
                // An immutable file changed before its upload: those contents exist nowhere any more. The change
                // set still goes (its other changes matter); the rows are reported so the app can attach again.
                environment.logger.error("\(error)")
                try? FileManager.default.removeItem(at: transfer.local.url(for: reference.sha256))
                run.report.goneAttachments += gone
                continue
            }
            switch publication {
            case .uploaded(let bytes):
                run.report.remoteRequests += 2
                run.report.attachmentsUploaded += 1
                run.report.attachmentBytesSent += bytes
                run.report.bytesSent += bytes
                emit(.transferred(sent: run.report.bytesSent, received: run.report.bytesReceived))
            case .alreadyThere:
                break
            case .missingEverywhere:
                // Re-published from another client (a resolution, a re-join) after the remote lost it.
                run.report.goneAttachments += gone
                continue
            }
            run.attachmentsOnRemote.insert(reference.sha256)
        }
    }

    /// Downloads what a change set references (its prescan found them) before it is applied: large values always, files
    /// by policy. Attachments the remote lacks are reported as gone with their rows; the change set still applies.
    func fetchAttachments(_ references: [(AttachmentReference, [ColumnKey])], _ run: inout Run) async throws {
        let transfer = attachmentTransfer
        for (reference, keys) in references {
            try Task.checkCancellation()
            let gone = keys.map {
                GoneAttachment(key: $0, reference: reference, path: transfer.remotePath(reference).description)
            }
            if run.fetchedValues[reference.sha256] != nil || transfer.local.contains(reference) { continue }
            if !reference.isInlineValue && attachmentDownloads == .lazy {
                guard !run.attachmentsOnRemote.contains(reference.sha256) else { continue }
                run.report.remoteRequests += 1
                if try await transfer.isOnRemote(reference) {
                    run.attachmentsOnRemote.insert(reference.sha256)
                } else {
                    run.report.goneAttachments += gone
                }
                continue
            }
            do {
                run.report.remoteRequests += 1
                let bytes: Int64
                if reference.isInlineValue {
                    // Read only to be put into its column, where the apply makes it durable: a file in the downloads
                    // folder, not fsynced nor kept (a second durable copy of a 200 MB value cost as much as a `cp`).
                    // This client keeps no copy; staging one of its own changes to the row writes one again.
                    let url = localLayout.downloadsDirectory.appendingPathComponent(reference.sha256 + ".value")
                    bytes = try await transfer.download(reference, to: url, durably: false)
                    run.fetchedValues[reference.sha256] = url
                } else {
                    bytes = try await transfer.download(reference)
                }
                run.report.attachmentsDownloaded += 1
                run.report.attachmentBytesReceived += bytes
                run.report.bytesReceived += bytes
                emit(.transferred(sent: run.report.bytesSent, received: run.report.bytesReceived))
            } catch let error as FolderSyncError where error.code == .attachmentGone || error.code == .corruptFile {
                environment.logger.warning("Attachment \(reference.sha256) unavailable: \(error)")
                run.report.goneAttachments += gone
            }
        }
    }
}

extension SyncChange {
    /// Whether a column holds an attachment reference (what ``AttachmentScan`` looks for in a written change set).
    var referencesAttachment: Bool {
        columns.contains { column in
            guard case .blob(let data) = column.value else { return false }
            return AttachmentReference(databaseValue: data) != nil
        }
    }
}
