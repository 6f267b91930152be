import FolderSync

/// Maps an HTTP status that ended a request to the ``/FolderSync/FolderSyncError`` code naming its cause.
enum WebDAVStatus {
    static func error(_ status: Int, _ operation: String, path: RemotePath) -> FolderSyncError {
        let at = path.description
        let what = "\(operation) answered HTTP \(status)"
        switch status {
        case 401: return FolderSyncError(.permissionDenied, "\(what): the server refused the credentials", path: at)
        case 403: return FolderSyncError(.permissionDenied, "\(what): the server refused access", path: at)
        case 404, 410: return FolderSyncError(.remoteItemNotFound, "\(what): no such item", path: at)
        // RFC 4918 gives 409 this meaning for PUT, MKCOL, MOVE and COPY only (callers then name the parent);
        // nginx, for one, also answers 409 to a DELETE of a folder named without its trailing slash.
        case 409 where ["PUT", "MKCOL", "MOVE", "COPY"].contains(operation):
            return FolderSyncError(.remoteItemNotFound, "\(what): the parent folder does not exist", path: at)
        case 409:
            return FolderSyncError(
                .remoteIOFailed, "\(what): the server refused it as a conflict with what is there", path: at)
        case 412: return FolderSyncError(.remoteItemExists, "\(what): already exists", path: at)
        case 507: return FolderSyncError(.remoteFull, "\(what): the server has no space left", path: at)
        case 413: return FolderSyncError(.remoteFull, "\(what): the file is larger than the server accepts", path: at)
        case 423: return FolderSyncError(.remoteIOFailed, "\(what): the item is locked", path: at)
        case 429:
            return FolderSyncError(.remoteIOFailed, "\(what): the server is still too busy after retries", path: at)
        case 300..<400:
            return FolderSyncError(.remoteIOFailed, "\(what): redirects are not followed for this request", path: at)
        case 500..<600: return FolderSyncError(.remoteIOFailed, "\(what): server error", path: at)
        default: return FolderSyncError(.remoteIOFailed, what, path: at)
        }
    }

    static func isSuccess(_ status: Int) -> Bool { (200..<300).contains(status) }
}
