import Foundation
import GRDB

@_spi(Tooling) @testable import FolderSync

/// Writes the files a hostile storage provider or a compromised device could put in a shared folder: valid in
/// every checksum and manifest, hostile in content. Tests make them from honest files, so that nothing but the
/// planted difference can be what a check refuses.
enum HostileFiles {
    /// The whole store `client` uploaded to the folder at `remoteRoot`, and its manifest.
    static func wholeStore(of client: TestClient, remoteRoot: URL) -> (file: URL, manifest: URL) {
        let file = remoteRoot.appendingPathComponent(
            client.document.relativePathToThisDocumentWholeStoreThisClientDirectoryWholeStoreFile.description)
        return (
            file, file.deletingLastPathComponent().appendingPathComponent(RemoteLayout.appliedSyncChangeSetsFileName)
        )
    }

    /// Rewrites a whole store: its snapshot is unpacked into `scratch`, changed by `tamper` (the SQLite file's path),
    /// and packed again with the same identifiers, its CRC-32 and its manifest's size and checksum recomputed.
    static func rewriteWholeStore(_ file: URL, manifest manifestFile: URL, scratch: URL, tamper: (URL) throws -> Void)
        throws
    {
        let snapshot = scratch.appendingPathComponent("hostile-\(UUID().uuidString).sqlite")
        defer { try? FileManager.default.removeItem(at: snapshot) }
        var header = try WholeStoreFile.read(file, to: snapshot, path: "honest")
        try tamper(snapshot)
        header.snapshotByteCount = UInt64(
            try FileManager.default.attributesOfItem(atPath: snapshot.path)[.size] as! Int)
        let written = try WholeStoreFile.write(snapshot: snapshot, to: file, header: header)
        var manifest = try PropertyListFile.decode(
            WholeStoreManifest.self, from: try Data(contentsOf: manifestFile), path: "manifest")
        manifest.wholeStoreByteCount = written.byteCount
        manifest.wholeStoreChecksum = written.checksum
        manifest.contentChecksum = written.contentChecksum
        try PropertyListFile.encode(manifest).write(to: manifestFile)
    }

    /// Runs `sql` on the SQLite file at `path` through a plain connection (what an attacker's own tools do).
    static func execute(_ sql: String, on path: URL) throws {
        let queue = try DatabaseQueue(path: path.path)
        try queue.writeWithoutTransaction { db in try db.execute(sql: sql) }
        try queue.close()
    }

    /// Damages the B-tree page header of `table`'s root page (its cell count), as a flipped sector would: the file is
    /// still a SQLite database with a valid schema, whose every read of that table fails.
    static func corruptRootPage(of table: String, in path: URL) throws {
        let queue = try DatabaseQueue(path: path.path)
        let (root, pageSize) = try queue.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT rootpage FROM sqlite_master WHERE name = ?", arguments: [table])!,
                try Int.fetchOne(db, sql: "PRAGMA page_size")!
            )
        }
        try queue.close()
        let handle = try FileHandle(forUpdating: path)
        defer { try? handle.close() }
        // Page header: type (1 byte), first freeblock (2), cell count (2)...; page 1 starts after the 100-byte file
        // header.
        let offset = UInt64((root - 1) * pageSize + (root == 1 ? 100 : 0) + 3)
        try handle.seek(toOffset: offset)
        try handle.write(contentsOf: Data([0xFF, 0xF0]))
    }
}
