import ArgumentParser
import FolderSync
import Foundation

/// `todo confirm-replaced`: the user's word that the shared folder really was emptied or replaced, which no device
/// takes by itself (a share that is not mounted looks just as empty).
///
/// It answers the app's ``ApplicationSyncManager/remoteReplacementHandler`` with yes, so the sync sets the folder up
/// again, then re-joins with every item of this device (``DocumentSyncManager/rejoin()``). A device that finds the
/// folder set up again by another, or that stopped on any other reset, re-joins the same way.
struct ConfirmReplaced: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "confirm-replaced",
        abstract: "Say that the shared folder really was emptied or replaced, and re-join it with this device's items.",
        discussion: """
            For a shared folder that no longer holds the lists: emptied, replaced by a new share, restored from a copy \
            older than the set-up, or a WebDAV server started again on an empty volume. sync then says \
            remoteUnavailable and names this command. It sets the folder up again and re-joins it with every item of \
            this device; each other device then runs confirm-replaced too and re-joins with its own (after any other \
            reset, it re-joins the same way). Never run it for a share that is only not mounted: the items would go \
            into the empty mount point.
            """)
    @ParentCommand var todo: Todo

    @MainActor func run() async throws {
        let model = try todo.model()
        model.document.applicationSyncManager.remoteReplacementHandler = { _ in true }
        let report: SyncReport
        do {
            report = try await model.sync()
            print("The shared folder holds this device's lists: nothing was replaced.")
        } catch let error as FolderSyncError where error.isReset {
            report = try await model.document.rejoin()
            print("Re-joined the shared folder with this device's items.")
        }
        print("sent \(report.changesSent) change(s), applied \(report.changesApplied)")
    }

    /// What `todo` adds to an error it prints: the command that recovers from it, when there is one.
    static func hint(for error: FolderSyncError) -> String {
        if error.isApplicationFolderMissing {
            return "; if that folder really was emptied or replaced (not just unmounted), "
                + "run 'todo confirm-replaced' to set it up again with this device's items"
        }
        if error.isReset { return "; run 'todo confirm-replaced' to re-join with this device's items" }
        return ""
    }
}
