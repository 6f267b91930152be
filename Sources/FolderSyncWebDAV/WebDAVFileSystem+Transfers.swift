public import FolderSync
public import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension WebDAVFileSystem {
    /// Streams the file into `url` through a temporary file next to it, so `url` holds the old file or the whole new
    /// one.
    public func download(_ path: RemotePath, toLocalFile url: URL) async throws {
        let temporary = url.deletingLastPathComponent().appendingPathComponent(
            TemporaryName.make(for: url.lastPathComponent))
        defer { try? FileManager.default.removeItem(at: temporary) }
        let response = try await get(path, downloadingTo: temporary)
        guard WebDAVStatus.isSuccess(response.status) else {
            throw WebDAVStatus.error(response.status, "GET", path: path)
        }
        if let expected = response.header("Content-Length").flatMap(Int64.init) {
            let size = (try? FileManager.default.attributesOfItem(atPath: temporary.path)[.size] as? NSNumber)?
                .int64Value
            guard size == expected else {
                throw FolderSyncError(
                    .remoteIOFailed, "the download stopped early (\(size ?? 0) of \(expected) bytes)",
                    path: path.description)
            }
        }
        let fd = open(temporary.path, O_RDONLY)
        if fd >= 0 {
            _ = fsync(fd)
            close(fd)
        }
        guard rename(temporary.path, url.path) == 0 else {
            throw FolderSyncError(.localStoreFailed, "cannot move the download into place", path: url.path)
        }
    }

    /// Streams the local file to a temporary name, then moves it into place.
    public func upload(fromLocalFile url: URL, to path: RemotePath) async throws {
        guard FileManager.default.isReadableFile(atPath: url.path) else {
            throw FolderSyncError(.localStoreFailed, "cannot read the file to upload", path: url.path)
        }
        try await putThenMove(.file(url), to: path)
    }
}
