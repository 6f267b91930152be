import Foundation
import GRDB

extension FolderSyncError {
    /// An error of the local store's SQLite while doing `what`, naming the store at `path`: ``Code/localStoreFull``
    /// when the disk is full (said in words, not as SQLite's error and its statement), otherwise
    /// ``Code/localStoreFailed`` with SQLite's own phrase. The app's writes can be wrapped the same way.
    ///
    /// SQLite says `SQLITE_FULL` when a write finds no space; opening a store on a full disk fails earlier, as an
    /// I/O error creating its journal files, and is told by the disk having no space left.
    package static func localStore(_ error: any Error, while what: String, path: String) -> FolderSyncError {
        if let error = error as? DatabaseError,
            error.resultCode == .SQLITE_FULL || (error.resultCode == .SQLITE_IOERR && diskIsFull(holding: path))
        {
            return FolderSyncError(
                .localStoreFull, "the disk is full: \(what) failed, and nothing was changed", path: path)
        }
        return FolderSyncError(.localStoreFailed, "\(what) failed", path: path, underlying: error)
    }

    /// Whether the volume of the file at `path` has no room left for a page of SQLite.
    private static func diskIsFull(holding path: String) -> Bool {
        guard let space = LocalFiles.volumeSpace(of: URL(fileURLWithPath: path).deletingLastPathComponent()) else {
            return false
        }
        return space.available < 64 * 1024
    }
}
