import ArgumentParser
import FolderSync
import Foundation

/// `notes confirm-replaced`: the user's word that the shared folder really was emptied or replaced, which no device
/// takes by itself (a share that is not mounted looks just as empty).
///
/// It answers the app's ``ApplicationSyncManager/remoteReplacementHandler`` with yes, so the sync sets the folder up
/// again, then re-joins with every note of this device (``DocumentSyncManager/rejoin()``). On a device that finds
/// the folder set up again by another, it re-joins the same way.
struct ConfirmReplaced: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "confirm-replaced",
        abstract: "Say that the shared folder really was emptied or replaced, and re-join it with this device's notes.",
        discussion: """
            For a shared folder that no longer holds the notes: emptied, replaced by a new share, restored from a copy \
            older than the set-up, or a WebDAV server started again on an empty volume. sync then says \
            remoteUnavailable and names this command. It sets the folder up again and re-joins it with every note of \
            this device; each other device then runs confirm-replaced (or rejoin) and re-joins with its own notes. \
            Never run it for a share that is only not mounted: the notes would go into the empty mount point.
            """)
    @ParentCommand var notes: Notes
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let (session, remote, password) = try notes.configuredSession()
        session.document.applicationSyncManager.remoteReplacementHandler = { _ in true }
        try await session.register(remote: remote, password: password)
        if session.document.resetState == nil {
            do {
                let report = try await session.document.synchronize()
                if !json { print("The shared folder holds this device's notes: nothing was replaced.") }
                print(
                    json ? try NotesOutput.json(SyncReportSummary(report)) : NotesOutput.describe(report),
                    terminator: "")
                return
            } catch let error as FolderSyncError where error.isReset {
                // The folder set up again (by this command or by another device): re-joined below, keeping every note.
            }
        }
        let report = try await session.document.rejoin()
        if !json { print("Re-joined the shared folder with this device's notes.") }
        print(json ? try NotesOutput.json(SyncReportSummary(report)) : NotesOutput.describe(report), terminator: "")
    }

    /// What `notes` adds to an error it prints: the command that recovers from it, when there is one.
    static func hint(for error: FolderSyncError) -> String {
        if error.isApplicationFolderMissing {
            return "; if that folder really was emptied or replaced (not just unmounted), "
                + "run 'notes confirm-replaced' to set it up again with this device's notes"
        }
        if error.isReset { return "; run 'notes rejoin' to re-join with this device's notes" }
        return ""
    }
}
