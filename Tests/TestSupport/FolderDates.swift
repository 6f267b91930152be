@_spi(Tooling) import FolderSync
import FolderSyncTesting
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Sets the date the shared folder records for every file of `client` in `document` (its recent sync, change sets and
/// whole store): the folder then shows the client silent since `date`, whatever the client's clock said. Expiry
/// judges silence by these dates (issue 38, item 8).
func backdateFiles(of client: String, document: String = "DOC", in remote: any RemoteFileSystem, to date: Date)
    async throws
{
    let layout = try RemoteLayout(applicationIdentifier: Fixture.application)
    var files = [layout.recentSyncFile(document, client: client)]
    for folder in [
        layout.syncChangesDirectory(document, client: client), layout.wholeStoreDirectory(document, client: client),
    ] {
        files += try await remote.contentsOfDirectoryIfPresent(at: folder).filter { $0.kind == .file }.map {
            folder.appending($0.name)
        }
    }
    for path in files where try await remote.exists(path) {
        switch remote {
        case let memory as InMemoryFileSystem:
            await memory.setModificationDate(date, of: path)
        case let local as FileManagerFileSystem:
            try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: local.url(for: path).path)
        default:
            Issue.record("files cannot be backdated on \(type(of: remote))")
        }
    }
}

/// Changes one byte in the middle of a file where it is (same inode, size and times), as media corruption or a tool
/// writing in place and keeping the time leaves it.
func flipByteInPlace(_ url: URL) throws {
    var bytes = try Data(contentsOf: url)
    bytes[bytes.count / 2] ^= 0x5A
    try overwriteInPlace(url, with: bytes)
}

/// Writes `data` (of the file's size) over the file where it is, then puts its access and modification times back.
func overwriteInPlace(_ url: URL, with data: Data) throws {
    var before = Glibc.stat()
    #expect(lstat(url.path, &before) == 0)
    let handle = try FileHandle(forWritingTo: url)
    try handle.write(contentsOf: data)
    try handle.close()
    var times = [before.st_atim, before.st_mtim]
    #expect(utimensat(AT_FDCWD, url.path, &times, 0) == 0)
}
