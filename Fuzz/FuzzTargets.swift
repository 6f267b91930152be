// libFuzzer targets for every parser of remote input. Built by scripts/fuzz, which compiles this file with the parser
// sources directly (`swiftc -sanitize=fuzzer`), not the package: no GRDB, about ten seconds. The snapshot check
// (GRDBStore/SQLite/SnapshotCheck.swift) uses SQLite's C API only: it links the system libsqlite3 through the module
// map in Fuzz/modules/GRDBSQLite (named as GRDB names it), so whole stores are checked here as in the package.
//
// FOLDERSYNC_FUZZ_TARGET picks the parser. Every input must end in a value or a FolderSyncError; a crash, a
// sanitizer report or any other error is a finding (libFuzzer saves the input; turn it into a regression test in
// Tests/UnitTests/FuzzRegressionTests.swift and keep it in Fuzz/corpus/<target>/).
//
// The encryption targets parse what needs no key: the sealed-file header and the key property list. The chunks
// and the wrapped key are AES-GCM, whose parsing is swift-crypto's and whose failures SealedFile and
// EncryptionKeyInfo turn into tamperedFile (EncryptionTests cover them); compiling swift-crypto's BoringSSL here
// would cost minutes, not seconds.
import Foundation

let targets: [String: (Data) throws -> Void] = [
    "change-set": { data in
        try data.write(to: scratch)
        _ = try ChangeSetReader.verify(at: scratch, path: "fuzz.syncchg")
        try ChangeSetReader.forEachChange(at: scratch, path: "fuzz.syncchg") { _ in }
    },
    "whole-store": { data in
        try data.write(to: scratch)
        _ = try WholeStoreFile.read(scratch, to: scratchSnapshot, path: "WholeStore.ticdsync")
    },
    "whole-store-snapshot": { data in
        // A hostile SQLite file, as a downloaded whole store's snapshot: the checks every install runs first, with a
        // receiving store of one synced table and the merge metadata (SnapshotCheck, linked to the system SQLite).
        try data.write(to: scratchSnapshot)
        try SnapshotCheck.verify(at: scratchSnapshot, path: "WholeStore.ticdsync", schema: nil, integrity: .quick)
        try SnapshotCheck.verify(
            at: scratchSnapshot, path: "WholeStore.ticdsync", schema: snapshotSchema, integrity: .full)
    },
    "whole-store-manifest": { data in
        _ = try PropertyListFile.decode(WholeStoreManifest.self, from: data, path: "AppliedSyncChangeSets.ticdsync")
    },
    "recent-sync": { data in
        // The fast reader takes only what Foundation's decoder reads, as the same marker.
        if let fast = CanonicalPropertyList.decode(RecentSync.self, from: data),
            fast != (try? PropertyListFile.decodeWithFoundation(RecentSync.self, from: data, path: "client.recentsync"))
        {
            fatalError("the fast reader read a marker Foundation's decoder reads otherwise or refuses")
        }
        _ = try PropertyListFile.decode(RecentSync.self, from: data, path: "client.recentsync")
    },
    "plist": { data in
        // Every other FolderSync property list a remote holds; each must refuse or accept the same bytes cleanly.
        _ = PropertyListFile.kind(of: data)
        for decode in [
            { _ = try PropertyListFile.decode(FormatVersionInfo.self, from: $0, path: "FormatVersion.plist") },
            { _ = try PropertyListFile.decode(DeviceInfo.self, from: $0, path: "deviceInfo.plist") },
            { _ = try PropertyListFile.decode(DocumentInfo.self, from: $0, path: "documentInfo.plist") },
            { _ = try PropertyListFile.decode(DeletedDocumentInfo.self, from: $0, path: "deleted.plist") },
            { _ = try PropertyListFile.decode(DeletedClientInfo.self, from: $0, path: "deletedClient.plist") },
        ]
            as [(Data) throws -> Void]
        {
            do { try decode(data) } catch let error as FolderSyncError { _ = error }
        }
    },
    "encryption-header": { data in
        // A whole sealed file: only its first 48 bytes reach the parser, as in SealedFile.open.
        _ = try SealedFileHeader(parsing: data.prefix(SealedFileHeader.size), path: "Encryption/fuzz.sealed")
    },
    "encryption-key": { data in
        _ = try PropertyListFile.decode(EncryptionKeyInfo.self, from: data, path: "Encryption/EncryptionKey.plist")
    },
    "propfind": { data in
        _ = try MultistatusParser.parse(data, path: try RemotePath("com.example.notes/Documents"))
    },
]

/// The schema of the fuzzed snapshots' receiving store (the seeds in Fuzz/corpus/whole-store-snapshot/ have it).
let snapshotSchema = SnapshotSchema(tables: [
    "notes": .init(required: ["id"], allowed: ["id", "title", "body"]),
    "foldersync_clocks": .init(required: ["tbl", "sync_id", "stamps"], allowed: ["tbl", "sync_id", "stamps"]),
    "foldersync_tombstones": .init(
        required: ["tbl", "sync_id", "hlc", "client"], allowed: ["tbl", "sync_id", "hlc", "client"]),
    "foldersync_shadow": .init(
        required: ["tbl", "sync_id", "col", "value"], allowed: ["tbl", "sync_id", "col", "value"]),
])

let scratch = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("foldersync-fuzz-\(getpid()).input")
let scratchSnapshot = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
    "foldersync-fuzz-\(getpid()).sqlite")
let target: (Data) throws -> Void = {
    let name = ProcessInfo.processInfo.environment["FOLDERSYNC_FUZZ_TARGET"] ?? ""
    guard let target = targets[name] else {
        fatalError("FOLDERSYNC_FUZZ_TARGET must be one of \(targets.keys.sorted())")
    }
    return target
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    do {
        try target(Data(bytes: start, count: count))
    } catch let error as FolderSyncError {
        _ = error.description
    } catch {
        fatalError("untyped error for bad input: \(error)")
    }
    try? FileManager.default.removeItem(at: scratchSnapshot)
    return 0
}
